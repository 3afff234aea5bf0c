import { describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { Queue, Worker } from "../../src/index.ts"
import { startRedisServer } from "../../src/testing/RedisServer.ts"
import { onCleanup } from "../support/cleanup.ts"
import { run } from "../support/jobs.ts"
import { monitorOf } from "../support/monitor.ts"
import { dumpQueue, queueNamer, redisUrl, sharedClients } from "../support/redis.ts"
import { redisNow, until } from "../support/until.ts"

const name = queueNamer("jobs-pause")
const shared = sharedClients()

describe("pause and resume", () => {
  it("reserve leases nothing while paused, still promotes due delayed jobs and acknowledges riders", async () => {
    const q = name()
    const queue = new Queue<number>(q, { connection: redisUrl() })
    onCleanup(() => queue.close())
    const keys = queueKeys(q)
    const c = makeCommands(shared.client, keys)
    const first = await queue.add(1)
    const held = (await run(c.reserve(1, 5_000, 0))).jobs[0]!
    expect(held.id).toBe(first)
    await queue.add(2)
    const later = await queue.add(3, { delayMs: 1 })
    expect(await queue.pause()).toBe(true)
    expect(await queue.pause()).toBe(false)
    expect(await queue.isPaused()).toBe(true)
    expect((await queue.stats()).paused).toBe(true)
    await shared.raw.del(keys.marker)
    const due = Number(await shared.raw.zscore(keys.delayed, later))
    await until("the delayed job is due (Redis clock)", async () => (await redisNow(shared.raw)) > due)
    // the running job finishes (its complete rides on a reserve) while nothing new is leased
    const r = await run(c.reserve(10, 5_000, 100, [held]))
    expect(r.completed).toEqual([true])
    expect(r.jobs).toEqual([])
    const stats = await queue.stats()
    expect(stats).toMatchObject({ waiting: 2, active: 0, delayed: 0, paused: true })
    // idle workers are not woken while paused
    expect(await shared.raw.zcard(keys.marker)).toBe(0)
    expect(await queue.resume()).toBe(true)
    expect(await queue.resume()).toBe(false)
    expect(await queue.isPaused()).toBe(false)
    expect(await shared.raw.zcard(keys.marker)).toBe(1)
    expect((await run(c.reserve(10, 5_000, 100))).jobs.map((j) => j.payload)).toEqual(["2", "3"])
    // one paused and one resumed event, recorded by the scripts that changed the state
    const kinds = (await shared.raw.xrange(keys.events, "-", "+")).map(([, f]) => f[1])
    expect(kinds.filter((k) => k === "paused" || k === "resumed")).toEqual(["paused", "resumed"])
  })

  it("pause with 100 jobs waiting and 4 workers: nothing starts until resume, then all run", async () => {
    // a server of its own, so MONITOR sees only this test's calls
    const server = await startRedisServer()
    onCleanup(() => server.stop())
    const q = name()
    const queue = new Queue<number>(q, { connection: server.url })
    onCleanup(() => queue.close())
    const keys = queueKeys(q)
    await queue.addBulk(Array.from({ length: 100 }, (_, n) => ({ payload: n })))
    await queue.pause()

    const monitor = await monitorOf(server.url)
    let reserves = 0
    monitor.on(({ args }) => {
      if (args[0]?.toLowerCase() === "evalsha" && args[1] === Scripts.reserve.sha && args.includes(keys.wait)) {
        reserves++
      }
    })

    const started: number[] = []
    const done = new Set<number>()
    for (let w = 0; w < 4; w++) {
      const worker = new Worker<number>(
        q,
        async (job) => {
          started.push(job.payload)
          done.add(job.payload)
        },
        // idle waits far longer than this test: only the marker can wake them in time
        { connection: server.url, concurrency: 4, blockTimeoutMs: 300_000, sweep: false },
      )
      onCleanup(() => worker.close())
    }
    // every worker has asked for jobs at least once, and one more add woke one of them again
    await until("4 workers reserved", () => reserves >= 4)
    const seen = reserves
    await queue.add(100)
    await until("a woken worker reserved again", () => reserves > seen)
    const stats = await queue.stats()
    expect(stats).toMatchObject({ waiting: 101, active: 0, paused: true })
    expect(started).toEqual([])

    expect(await queue.resume()).toBe(true)
    await until("all 101 jobs ran", () => done.size === 101, { timeoutMs: 60_000 })
    expect(started).toHaveLength(101)
    await until("all 101 acknowledged", async () => (await queue.stats()).counters.completed === 101)
  })

  it("pause and resume of a partitioned queue change every partition", async () => {
    const q = name()
    const queue = new Queue<number>(q, { connection: redisUrl(), partitions: 3 })
    onCleanup(() => queue.close())
    expect(await queue.isPaused()).toBe(false)
    expect(await queue.pause()).toBe(true)
    for (let i = 0; i < 3; i++) expect(await shared.raw.hget(queueKeys(`${q}~${i}`).meta, "paused")).toBe("1")
    expect((await queue.stats()).paused).toBe(true)
    expect(await queue.resume()).toBe(true)
    for (let i = 0; i < 3; i++) expect(await shared.raw.hget(queueKeys(`${q}~${i}`).meta, "paused")).toBeNull()
    expect(await queue.isPaused()).toBe(false)
  })

  it("on a queue with another layout, pause writes nothing", async () => {
    const q = name()
    const queue = new Queue<number>(q, { connection: redisUrl() })
    onCleanup(() => queue.close())
    await shared.raw.hset(queueKeys(q).meta, "layout", "999")
    const before = await dumpQueue(shared.raw, q)
    await expect(queue.pause()).rejects.toMatchObject({ _tag: "LayoutMismatch" })
    await expect(queue.resume()).rejects.toMatchObject({ _tag: "LayoutMismatch" })
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })
})
