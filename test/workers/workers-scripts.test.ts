/**
 * The worker side of job steering, at the script level against real Redis: the holder of
 * each lease, the timeout limit the server keeps, progress and the registry riding the
 * heartbeat, and a cancelled job told apart from a lost lease.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { extendAnswer, makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { connect, type RedisClient } from "../../src/redis/Client.ts"
import { newJob, run } from "../support/jobs.ts"
import { dropLease } from "../support/lease.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { redisNow, untilRedisClock } from "../support/until.ts"

const name = queueNamer("workers-scripts")
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
/** The lease of the timeout tests: long enough that a slow test process still heartbeats inside the capped window. */
const LEASE = 2_000
const record = (id: string, running = 0) => ({
  id,
  json: JSON.stringify({ id, host: "h", pid: 7, concurrency: 4, running, state: "running", startedAt: 5 }),
  ttlMs: 1_000,
})

describe("the holder of a lease", () => {
  it("reserve records the worker id and the run start; fail and release delete it, a retained completed job keeps it", async () => {
    const { keys, c } = setup()
    const [a, b, d] = [newJob(), newJob(), newJob()]
    await run(c.add([a, b, d]))
    const before = await redisNow(raw)
    const { jobs } = await run(c.reserve(3, 5_000, 100, [], { workerId: "host:1:abc" }))
    const after = await redisNow(raw)
    expect(jobs.map((j) => j.timeoutMs)).toEqual([0, 0, 0])
    for (const j of jobs) {
      const [worker, token, start, until] = String(await raw.hget(keys.holder, j.id)).split("|")
      expect(worker).toBe("host:1:abc")
      expect(token).toBe(String(j.token))
      expect(Number(start)).toBeGreaterThanOrEqual(before)
      expect(Number(start)).toBeLessThanOrEqual(after)
      expect(until).toBe("0")
    }
    const [ja, jb, jd] = jobs as [(typeof jobs)[0], (typeof jobs)[0], (typeof jobs)[0]]
    expect(await run(c.complete([ja]))).toEqual([true])
    expect(await run(c.fail(jb, { delayMs: 0, error: "{}", mode: "retry" }))).toBe("retry")
    expect(await run(c.release([jd]))).toEqual([true])
    // the completed job (retained by default) keeps its run's entry, for its startedAt
    expect(await raw.hkeys(keys.holder)).toEqual([ja.id])
  })

  it("a sweep that reclaims an expired lease deletes its holder entry", async () => {
    const { keys, c } = setup()
    await run(c.add([newJob()]))
    const { jobs } = await run(c.reserve(1, 1_000, 100))
    await untilRedisClock(raw, jobs[0]!.deadline)
    expect((await run(c.sweep(100))).reclaimed).toBe(1)
    expect(await raw.exists(keys.holder)).toBe(0)
  })
})

describe("timeoutMs on the server", () => {
  it("a job added with a timeout has its timeout stored by id; reserve hands the timeout out", async () => {
    const { keys, c } = setup()
    const plain = newJob()
    const timed = newJob({ timeoutMs: 250 })
    await run(c.add([plain, timed]))
    // every job waits as its id, its payload in data; only the timed one has a timeout entry
    expect(await raw.lrange(keys.wait, 0, -1)).toEqual([timed.id, plain.id])
    expect(await raw.hget(keys.timeout, timed.id)).toBe("250")
    expect(await raw.hget(keys.timeout, plain.id)).toBeNull()
    expect(await raw.hget(keys.data, timed.id)).toBe(timed.payload)
    const { jobs } = await run(c.reserve(2, 5_000, 100, [], { timeoutMs: 9_000 }))
    // the job's own timeout wins; a job without one gets the worker's default
    expect(jobs.map((j) => [j.id, j.timeoutMs])).toEqual([
      [plain.id, 9_000],
      [timed.id, 250],
    ])
    const start = Number(String(await raw.hget(keys.holder, timed.id)).split("|")[2])
    expect(await raw.hget(keys.holder, timed.id)).toMatch(new RegExp(`\\|${start + 250 + 5_000}$`))
  })

  it("extend never goes past run start + timeoutMs + lease, then answers 'timeout'; the sweep reclaims it once, as a failure", async () => {
    // a heartbeat sent from start + 100 ms to start + LEASE + 100 ms is capped: a wide window
    const { keys, c } = setup()
    const j = newJob({ timeoutMs: 100, maxAttempts: 2 })
    await run(c.add([j]))
    const { jobs } = await run(c.reserve(1, LEASE, 100))
    const r = jobs[0]!
    const until = Number(String(await raw.hget(keys.holder, j.id)).split("|")[3])
    expect(until).toBe(r.deadline + 100)
    // a heartbeat that ignores the timeout: each extend is capped at the limit
    await untilRedisClock(raw, r.deadline - LEASE + 150)
    const [capped] = await run(c.extend([r], LEASE))
    expect(capped).toBe(until)
    expect(Number(await raw.zscore(keys.active, j.id))).toBe(until)
    await untilRedisClock(raw, until)
    expect((await run(c.extend([r], LEASE))).map(extendAnswer)).toEqual(["timeout"])
    const swept = await run(c.sweep(100))
    expect(swept).toMatchObject({ reclaimed: 1, dead: 0 })
    // counted as a failure with reason "timeout", not as a lost lease; it runs again
    expect(await raw.hget(keys.fails, j.id)).toBe("1")
    expect(await raw.hget(keys.lost, j.id)).toBeNull()
    expect(JSON.parse(String(await raw.hget(keys.err, j.id)))).toMatchObject({ reason: "timeout" })
    expect(await raw.lrange(keys.wait, 0, -1)).toEqual([j.id])
    expect(await raw.hmget(keys.meta, "failed", "lost")).toEqual(["1", null])
    // the next run keeps the job's timeout; a second timeout uses up its attempts
    const again = (await run(c.reserve(1, LEASE, 100))).jobs[0]!
    expect(again).toMatchObject({ id: j.id, attempt: 2, timeoutMs: 100 })
    await untilRedisClock(raw, again.deadline - LEASE + 150)
    const limit = Number(String(await raw.hget(keys.holder, j.id)).split("|")[3])
    expect(await run(c.extend([again], LEASE))).toEqual([limit])
    await untilRedisClock(raw, limit)
    const second = await run(c.sweep(100))
    expect(second).toMatchObject({ reclaimed: 1, dead: 1 })
    expect(second.deadJobs[0]!.message).toMatch(/^timed out/)
    expect(await raw.zscore(keys.dead, j.id)).not.toBeNull()
    expect(JSON.parse(String(await raw.hget(keys.err, j.id)))).toMatchObject({ reason: "timeout" })
  })

  it("a lease that expired before its timeout limit is a lost lease, as before", async () => {
    const { keys, c } = setup()
    const j = newJob({ timeoutMs: 60_000 })
    await run(c.add([j]))
    const r = (await run(c.reserve(1, 1_000, 100))).jobs[0]!
    await untilRedisClock(raw, r.deadline)
    expect((await run(c.sweep(100))).reclaimed).toBe(1)
    expect(await raw.hget(keys.lost, j.id)).toBe("1")
    expect(await raw.hget(keys.fails, j.id)).toBeNull()
  })
})

describe("progress rides the heartbeat", () => {
  it("extend stores the progress of held leases only; complete of a job not retained deletes it", async () => {
    const { keys, c } = setup()
    await raw.hset(keys.meta, "keep", 0) // completed jobs not retained (the field setRetention writes)
    const [a, b] = [newJob(), newJob()]
    await run(c.add([a, b]))
    const { jobs } = await run(c.reserve(2, 5_000, 100))
    const [ra, rb] = jobs as [(typeof jobs)[0], (typeof jobs)[0]]
    const answers = await run(
      c.extend(
        [
          { ...ra, progress: JSON.stringify({ done: 3, of: 10 }) },
          { id: rb.id, token: rb.token + 1, progress: "99" },
        ],
        5_000,
      ),
    )
    expect(answers.map(extendAnswer)).toEqual([expect.any(Number), "lost"])
    expect(await raw.hgetall(keys.progress)).toEqual({ [a.id]: '{"done":3,"of":10}' })
    // recorded as an event by the same call
    const events = await raw.xrange(keys.events, "-", "+")
    expect(events.map(([, f]) => f).filter((f) => f[1] === "progress")).toEqual([
      ["kind", "progress", "id", a.id, "value", '{"done":3,"of":10}'],
    ])
    // a heartbeat without new progress leaves the stored one alone
    await run(c.extend([ra], 5_000))
    expect(await raw.hget(keys.progress, a.id)).toBe('{"done":3,"of":10}')
    expect(await run(c.complete([ra]))).toEqual([true])
    expect(await raw.exists(keys.progress)).toBe(0)
  })

  it("a retained completed job keeps its progress and timeout until it is trimmed", async () => {
    const { keys, c } = setup()
    await raw.hset(keys.meta, "keep", 1) // keep 1 (the field setRetention writes)
    const j = newJob({ timeoutMs: 5_000 })
    await run(c.add([j]))
    const r = (await run(c.reserve(1, 5_000, 100))).jobs[0]!
    await run(c.extend([{ ...r, progress: '"half"' }], 5_000))
    await run(c.complete([r]))
    expect(await raw.hget(keys.progress, j.id)).toBe('"half"')
    const k = newJob()
    await run(c.add([k]))
    const rk = (await run(c.reserve(1, 5_000, 100))).jobs[0]!
    await run(c.complete([rk]))
    // keep 1: the older retained job and all its fields are gone
    expect(await raw.hget(keys.progress, j.id)).toBeNull()
    expect(await raw.hget(keys.timeout, j.id)).toBeNull()
  })

  it("dead-purge deletes a dead job's progress and timeout", async () => {
    const { keys, c } = setup()
    const j = newJob({ timeoutMs: 5_000, maxAttempts: 1 })
    await run(c.add([j]))
    const r = (await run(c.reserve(1, 5_000, 100))).jobs[0]!
    await run(c.extend([{ ...r, progress: "1" }], 5_000))
    expect(await run(c.fail(r, { delayMs: 0, error: "{}", mode: "retry" }))).toBe("dead")
    expect(await raw.hget(keys.progress, j.id)).toBe("1")
    expect((await run(c.deadPurge({ ids: [j.id] }))).count).toBe(1)
    expect(await raw.exists(keys.progress, keys.timeout)).toBe(0)
  })
})

describe("a cancelled job", () => {
  it("extend answers 'cancelled' for a lease whose job is in cancelled, plain 'lost' otherwise", async () => {
    const { keys, c } = setup()
    const [a, b] = [newJob(), newJob()]
    await run(c.add([a, b]))
    const { jobs } = await run(c.reserve(2, 5_000, 100))
    // what a cancel of an active job leaves: the lease gone, the job marked cancelled
    for (const j of jobs) {
      await raw.zrem(keys.active, j.id)
      await dropLease(raw, keys, j.id)
    }
    await raw.zadd(keys.cancelled, await redisNow(raw), a.id)
    expect((await run(c.extend(jobs, 5_000))).map(extendAnswer)).toEqual(["cancelled", "lost"])
    // its late complete is refused
    expect(await run(c.complete([jobs[0]!]))).toEqual([false])
  })
})

describe("the worker registry", () => {
  it("a heartbeat writes the worker's record with lastSeenAt from the Redis clock, also with no lease held", async () => {
    const { keys, c } = setup()
    const before = await redisNow(raw)
    expect(await run(c.extend([], 5_000, record("w-1", 2)))).toEqual([])
    const after = await redisNow(raw)
    const [w] = (await run(c.workers)).workers
    expect(w).toMatchObject({ id: "w-1", host: "h", pid: 7, concurrency: 4, running: 2, state: "running" })
    expect(w!.startedAt).toBe(5)
    expect(w!.lastSeenAt).toBeGreaterThanOrEqual(before)
    expect(w!.lastSeenAt).toBeLessThanOrEqual(after)
    expect(Number(await raw.zscore(keys.workersAt, "w-1"))).toBe(w!.lastSeenAt + 1_000)
    // the next heartbeat replaces the record
    await run(c.extend([], 5_000, record("w-1", 3)))
    expect((await run(c.workers)).workers.map((x) => x.running)).toEqual([3])
  })

  it("a worker that stops heartbeating drops out of the listing, and the sweep deletes its record", async () => {
    const { keys, c } = setup()
    await run(c.extend([], 5_000, record("w-old")))
    const stale = Number(await raw.zscore(keys.workersAt, "w-old"))
    await untilRedisClock(raw, stale)
    await run(c.extend([], 5_000, record("w-new")))
    expect((await run(c.workers)).workers.map((w) => w.id)).toEqual(["w-new"])
    expect(await raw.hexists(keys.workers, "w-old")).toBe(1)
    await run(c.sweep(100))
    expect(await raw.hkeys(keys.workers)).toEqual(["w-new"])
    expect(await raw.zrange(keys.workersAt, "0", "-1")).toEqual(["w-new"])
  })

  it("a closing worker takes its record out", async () => {
    const { keys, c } = setup()
    await run(c.extend([], 5_000, record("w-2")))
    expect(await run(c.workerLeave("w-2"))).toBe(true)
    expect(await run(c.workerLeave("w-2"))).toBe(false)
    expect(await raw.exists(keys.workers, keys.workersAt)).toBe(0)
    expect((await run(c.workers)).workers).toEqual([])
  })
})

describe("verify", () => {
  it("reports a holder entry without an active job, and progress or a timeout without a payload", async () => {
    const { keys, c } = setup()
    const j = newJob({ timeoutMs: 5_000 })
    await run(c.add([j]))
    const r = (await run(c.reserve(1, 5_000, 100))).jobs[0]!
    await run(c.extend([{ ...r, progress: "1" }], 5_000))
    expect((await run(c.verify())).violations).toBe(0)
    await raw.hset(keys.holder, "ghost", "w|1|0")
    await raw.hset(keys.progress, "ghost2", "2")
    await raw.hset(keys.timeout, "ghost3", "9")
    const v = await run(c.verify())
    expect(v.lines.sort()).toEqual([
      "orphan-field ghost2 has progress but no payload",
      "orphan-field ghost3 has timeout but no payload",
      "orphan-holder ghost has a lease holder but is not active",
    ])
  })
})
