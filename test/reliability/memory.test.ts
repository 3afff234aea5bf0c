import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest"
import { makeCommands, type NewJob } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { makeQueueCore, resolveQueueOptions } from "../../src/engine/queue/QueueCore.ts"
import { Queue, Worker } from "../../src/index.ts"
import { connect, type RedisClient } from "../../src/redis/Client.ts"
import { type LocalRedis, startRedisServer } from "../../src/testing/RedisServer.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { newJob, run } from "../support/jobs.ts"
import { queueNamer, rawClient } from "../support/redis.ts"
import { until, untilRedisClock } from "../support/until.ts"

const name = queueNamer("rel-memory")
let server: LocalRedis
let client: RedisClient
let raw: Redis
beforeAll(async () => {
  server = await startRedisServer()
  client = connect(server.url)
  raw = rawClient(server.url)
})
afterAll(async () => {
  await client.close()
  raw.disconnect()
  await server.stop()
})

const job = newJob
const setup = () => {
  const keys = queueKeys(name())
  return { keys, c: makeCommands(client, keys) }
}
const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await raw.info("memory"))![1])

/**
 * Put this test's Redis over its memory limit with noeviction: maxmemory just under the
 * memory in use. The limit is lifted when the test ends (registered before it is set).
 */
const overMemory = async () => {
  onTestFinished(async () => {
    await raw.config("SET", "maxmemory", "0")
  })
  await raw.config("SET", "maxmemory-policy", "noeviction")
  await raw.config("SET", "maxmemory", String((await usedMemory()) - 256 * 1024))
  // the limit holds: a plain write is refused
  await expect(raw.set(`${name("probe")}`, "x")).rejects.toThrow(/OOM/)
}

describe("N6: maxmemory reached, noeviction: the consumer side still works", () => {
  it("extend (heartbeat) answers new deadlines", async () => {
    const { keys, c } = setup()
    await run(c.add([job(), job()]))
    const { jobs } = await run(c.reserve(2, 30_000, 100))
    expect(jobs).toHaveLength(2)
    await overMemory()
    const deadlines = await run(c.extend(jobs, 60_000))
    expect(deadlines).toHaveLength(2)
    for (const [i, d] of deadlines.entries()) {
      expect(d).toBeGreaterThan(jobs[i]!.deadline)
      expect(Number(await raw.zscore(keys.active, jobs[i]!.id))).toBe(d)
    }
  })

  it("sweep promotes due delayed jobs when nothing else is to be done", async () => {
    const { keys, c } = setup()
    const later = job({ delayMs: 1 })
    await run(c.add([later]))
    await untilRedisClock(raw, Number(await raw.zscore(keys.delayed, later.id)))
    await overMemory()
    expect(await run(c.sweep(100))).toMatchObject({ reclaimed: 0, dead: 0, promoted: 1, more: false })
    expect(await raw.lrange(keys.wait, 0, -1)).toEqual([later.id])
    expect(await raw.zcard(keys.delayed)).toBe(0)
  })

  it("sweep reclaims expired leases (back to wait, or to dead when attempts are used up)", async () => {
    const { keys, c } = setup()
    const again = job({ maxAttempts: 3 })
    const last = job({ maxAttempts: 1 })
    await run(c.add([again, last]))
    const { jobs } = await run(c.reserve(2, 1_000, 100))
    await untilRedisClock(raw, Math.max(...jobs.map((j) => j.deadline)))
    await overMemory()
    const r = await run(c.sweep(100))
    expect(r).toMatchObject({ reclaimed: 2, dead: 1, promoted: 0 })
    expect(r.deadJobs.map((d) => d.id)).toEqual([last.id])
    expect(await raw.lrange(keys.wait, 0, -1)).toEqual([again.id])
    expect(await raw.zrange(keys.dead, "0", "-1")).toEqual([last.id])
    expect(await raw.zcard(keys.active)).toBe(0)
  })

  it("complete, fail and release still work", async () => {
    const { keys, c } = setup()
    const [a, b, d] = [job(), job(), job()]
    await run(c.add([a, b, d]))
    const { jobs } = await run(c.reserve(3, 30_000, 100))
    const held = (j: NewJob) => jobs.find((r) => r.id === j.id)!
    await overMemory()
    expect(await run(c.complete([held(a)]))).toEqual([true])
    expect(await run(c.fail(held(b), { delayMs: 0, error: '{"message":"x"}', mode: "retry" }))).toBe("retry")
    expect(await run(c.release([held(d)]))).toEqual([true])
    expect(await raw.zcard(keys.active)).toBe(0)
    expect((await raw.lrange(keys.wait, 0, -1)).sort()).toEqual([b.id, d.id].sort())
    expect(await raw.hget(keys.meta, "completed")).toBe("1")
  })

  it("an idle worker takes a job that falls due with the reserve sent behind its marker wait, and completes it", async () => {
    const q = name()
    const queue = new Queue<string>(q, { connection: server.url })
    onCleanup(() => queue.close())
    const id = await queue.add("due later", { delayMs: 1_500 })
    const completed = deferred<string>()
    const errors: unknown[] = []
    const worker = new Worker<string>(q, (job) => job.payload, { connection: server.url, sweep: false })
    onCleanup(() => worker.close())
    worker.on("completed", (job) => completed.resolve(job.id))
    worker.on("error", (e) => errors.push(e))
    await worker.ready
    // idle: blocked on the marker until the job is due, its reserve queued behind the wait
    await until("the worker blocked on the marker", async () => / cmd=bzpopmin /.test(String(await raw.client("LIST"))))
    await overMemory()
    expect(await completed.promise).toBe(id)
    // completed and retained (default retention), over maxmemory too
    expect((await queue.getJob(id))?.state).toBe("completed")
    expect(errors).toEqual([])
  })
})

describe("N11: the sweep drops expired dedupe keys", () => {
  it("keys with a 1 ms TTL are gone after one sweep pass; each call drops at most `limit`", async () => {
    const { keys, c } = setup()
    const jobs = Array.from({ length: 25 }, (_, i) => job({ dedupeKey: `k-${i}`, dedupeTtlMs: 1 }))
    await run(c.add(jobs))
    expect(await raw.zcard(keys.dedupe)).toBe(25)
    const expiries = await raw.zrange(keys.dedupe, "-1", "-1", "WITHSCORES")
    await untilRedisClock(raw, Number(expiries[1]))
    const first = await run(c.sweep(10))
    expect(first).toMatchObject({ dedupeDropped: 10, more: true })
    expect(await raw.zcard(keys.dedupe)).toBe(15)
    expect(await raw.hlen(keys.dedupeid)).toBe(15)
    const core = makeQueueCore(client, keys.queue, resolveQueueOptions({}))
    const pass = await run(core.sweep({ limit: 10 }))
    expect(pass).toMatchObject({ dedupeDropped: 15, calls: 2, incomplete: false })
    expect(await raw.exists(keys.dedupe, keys.dedupeid)).toBe(0)
  })

  it("leaves dedupe keys that have not expired", async () => {
    const { keys, c } = setup()
    await run(c.add([job({ dedupeKey: "live", dedupeTtlMs: 600_000 })]))
    expect(await run(c.sweep(100))).toMatchObject({ dedupeDropped: 0 })
    expect(await raw.zcard(keys.dedupe)).toBe(1)
    expect(await raw.hlen(keys.dedupeid)).toBe(1)
  })
})

describe("N12: retained completed jobs stay bounded by the queue's retention count", () => {
  it("keep 10 then keep 0: a complete trims 2, the sweep trims the rest (bounded per call)", async () => {
    const { keys, c } = setup()
    await raw.hset(keys.meta, "keep", 10) // the field setRetention writes (completed.count)
    const retained = Array.from({ length: 10 }, () => job())
    await run(c.add(retained))
    const { jobs } = await run(c.reserve(10, 30_000, 100))
    const results = jobs.map((j) => ({ ...j, result: '"ok"' }))
    expect(await run(c.complete(results))).toEqual(Array(10).fill(true))
    expect(await raw.zcard(keys.done)).toBe(10)
    expect(await raw.hlen(keys.data)).toBe(10)
    expect(await raw.hlen(keys.result)).toBe(10)

    // the count lowered to 0: this complete deletes its own job and the 2 oldest retained
    await raw.hset(keys.meta, "keep", 0)
    const one = job()
    await run(c.add([one]))
    const [held] = (await run(c.reserve(1, 30_000, 100))).jobs
    expect(await run(c.complete([held!]))).toEqual([true])
    expect(await raw.zcard(keys.done)).toBe(8)
    expect(await raw.hexists(keys.data, one.id)).toBe(0)
    expect(await raw.hexists(keys.data, retained[0]!.id)).toBe(0)

    // the sweep trims to the count, at most `limit` per call
    expect(await run(c.sweep(5))).toMatchObject({ trimmed: 5, more: true })
    expect(await run(c.sweep(5))).toMatchObject({ trimmed: 3, more: false })
    for (const key of [keys.done, keys.data, keys.max, keys.result, keys.fails, keys.lost, keys.err]) {
      expect(await raw.exists(key), key).toBe(0)
    }
  })

  it("keep 3 with 5 retained: the sweep trims the 2 oldest; a queue that never set a retention keeps the default 1,000", async () => {
    const { keys, c } = setup()
    const five = Array.from({ length: 5 }, () => job())
    await run(c.add(five))
    const { jobs } = await run(c.reserve(5, 30_000, 100))
    for (const j of jobs) await run(c.complete([j]))
    expect(await raw.zcard(keys.done)).toBe(5)
    // the count lowered (set by hand here, as setRetention does) is what the sweep trims to
    await raw.hset(keys.meta, "keep", "3")
    expect(await run(c.sweep(100))).toMatchObject({ trimmed: 2 })
    expect(await raw.zrange(keys.done, "0", "-1")).toEqual(jobs.slice(2).map((j) => j.id))

    await raw.hdel(keys.meta, "keep")
    expect(await run(c.sweep(100))).toMatchObject({ trimmed: 0 })
    expect(await raw.zcard(keys.done)).toBe(3)
  })
})

describe("S2: the payload bytes of one add call are capped", () => {
  const evalshaCalls = async () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await raw.info("commandstats"))?.[1] ?? 0)
  /** A queue core whose add calls carry at most 3 of the ~1 kB payloads below. */
  const smallCalls = () => {
    const core = makeQueueCore(client, name(), { ...resolveQueueOptions({}), maxCallBytes: 3 * 1_100 })
    onTestFinished(() => core.markClosed())
    return core
  }
  const kb = (n: number) => ({ payload: JSON.stringify({ n, pad: "x".repeat(1_000) }) })

  it("addBulk over the cap goes out in several calls, in order, and stores every job", async () => {
    const core = smallCalls()
    await run(core.ensureOpen)
    const before = await evalshaCalls()
    const ids = await run(core.addBulk(Array.from({ length: 10 }, (_, n) => kb(n))))
    expect(await evalshaCalls()).toBe(before + 4)
    expect(new Set(ids).size).toBe(10)
    // wait is a list pushed on the left: read right to left, it is the order of the call
    const entries = (await raw.lrange(core.keys.wait, 0, -1)).reverse()
    expect(entries).toEqual(ids)
    const payloads = await raw.hmget(core.keys.data, ...ids)
    expect(payloads.map((p) => JSON.parse(p!).n)).toEqual([...Array(10).keys()])
  })

  it("a job larger than the cap goes alone; single adds made together are batched under the cap", async () => {
    const core = smallCalls()
    await run(core.ensureOpen)
    const before = await evalshaCalls()
    const big = { payload: JSON.stringify({ pad: "y".repeat(5_000) }) }
    const [bigId] = await run(core.addBulk([big]))
    expect(await evalshaCalls()).toBe(before + 1)
    expect(await raw.lindex(core.keys.wait, 0)).toContain(bigId)
    const start = await evalshaCalls()
    const ids = await Promise.all(Array.from({ length: 10 }, (_, n) => run(core.add(kb(n)))))
    expect(new Set(ids).size).toBe(10)
    // 10 jobs, at most 3 per call
    expect((await evalshaCalls()) - start).toBeGreaterThanOrEqual(4)
    expect(await raw.llen(core.keys.wait)).toBe(11)
  })
})
