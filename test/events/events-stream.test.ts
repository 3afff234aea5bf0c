/**
 * The events stream at the script level: the scripts that change a job's state record it
 * in the queue's `events` STREAM in the same call, capped near the queue's retention.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { decodeEntry } from "../../src/engine/events/EventDecode.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { connect, type RedisClient } from "../../src/redis/Client.ts"
import { newJob, run } from "../support/jobs.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { untilRedisClock } from "../support/until.ts"

const name = queueNamer("events-stream")
let client: RedisClient
let raw: Redis
beforeAll(() => {
  client = connect(redisUrl())
  raw = rawClient()
})
afterAll(async () => {
  await client.close()
  raw.disconnect()
})

const setup = () => {
  const keys = queueKeys(name())
  return { keys, c: makeCommands(client, keys) }
}

/** Every entry of the stream as { field: value } objects, oldest first. */
const entries = async (key: string) =>
  (await raw.xrange(key, "-", "+")).map(([, fields]) => {
    const o: Record<string, string> = {}
    for (let i = 0; i < fields.length; i += 2) o[fields[i]!] = fields[i + 1]!
    return o
  })

/** `n` add calls of one job each (one stream entry each), 100 at a time. */
const addOneByOne = async (c: ReturnType<typeof setup>["c"], n: number) => {
  for (let i = 0; i < n; i += 100) await Promise.all(Array.from({ length: 100 }, () => run(c.add([newJob()]))))
}

describe("added", () => {
  it("add records one `added` entry per call naming the jobs it added, and one `deduplicated` entry naming the holders", async () => {
    const { keys, c } = setup()
    const a = newJob()
    const b = newJob({ delayMs: 60_000 })
    const d1 = newJob({ dedupeKey: "k", dedupeTtlMs: 60_000 })
    const d2 = newJob({ dedupeKey: "k", dedupeTtlMs: 60_000 })
    expect(await run(c.add([a, b, d1, d2]))).toEqual([a.id, b.id, d1.id, d1.id])
    expect(await entries(keys.events)).toEqual([
      { kind: "added", id: `${a.id},${b.id},${d1.id}` },
      { kind: "deduplicated", id: d1.id },
    ])
    // a re-send of the same call (same request id) finds its receipt and records nothing more
    const one = newJob()
    await run(c.add([one], "same-call"))
    await run(c.add([one], "same-call"))
    // a call that adds nothing (only a deduplicated job) records only that
    await run(c.add([newJob({ dedupeKey: "k", dedupeTtlMs: 60_000 })]))
    expect(await entries(keys.events)).toEqual([
      { kind: "added", id: `${a.id},${b.id},${d1.id}` },
      { kind: "deduplicated", id: d1.id },
      { kind: "added", id: one.id },
      { kind: "deduplicated", id: d1.id },
    ])
  })

  it("the stream is capped near the queue's retention (meta eventsMaxLen), and 0 records nothing", async () => {
    const { keys, c } = setup()
    await raw.hset(keys.meta, "eventsMaxLen", "200")
    await addOneByOne(c, 1_000)
    const len = await raw.xlen(keys.events)
    // MAXLEN ~ trims whole stream nodes (100 entries each by default): about 200, never all 1,000
    expect(len).toBeGreaterThanOrEqual(200)
    expect(len).toBeLessThanOrEqual(300)
    await raw.hset(keys.meta, "eventsMaxLen", "0")
    await run(c.add([newJob()]))
    expect(await raw.xlen(keys.events)).toBe(len)
  })

  it("without a retention set, a queue keeps about 10,000 entries", async () => {
    const { keys, c } = setup()
    await addOneByOne(c, 11_000)
    const len = await raw.xlen(keys.events)
    expect(len).toBeGreaterThanOrEqual(10_000)
    expect(len).toBeLessThan(11_000)
  })
})

describe("each state change records its event in the same call", () => {
  it("reserve: one `active` entry {tokens, worker} for the jobs leased, one `completed` for the riders; complete: `completed`", async () => {
    const { keys, c } = setup()
    const [a, b, d] = [newJob(), newJob(), newJob()]
    await run(c.add([a, b, d]))
    const first = await run(c.reserve(2, 60_000, 100, [], { workerId: "w-1" }))
    const [ja, jb] = first.jobs
    // the rider completes in the same call that leases the next job
    const second = await run(c.reserve(1, 60_000, 100, [{ id: ja!.id, token: ja!.token }], { workerId: "w-1" }))
    expect(second.completed).toEqual([true])
    expect(await run(c.complete([{ id: jb!.id, token: jb!.token }]))).toEqual([true])
    // a refused complete (lease no longer held) records nothing
    expect(await run(c.complete([{ id: jb!.id, token: jb!.token }]))).toEqual([false])
    const jd = second.jobs[0]!
    expect((await entries(keys.events)).slice(1)).toEqual([
      { kind: "active", id: `${ja!.id},${jb!.id}`, token: `${ja!.token},${jb!.token}`, worker: "w-1" },
      { kind: "completed", id: ja!.id },
      { kind: "active", id: jd.id, token: String(jd.token), worker: "w-1" },
      { kind: "completed", id: jb!.id },
    ])
  })

  it("fail: `failed` {willRetry, reason, attempt}, then `dead` {reason} when it is the last attempt; release: `released`", async () => {
    const { keys, c } = setup()
    const j = newJob({ maxAttempts: 2 })
    const p = newJob()
    const r = newJob()
    await run(c.add([j, p, r]))
    const lease = async () => (await run(c.reserve(1, 60_000, 100))).jobs[0]!
    const l1 = await lease()
    const error = JSON.stringify({ name: "Error", message: "boom" })
    expect(await run(c.fail(l1, { delayMs: 0, error, mode: "retry" }))).toBe("retry")
    const lp = await lease()
    const lr = await lease()
    const l2 = await lease()
    expect(l2.id).toBe(j.id)
    expect(await run(c.fail(l2, { delayMs: 0, error, mode: "retry" }))).toBe("dead")
    const bad = JSON.stringify({ reason: "invalid-payload", message: "not a number" })
    expect(await run(c.fail(lp, { delayMs: 0, error: bad, mode: "dead" }))).toBe("dead")
    expect(await run(c.release([lr]))).toEqual([true])
    const events = (await entries(keys.events)).filter((e) => e.kind !== "added" && e.kind !== "active")
    expect(events).toEqual([
      { kind: "failed", id: j.id, willRetry: "1", reason: "boom", attempt: "1" },
      { kind: "failed", id: j.id, willRetry: "0", reason: "boom", attempt: "2" },
      // the dead reason: an error without one is a handler failure; the failed events keep its message
      { kind: "dead", id: j.id, reason: "failed" },
      { kind: "dead", id: p.id, reason: "invalid-payload" },
      { kind: "released", id: r.id },
    ])
  })

  it("sweep: `lease-lost` {attempt} per expired lease, then `dead` {reason lease-expired} for a job out of attempts", async () => {
    const { keys, c } = setup()
    const once = newJob({ maxAttempts: 1 })
    const twice = newJob({ maxAttempts: 2 })
    await run(c.add([once, twice]))
    const { jobs } = await run(c.reserve(2, 1_000, 100))
    expect(jobs).toHaveLength(2)
    const end = Math.max(...jobs.map((j) => j.deadline))
    await untilRedisClock(raw, end)
    const swept = await run(c.sweep(100))
    expect(swept).toMatchObject({ reclaimed: 2, dead: 1 })
    // one entry may name several jobs (ids joined, and their attempts in the same order): one event per job
    const events = (await entries(keys.events))
      .filter((e) => e.kind !== "added" && e.kind !== "active")
      .flatMap((e) =>
        e.id!.split(",").map((id, i) => ({ ...e, id, ...(e.attempt ? { attempt: e.attempt.split(",")[i] } : {}) })),
      )
    // both leases share one deadline, so the sweep takes them in id order: compare per job
    expect(events.filter((e) => e.id === once.id)).toEqual([
      { kind: "lease-lost", id: once.id, attempt: "1" },
      { kind: "dead", id: once.id, reason: "lease-expired" },
    ])
    expect(events.filter((e) => e.id === twice.id)).toEqual([{ kind: "lease-lost", id: twice.id, attempt: "1" }])
    expect(events).toHaveLength(3)
  })
})

describe("one entry for many jobs, read back as one event per job", () => {
  it("a sweep's lost leases share entries; each job's event carries its own attempt", async () => {
    const { keys, c } = setup()
    const first = newJob()
    const second = newJob()
    await run(c.add([first, second]))
    // `first` loses a lease once alone, so when both expire together its attempt differs
    const one = await run(c.reserve(1, 1_000, 100))
    await untilRedisClock(raw, one.jobs[0]!.deadline)
    await run(c.sweep(100))
    const both = await run(c.reserve(2, 1_000, 100))
    expect(both.jobs).toHaveLength(2)
    await untilRedisClock(raw, Math.max(...both.jobs.map((j) => j.deadline)))
    expect(await run(c.sweep(100))).toMatchObject({ reclaimed: 2 })
    const stream = await raw.xrange(keys.events, "-", "+")
    const lost = stream
      .flatMap(([id, fields]) => decodeEntry(keys.queue, id, fields))
      .filter((e) => e.kind === "lease-lost")
    const last = lost.slice(-2)
    // the last sweep wrote one entry for both jobs
    expect(last.map((e) => e.eventId.split(".")[0])).toEqual([stream.at(-1)![0], stream.at(-1)![0]])
    expect(Object.fromEntries(last.map((e) => [e.jobId, e.kind === "lease-lost" ? e.attempt : 0]))).toEqual({
      [first.id]: 2,
      [second.id]: 1,
    })
  })
})

describe("entries stay small", () => {
  it("a call's events for many jobs are split into entries of at most 100 jobs, in order", async () => {
    const { keys, c } = setup()
    const jobs = Array.from({ length: 250 }, () => newJob())
    await run(c.add(jobs))
    const added = await entries(keys.events)
    expect(added.map((e) => e.id!.split(",").length)).toEqual([100, 100, 50])
    expect(added.flatMap((e) => e.id!.split(","))).toEqual(jobs.map((j) => j.id))
    const { jobs: leased } = await run(c.reserve(250, 60_000, 100, [], { workerId: "w-big" }))
    const active = (await entries(keys.events)).slice(3)
    expect(active.map((e) => e.id!.split(",").length)).toEqual([100, 100, 50])
    expect(active.flatMap((e) => e.id!.split(","))).toEqual(leased.map((j) => j.id))
    expect(active.flatMap((e) => e.token!.split(","))).toEqual(leased.map((j) => String(j.token)))
  })
})
