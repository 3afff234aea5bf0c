/**
 * drain, clean and obliterate against every state: each removes what it is asked to, with
 * every per-job field, leaves the other states alone, goes in bounded calls (the number of
 * calls asserted), is safe to re-send, and frees memory at maxmemory with noeviction.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest"
import { makeCommands, runScript } from "../../src/engine/calls/Commands.ts"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { decodeEntry } from "../../src/engine/events/EventDecode.ts"
import { QueueHasActiveJobs } from "../../src/engine/model/Errors.ts"
import { KEY_NAMES, queueKeys } from "../../src/engine/model/Keys.ts"
import { makeQueueOps } from "../../src/engine/queue/Operations.ts"
import { Queue } from "../../src/index.ts"
import { connect, type RedisClient } from "../../src/redis/Client.ts"
import { type LocalRedis, startRedisServer } from "../../src/testing/RedisServer.ts"
import { onCleanup } from "../support/cleanup.ts"
import { newJob, run } from "../support/jobs.ts"
import { leaseToken } from "../support/lease.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl, sharedClients } from "../support/redis.ts"
import { jobInEveryState, STATES } from "./support.ts"

const name = queueNamer("ops-bulk")
const shared = sharedClients()

/** The per-job hashes holding a field for `id`. */
const fieldsOf = async (raw: Redis, q: string, id: string) => {
  const keys = queueKeys(q)
  const out: string[] = []
  for (const k of KEY_NAMES) {
    const type = await raw.type(keys[k])
    if (type === "hash" && (await raw.hexists(keys[k], id))) out.push(k)
    if (type === "zset" && (await raw.zscore(keys[k], id)) !== null) out.push(k)
  }
  return out
}

/** The engine's calls of queue `q` with `chunk` jobs per drain or clean call. */
const opsOf = (client: RedisClient, q: string, chunk: number) =>
  makeQueueOps({ name: q, keys: queueKeys(q), calls: makeCommands(client, queueKeys(q)), isClosed: () => false }, chunk)

describe("drain", () => {
  it("removes waiting jobs (and delayed ones when asked) with every field; the other states stay", async () => {
    const q = name()
    const { queue, ids } = await jobInEveryState(shared.client, q)
    expect(await queue.drain()).toMatchObject({ waiting: 1, delayed: 0 })
    expect(await fieldsOf(shared.raw, q, ids.waiting)).toEqual([])
    expect((await queue.getJob(ids.delayed))?.state).toBe("delayed")
    expect(await queue.drain({ delayed: true })).toMatchObject({ waiting: 0, delayed: 1 })
    expect(await fieldsOf(shared.raw, q, ids.delayed)).toEqual([])
    for (const s of STATES.filter((s) => s !== "waiting" && s !== "delayed")) {
      expect((await queue.getJob(ids[s]))?.state).toBe(s)
    }
    expect((await queue.stats()).counters).toMatchObject({ cancelled: 1, removed: 2 })
  })

  it("removes jobs waiting at a priority too, with their recorded priority", async () => {
    const q = name()
    const queue = new Queue<{ n: number }>(q, { connection: redisUrl() })
    onCleanup(() => queue.close())
    const ids = [
      await queue.add({ n: 0 }),
      await queue.add({ n: 1 }, { priority: 5 }),
      await queue.add({ n: 2 }, { priority: 9 }),
    ]
    expect(await queue.drain()).toMatchObject({ waiting: 3, delayed: 0 })
    for (const id of ids) expect(await fieldsOf(shared.raw, q, id)).toEqual([])
    expect(await queue.getJobs("waiting")).toMatchObject({ jobs: [] })
  })

  it("goes in calls of at most `chunk` jobs: 95 waiting jobs in chunks of 10 take 10 calls", async () => {
    const q = name()
    const c = makeCommands(shared.client, queueKeys(q))
    await run(c.add(Array.from({ length: 95 }, () => newJob())))
    await run(c.add([newJob({ delayMs: 60_000 })]))
    expect(await run(opsOf(shared.client, q, 10).drain({}))).toEqual({ waiting: 95, delayed: 0, calls: 10 })
    expect(await shared.raw.hlen(queueKeys(q).data)).toBe(1)
  })

  it("frees a dedupe key its job held until finished, so the key is accepted again", async () => {
    const q = name()
    const queue = new Queue<{ n: number }>(q, { connection: redisUrl() })
    onCleanup(() => queue.close())
    const first = await queue.add({ n: 1 }, { dedupeKey: "k", dedupeUntil: "finished" })
    expect(await queue.add({ n: 2 }, { dedupeKey: "k", dedupeUntil: "finished" })).toBe(first)
    await queue.drain()
    expect(await queue.add({ n: 3 }, { dedupeKey: "k", dedupeUntil: "finished" })).not.toBe(first)
  })

  it("a re-sent call removes only what is left; one removed entry per call, one event per job", async () => {
    const q = name()
    const keys = queueKeys(q)
    const c = makeCommands(shared.client, keys)
    const jobs = [newJob(), newJob()]
    await run(c.add(jobs))
    const input = { delayed: false, limit: 10 }
    expect(await run(runScript(shared.client, keys, Scripts.drain, input))).toEqual({ waiting: 2, delayed: 0, left: 0 })
    const once = await dumpQueue(shared.raw, q)
    expect(await run(runScript(shared.client, keys, Scripts.drain, input))).toEqual({ waiting: 0, delayed: 0, left: 0 })
    expect(await dumpQueue(shared.raw, q)).toEqual(once)
    const entries = await shared.raw.xrange(keys.events, "-", "+")
    expect(entries.map(([, f]) => f[1]).filter((k) => k === "removed")).toHaveLength(1)
    const removed = entries
      .flatMap(([id, f]) => decodeEntry(q, id, f))
      .flatMap((e) => (e.kind === "removed" ? [[e.jobId, e.was]] : []))
    expect(removed.sort()).toEqual(jobs.map((j) => [j.id, "waiting"]).sort())
  })
})

describe("clean", () => {
  it.each(["completed", "cancelled", "dead"] as const)(
    "clean(%s) deletes those jobs with every field, and no other",
    async (state) => {
      const q = name()
      const { queue, ids } = await jobInEveryState(shared.client, q)
      expect(await queue.clean(state, { olderThanMs: 3_600_000 })).toMatchObject({ deleted: 0 })
      expect(await queue.clean(state)).toMatchObject({ deleted: 1, calls: 1 })
      expect(await fieldsOf(shared.raw, q, ids[state])).toEqual([])
      for (const s of STATES.filter((s) => s !== state)) expect((await queue.getJob(ids[s]))?.state).toBe(s)
    },
  )

  it("goes in calls of at most `chunk` jobs and stops at `limit`", async () => {
    const q = name()
    const keys = queueKeys(q)
    const c = makeCommands(shared.client, keys)
    await run(c.add(Array.from({ length: 25 }, () => newJob({ maxAttempts: 1 }))))
    for (const j of (await run(c.reserve(25, 60_000, 0))).jobs) {
      await run(c.fail(j, { delayMs: 0, error: "{}", mode: "dead" }))
    }
    const ops = opsOf(shared.client, q, 10)
    expect(await run(ops.clean("dead", { limit: 15 }))).toEqual({ deleted: 15, calls: 2 })
    expect(await run(ops.clean("dead", {}))).toEqual({ deleted: 10, calls: 1 })
    expect(await shared.raw.hlen(keys.data)).toBe(0)
    expect(await shared.raw.hlen(keys.err)).toBe(0)
  })

  it("a re-sent call deletes nothing more", async () => {
    const q = name()
    const { keys } = await jobInEveryState(shared.client, q)
    const input = { state: "completed" as const, olderThanMs: 0, limit: 10 }
    expect(await run(runScript(shared.client, keys, Scripts.clean, input))).toEqual({ deleted: 1, left: 0 })
    const once = await dumpQueue(shared.raw, q)
    expect(await run(runScript(shared.client, keys, Scripts.clean, input))).toEqual({ deleted: 0, left: 0 })
    expect(await dumpQueue(shared.raw, q)).toEqual(once)
  })

  it("refuses a state it does not clean, writing nothing", async () => {
    const q = name()
    const { queue } = await jobInEveryState(shared.client, q)
    const before = await dumpQueue(shared.raw, q)
    await expect(queue.clean("waiting" as "dead")).rejects.toMatchObject({ _tag: "InvalidOptions", field: "state" })
    await expect(queue.clean("dead", { olderThanMs: -1 })).rejects.toMatchObject({ field: "olderThanMs" })
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })
})

describe("obliterate", () => {
  it("is refused while a job is active, writing nothing", async () => {
    const q = name()
    const { queue } = await jobInEveryState(shared.client, q)
    const before = await dumpQueue(shared.raw, q)
    const e = await queue.obliterate().catch((x) => x)
    expect(e).toBeInstanceOf(QueueHasActiveJobs)
    expect(e.message).toContain("1 active")
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })

  it("forced, deletes every key (schedules too); the active job's late complete is refused; a re-send answers the same", async () => {
    const q = name()
    const { queue, keys, c, ids } = await jobInEveryState(shared.client, q)
    const token = Number(await leaseToken(shared.raw, keys, ids.active))
    await queue.schedule("nightly", { every: 60_000 }, { payload: { n: 1 } })
    expect(await queue.obliterate({ force: true })).toEqual({ active: 1 })
    expect(Object.values(await dumpQueue(shared.raw, q)).filter((v) => v !== null)).toEqual([])
    expect(await run(runScript(shared.client, keys, Scripts.obliterate, true))).toEqual([1, 0])
    expect(await run(c.complete([{ id: ids.active, token }]))).toEqual([false])
    expect(await queue.getJob(ids.active)).toBeUndefined()
  })
})

describe("at maxmemory with noeviction, the calls that free memory still run", () => {
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
  const overMemory = async () => {
    onTestFinished(async () => {
      await raw.config("SET", "maxmemory", "0")
    })
    const used = Number(/used_memory:(\d+)/.exec(await raw.info("memory"))![1])
    await raw.config("SET", "maxmemory-policy", "noeviction")
    await raw.config("SET", "maxmemory", String(used - 256 * 1024))
    await expect(raw.set(`${name("probe")}`, "x")).rejects.toThrow(/OOM/)
  }

  it("drain, clean and obliterate", async () => {
    const q = name()
    const keys = queueKeys(q)
    const c = makeCommands(client, keys)
    await run(c.add(Array.from({ length: 2000 }, () => newJob({ payload: JSON.stringify("x".repeat(500)) }))))
    await run(c.add(Array.from({ length: 5 }, () => newJob({ maxAttempts: 1 }))))
    await overMemory()
    const ops = opsOf(client, q, 1000)
    expect(await run(ops.drain({}))).toMatchObject({ waiting: 2005 })
    await raw.config("SET", "maxmemory", "0")
    await run(c.add([newJob({ maxAttempts: 1 })]))
    const [j] = (await run(c.reserve(1, 60_000, 0))).jobs
    await run(c.fail(j!, { delayMs: 0, error: "{}", mode: "dead" }))
    await overMemory()
    expect(await run(ops.clean("dead", {}))).toMatchObject({ deleted: 1 })
    expect(await run(ops.obliterate({}))).toEqual({ active: 0 })
    expect(await raw.exists(keys.meta, keys.data, keys.events)).toBe(0)
  })
})

describe("bad input writes nothing", () => {
  it("each call refuses it with InvalidOptions (or InvalidPayload) naming the field", async () => {
    const q = name()
    const { queue, ids } = await jobInEveryState(shared.client, q)
    const before = await dumpQueue(shared.raw, q)
    const refusals: Array<[Promise<unknown>, string]> = [
      [queue.drain({ delayed: "yes" as unknown as boolean }), "delayed"],
      [queue.drain({ waiting: true } as never), "options.waiting"],
      [queue.obliterate({ force: 1 as unknown as boolean }), "force"],
      [queue.reschedule(ids.waiting, { delayMs: -1 }), "delayMs"],
      [queue.reschedule(ids.waiting, {} as { delayMs: number }), "delayMs"],
      [queue.promote(""), "id"],
      [queue.retry("x".repeat(129)), "id"],
      [queue.clean("dead", { limit: 0 }), "limit"],
    ]
    for (const [call, field] of refusals) await expect(call).rejects.toMatchObject({ _tag: "InvalidOptions", field })
    await expect(queue.updatePayload(ids.waiting, { n: 1n } as never)).rejects.toMatchObject({ _tag: "InvalidPayload" })
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })
})

describe("a partitioned queue", () => {
  it("finds a job's partition for a call on one job, and drains, cleans and obliterates every partition", async () => {
    const q = name()
    const queue = new Queue<{ n: number }>(q, { connection: redisUrl(), partitions: 3 })
    onCleanup(() => queue.close())
    const ids = await queue.addBulk(
      Array.from({ length: 6 }, (_, n) => ({ payload: { n }, options: { delayMs: 60_000 } })),
    )
    expect(await queue.promote(ids[4]!)).toBe("delayed")
    await expect(queue.promote(ids[4]!)).rejects.toMatchObject({ _tag: "WrongJobState", state: "waiting" })
    await expect(queue.retry("nope")).rejects.toMatchObject({ _tag: "WrongJobState", state: "unknown" })
    expect(await queue.drain({ delayed: true })).toMatchObject({ waiting: 1, delayed: 5 })
    await queue.add({ n: 9 })
    expect(await queue.obliterate()).toEqual({ active: 0 })
    for (let i = 0; i < 3; i++) {
      expect(Object.values(await dumpQueue(shared.raw, `${q}~${i}`)).every((v) => v === null)).toBe(true)
    }
  })
})
