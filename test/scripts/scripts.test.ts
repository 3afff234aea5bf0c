/**
 * The Lua scripts, called directly through the command layer against real Redis:
 * every state transition of a job (docs/concepts.md, "States") and the fencing rules.
 */
import type { Effect } from "effect"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeCommands, SCRIPT_CHUNK } from "../../src/engine/calls/Commands.ts"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { DEFAULT_MAX_ATTEMPTS } from "../../src/engine/queue/Job.ts"
import { scriptKeys } from "../../src/engine/scripts/Script.ts"
import { connect, type RedisClient } from "../../src/redis/Client.ts"
import { startRedisServer } from "../../src/testing/RedisServer.ts"
import { newJob, run } from "../support/jobs.ts"
import { leaseToken } from "../support/lease.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { redisNow, untilRedisClock } from "../support/until.ts"

const name = queueNamer("scripts")
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

const job = newJob
const setup = () => {
  const keys = queueKeys(name())
  return { keys, c: makeCommands(client, keys) }
}

describe("add / reserve", () => {
  it("moves a job from wait to active with a deadline from the Redis clock and a token", async () => {
    const { keys, c } = setup()
    const j = job()
    expect(await run(c.add([j]))).toEqual([j.id])
    // a new job waits as its id; its payload is in the data hash at once, so it can be
    // looked up by id while it waits; maxAttempts 3 (the default) is stored as no field
    expect(await raw.lrange(keys.wait, 0, -1)).toEqual([j.id])
    expect(await raw.hget(keys.data, j.id)).toBe(j.payload)
    expect(await raw.hget(keys.max, j.id)).toBeNull()
    const before = await redisNow(raw)
    const { jobs } = await run(c.reserve(10, 5_000, 100))
    const after = await redisNow(raw)
    expect(jobs).toHaveLength(1)
    const r = jobs[0]!
    expect(r).toMatchObject({ id: j.id, attempt: 1, maxAttempts: 3, payload: j.payload })
    expect(r.deadline).toBeGreaterThanOrEqual(before + 5_000)
    expect(r.deadline).toBeLessThanOrEqual(after + 5_000)
    expect(Number(await raw.zscore(keys.active, j.id))).toBe(r.deadline)
    expect(await leaseToken(raw, keys, j.id)).toBe(String(r.token))
    expect(await raw.llen(keys.wait)).toBe(0)
    // reserved: the payload still lives in the per-queue hash
    expect(await raw.hget(keys.data, j.id)).toBe(j.payload)
    expect(await raw.hget(keys.max, j.id)).toBeNull()
  })

  it("stores maxAttempts only when it is not the default 3; every reader takes a missing one as 3", async () => {
    const { keys, c } = setup()
    expect(DEFAULT_MAX_ATTEMPTS).toBe(3) // the Lua scripts read a missing max field as 3
    const plain = job()
    const five = job({ maxAttempts: 5 })
    const one = job({ maxAttempts: 1 })
    await run(c.add([plain, five, one]))
    expect(await raw.hget(keys.max, plain.id)).toBeNull()
    expect(await raw.hget(keys.max, five.id)).toBe("5")
    expect(await raw.hget(keys.max, one.id)).toBe("1")
    const { jobs } = await run(c.reserve(3, 5_000, 100))
    expect(jobs.map((r) => [r.id, r.maxAttempts])).toEqual([
      [plain.id, 3],
      [five.id, 5],
      [one.id, 1],
    ])
    // fail: the default job is retried until its third failure, then dead
    let r = jobs[0]!
    for (let attempt = 1; attempt <= 3; attempt++) {
      const outcome = await run(c.fail(r, { delayMs: 0, error: "{}", mode: "retry" }))
      expect(outcome).toBe(attempt < 3 ? "retry" : "dead")
      if (attempt < 3) r = (await run(c.reserve(1, 5_000, 100))).jobs[0]!
    }
    expect(await raw.zscore(keys.dead, plain.id)).not.toBeNull()
  })

  it("reserves up to N in FIFO order, and tokens only go up", async () => {
    const { c } = setup()
    const js = [job(), job(), job(), job(), job()]
    await run(c.add(js))
    const a = await run(c.reserve(3, 5_000, 100))
    const b = await run(c.reserve(3, 5_000, 100))
    expect(a.jobs.map((j) => j.id)).toEqual(js.slice(0, 3).map((j) => j.id))
    expect(b.jobs.map((j) => j.id)).toEqual(js.slice(3).map((j) => j.id))
    const tokens = [...a.jobs, ...b.jobs].map((j) => j.token)
    expect([...tokens].sort((x, y) => x - y)).toEqual(tokens)
    expect(new Set(tokens).size).toBe(5)
  })

  it("dedupe: a second add with the same key returns the first id and adds nothing", async () => {
    const { keys, c } = setup()
    const first = job({ dedupeKey: "order-1", dedupeTtlMs: 60_000 })
    const second = job({ dedupeKey: "order-1", dedupeTtlMs: 60_000 })
    expect(await run(c.add([first]))).toEqual([first.id])
    expect(await run(c.add([second]))).toEqual([first.id])
    expect(await raw.llen(keys.wait)).toBe(1)
    expect(await raw.hexists(keys.data, second.id)).toBe(0)
    // within one bulk too
    const third = job({ dedupeKey: "order-2", dedupeTtlMs: 60_000 })
    const fourth = job({ dedupeKey: "order-2", dedupeTtlMs: 60_000 })
    expect(await run(c.add([third, fourth]))).toEqual([third.id, third.id])
  })

  it("dedupe expires after its TTL (Redis clock)", async () => {
    const { c } = setup()
    const first = job({ dedupeKey: "k", dedupeTtlMs: 30 })
    await run(c.add([first]))
    const t = await redisNow(raw)
    await untilRedisClock(raw, t + 30)
    const second = job({ dedupeKey: "k", dedupeTtlMs: 30 })
    expect(await run(c.add([second]))).toEqual([second.id])
  })

  it("a payload containing the entry separator round-trips", async () => {
    const { c } = setup()
    const j = job({ payload: JSON.stringify({ text: "a|b||c|" }) })
    await run(c.add([j]))
    const [r] = (await run(c.reserve(1, 5_000, 100))).jobs
    expect(r!.payload).toBe(j.payload)
  })

  it("delayed jobs become reservable only when due on the Redis clock", async () => {
    const { keys, c } = setup()
    const j = job({ delayMs: 200 })
    const before = await redisNow(raw)
    await run(c.add([j]))
    expect(await raw.zcard(keys.delayed)).toBe(1)
    const first = await run(c.reserve(1, 5_000, 100))
    expect(first.jobs).toHaveLength(0)
    expect(first.nextDueMs).toBeGreaterThan(0)
    expect(first.nextDueMs).toBeLessThanOrEqual(200)
    let got: Awaited<ReturnType<typeof c.reserve>> extends Effect.Effect<infer A, infer _E> ? A : never
    do {
      got = await run(c.reserve(1, 5_000, 100))
      if (got.jobs.length === 0) await new Promise((r) => setTimeout(r, 10))
    } while (got.jobs.length === 0)
    expect(got.jobs[0]!.id).toBe(j.id)
    // the lease deadline = reserve time + lease, and reserve time was >= due time
    expect(got.jobs[0]!.deadline - 5_000).toBeGreaterThanOrEqual(before + 200)
  })
})

describe("leases and fencing", () => {
  it("extend pushes the deadline; a wrong token is lease lost and changes nothing", async () => {
    const { keys, c } = setup()
    const j = job()
    await run(c.add([j]))
    const [r] = (await run(c.reserve(1, 1_000, 100))).jobs
    const [deadline, lost] = await run(
      c.extend(
        [
          { id: r!.id, token: r!.token },
          { id: r!.id, token: r!.token + 1000 },
        ],
        60_000,
      ),
    )
    expect(deadline).toBeGreaterThan(r!.deadline)
    expect(lost).toBe(0)
    expect(Number(await raw.zscore(keys.active, j.id))).toBe(deadline)
  })

  it("complete after the deadline but before any sweep succeeds", async () => {
    const { keys, c } = setup()
    await raw.hset(keys.meta, "keep", 0) // retain none: a completion drops the job
    const j = job()
    await run(c.add([j]))
    const [r] = (await run(c.reserve(1, 20, 100))).jobs
    await untilRedisClock(raw, r!.deadline)
    expect(await run(c.complete([{ id: r!.id, token: r!.token }]))).toEqual([true])
    expect(await raw.zcard(keys.active)).toBe(0)
    expect(await raw.hexists(keys.data, j.id)).toBe(0)
  })

  it("a complete with a stale token after a sweep reclaimed the job is refused and changes nothing", async () => {
    const { keys, c } = setup()
    const j = job()
    await run(c.add([j]))
    const [old] = (await run(c.reserve(1, 20, 100))).jobs
    await untilRedisClock(raw, old!.deadline)
    const swept = await run(c.sweep(100))
    expect(swept).toMatchObject({ reclaimed: 1, dead: 0 })
    const [now] = (await run(c.reserve(1, 60_000, 100))).jobs
    expect(now!.id).toBe(j.id)
    expect(now!.attempt).toBe(2)
    expect(now!.token).toBeGreaterThan(old!.token)
    const before = await raw.dump(keys.active)
    expect(await run(c.complete([{ id: old!.id, token: old!.token }]))).toEqual([false])
    expect(await run(c.fail({ id: old!.id, token: old!.token }, { delayMs: 0, error: "{}", mode: "retry" }))).toBe(
      "lost",
    )
    expect(await run(c.release([{ id: old!.id, token: old!.token }]))).toEqual([false])
    expect(await raw.dump(keys.active)).toBe(before)
    expect(await leaseToken(raw, keys, j.id)).toBe(String(now!.token))
    // the late complete and fail are counted as refused acknowledgements (fencing at work)
    expect((await run(c.stats)).counters.refused).toBe(2)
    expect(await run(c.complete([{ id: now!.id, token: now!.token }]))).toEqual([true])
    expect((await run(c.stats)).counters.refused).toBe(2)
  })

  it("release gives the job back to the front of wait without spending an attempt", async () => {
    const { keys, c } = setup()
    const a = job()
    const b = job()
    await run(c.add([a, b]))
    const [r] = (await run(c.reserve(1, 60_000, 100))).jobs
    expect(r!.id).toBe(a.id)
    expect(await run(c.release([{ id: r!.id, token: r!.token }]))).toEqual([true])
    expect(await raw.zcard(keys.active)).toBe(0)
    const [again] = (await run(c.reserve(1, 60_000, 100))).jobs
    expect(again!.id).toBe(a.id)
    expect(again!.attempt).toBe(1)
  })
})

describe("release, several", () => {
  it("jobs released together go back to the front in their order: the first released runs first", async () => {
    const { c } = setup()
    const js = [job(), job(), job(), job()]
    await run(c.add(js))
    const taken = (await run(c.reserve(3, 60_000, 100))).jobs
    expect(taken.map((r) => r.id)).toEqual(js.slice(0, 3).map((j) => j.id))
    expect(await run(c.release(taken))).toEqual([true, true, true])
    const again = (await run(c.reserve(4, 60_000, 100))).jobs
    expect(again.map((r) => r.id)).toEqual(js.map((j) => j.id))
  })

  it("more leases than one call takes (chunks of SCRIPT_CHUNK) keep their order too", async () => {
    const { c } = setup()
    const js = Array.from({ length: SCRIPT_CHUNK + 20 }, () => job())
    await run(c.add(js))
    const taken = (await run(c.reserve(js.length, 60_000, 100))).jobs
    expect(taken).toHaveLength(js.length)
    // one of the first chunk's under a token not its own: refused, in its place in the answers
    const sent = taken.map((r, i) => (i === 3 ? { id: r.id, token: r.token + 1 } : r))
    const answers = await run(c.release(sent))
    expect(answers).toEqual(js.map((_, i) => i !== 3))
    const again = (await run(c.reserve(js.length, 60_000, 100))).jobs
    expect(again.map((r) => r.id)).toEqual(js.filter((_, i) => i !== 3).map((j) => j.id))
  })

  it("a closing worker's give-back (a re-send asking for no jobs) keeps its jobs' order too", async () => {
    const { c } = setup()
    const js = [job(), job(), job()]
    await run(c.add(js))
    const call = (count: number) => c.reserve(count, 60_000, 100, [], { workerId: "w-order", requestId: "1" })
    expect((await run(call(2))).jobs.map((r) => r.id)).toEqual([js[0]!.id, js[1]!.id])
    expect((await run(call(0))).jobs).toEqual([])
    const again = (await run(c.reserve(3, 60_000, 100))).jobs
    expect(again.map((r) => r.id)).toEqual(js.map((j) => j.id))
  })
})

describe("fail", () => {
  it("retries after a delay, then goes to dead keeping the error when attempts are used up", async () => {
    const { keys, c } = setup()
    const j = job({ maxAttempts: 2 })
    await run(c.add([j]))
    const [r1] = (await run(c.reserve(1, 60_000, 100))).jobs
    expect(await run(c.fail(r1!, { delayMs: 0, error: '{"message":"boom 1"}', mode: "retry" }))).toBe("retry")
    const [r2] = (await run(c.reserve(1, 60_000, 100))).jobs
    expect(r2!.attempt).toBe(2)
    expect(await run(c.fail(r2!, { delayMs: 0, error: '{"message":"boom 2"}', mode: "retry" }))).toBe("dead")
    expect(await raw.zscore(keys.dead, j.id)).not.toBeNull()
    expect(await raw.hget(keys.err, j.id)).toBe('{"message":"boom 2"}')
    expect(await raw.hget(keys.data, j.id)).toBe(j.payload)
    const dead = await run(c.deadList(0, 10))
    expect(dead.total).toBe(1)
    expect(dead.jobs[0]).toMatchObject({ id: j.id, failures: 2, lostLeases: 0, error: { message: "boom 2" } })
  })

  it("a completed job leaves no field behind, whether its failures were recorded or not", async () => {
    const { keys, c } = setup()
    await raw.hset(keys.meta, "keep", 0) // retain none: a completion drops the job
    const failed = job({ maxAttempts: 5 })
    const clean = job()
    await run(c.add([failed, clean]))
    const [r1] = (await run(c.reserve(1, 60_000, 100))).jobs
    expect(await run(c.fail(r1!, { delayMs: 0, error: '{"message":"boom"}', mode: "retry" }))).toBe("retry")
    const { jobs } = await run(c.reserve(2, 60_000, 100))
    expect(jobs.map((r) => r.attempt).sort()).toEqual([1, 2])
    // one call completes both: the one with recorded failures and the one without
    expect(await run(c.complete(jobs))).toEqual([true, true])
    for (const key of [keys.data, keys.max, keys.fails, keys.lost, keys.err, keys.lease, keys.holder]) {
      expect(await raw.hgetall(key)).toEqual({})
    }
  })

  it("a retry with a delay goes to delayed", async () => {
    const { keys, c } = setup()
    await run(c.add([job()]))
    const [r] = (await run(c.reserve(1, 60_000, 100))).jobs
    expect(await run(c.fail(r!, { delayMs: 60_000, error: "{}", mode: "retry" }))).toBe("retry")
    expect(await raw.zcard(keys.delayed)).toBe(1)
    expect((await run(c.reserve(1, 60_000, 100))).jobs).toHaveLength(0)
  })

  it("mode dead moves the job to dead at once without counting a failure", async () => {
    const { keys, c } = setup()
    const j = job({ maxAttempts: 5 })
    await run(c.add([j]))
    const [r] = (await run(c.reserve(1, 60_000, 100))).jobs
    expect(await run(c.fail(r!, { delayMs: 0, error: '{"reason":"invalid-payload"}', mode: "dead" }))).toBe("dead")
    expect(await raw.hget(keys.fails, j.id)).toBeNull()
    expect(await raw.zscore(keys.dead, j.id)).not.toBeNull()
  })
})

describe("sweep", () => {
  it("finds nothing in a healthy set", async () => {
    const { keys, c } = setup()
    await run(c.add(Array.from({ length: 50 }, () => job())))
    await run(c.reserve(50, 60_000, 100))
    const before = await raw.dump(keys.active)
    expect(await run(c.sweep(1000))).toMatchObject({ reclaimed: 0, dead: 0, promoted: 0, more: false })
    expect(await raw.dump(keys.active)).toBe(before)
  })

  it("never touches more than limit jobs per call", async () => {
    const { keys, c } = setup()
    await run(c.add(Array.from({ length: 25 }, () => job())))
    const { jobs } = await run(c.reserve(25, 20, 100))
    await untilRedisClock(raw, jobs[0]!.deadline)
    const first = await run(c.sweep(10))
    expect(first).toMatchObject({ reclaimed: 10, more: true })
    expect(await raw.zcard(keys.active)).toBe(15)
    expect(await run(c.sweep(10))).toMatchObject({ reclaimed: 10, more: true })
    expect(await run(c.sweep(10))).toMatchObject({ reclaimed: 5, more: false })
    expect(await raw.llen(keys.wait)).toBe(25)
  })

  it("after maxAttempts lost leases the job is dead with reason lease-expired", async () => {
    const { keys, c } = setup()
    const j = job({ maxAttempts: 2 })
    await run(c.add([j]))
    for (let attempt = 1; attempt <= 2; attempt++) {
      const [r] = (await run(c.reserve(1, 20, 100))).jobs
      expect(r!.attempt).toBe(attempt)
      await untilRedisClock(raw, r!.deadline)
      const s = await run(c.sweep(100))
      expect(s.reclaimed).toBe(1)
      expect(s.dead).toBe(attempt === 2 ? 1 : 0)
    }
    expect(await raw.zscore(keys.dead, j.id)).not.toBeNull()
    expect(JSON.parse((await raw.hget(keys.err, j.id))!)).toMatchObject({ reason: "lease-expired" })
    expect(await raw.hget(keys.lost, j.id)).toBe("2")
    const stats = await run(c.stats)
    expect(stats).toMatchObject({ dead: 1, active: 0, waiting: 0 })
    expect(stats.counters.lostLeases).toBe(2)
  })

  it("promotes due delayed jobs, at most limit per call", async () => {
    const { keys, c } = setup()
    await run(c.add(Array.from({ length: 5 }, () => job({ delayMs: 10 }))))
    const t = await redisNow(raw)
    await untilRedisClock(raw, t + 10)
    expect(await run(c.sweep(3))).toMatchObject({ promoted: 3, more: true })
    expect(await run(c.sweep(3))).toMatchObject({ promoted: 2, more: false })
    expect(await raw.llen(keys.wait)).toBe(5)
  })
})

describe("admin", () => {
  it("stats, dead retry, dead purge and verify", async () => {
    const { keys, c } = setup()
    const js = [job({ maxAttempts: 1 }), job({ maxAttempts: 1 }), job()]
    await run(c.add(js))
    const leased = (await run(c.reserve(2, 60_000, 100))).jobs
    for (const r of leased) await run(c.fail(r, { delayMs: 0, error: '{"m":1}', mode: "retry" }))
    expect(await run(c.stats)).toMatchObject({ waiting: 1, active: 0, dead: 2 })
    expect(await run(c.verify(10))).toEqual({ violations: 0, jobs: 3, lines: [] })
    const retried = await run(c.deadRetry({ ids: [js[0]!.id, "nope"] }))
    expect(retried).toEqual({ count: 1, remaining: 1, missing: ["nope"] })
    expect(await raw.hget(keys.fails, js[0]!.id)).toBeNull()
    const purged = await run(c.deadPurge({ all: 100 }))
    expect(purged).toMatchObject({ count: 1, remaining: 0 })
    expect(await raw.hexists(keys.data, js[1]!.id)).toBe(0)
    expect(await run(c.verify(10))).toEqual({ violations: 0, jobs: 2, lines: [] })
    // corrupt: a payload without a state, and an active job without a lease
    await raw.hset(keys.data, "ghost", "{}")
    await raw.zadd(keys.active, 1, "ghost2")
    await raw.hset(keys.data, "ghost2", "{}")
    const bad = await run(c.verify(10))
    expect(bad.violations).toBe(2)
    expect(bad.lines.join("\n")).toMatch(/orphan-data ghost/)
    expect(bad.lines.join("\n")).toMatch(/no-lease ghost2/)
  })

  it("the queue's retention count (meta keep, set by setRetention) retains the last N with their result", async () => {
    const { keys, c } = setup()
    await raw.hset(keys.meta, "keep", 2)
    await run(c.add(Array.from({ length: 5 }, () => job())))
    const { jobs } = await run(c.reserve(5, 60_000, 100))
    for (const r of jobs) await run(c.complete([{ ...r, result: JSON.stringify(r.id) }]))
    expect(await raw.zcard(keys.done)).toBe(2)
    expect(await raw.hlen(keys.data)).toBe(2)
    expect(await raw.hlen(keys.result)).toBe(2)
    expect(await run(c.verify(10))).toMatchObject({ violations: 0, jobs: 2 })
  })

  it("completes riding a reserve: a rider's result kept, one without none, a stale token refused", async () => {
    const { keys, c } = setup()
    await run(c.add(Array.from({ length: 4 }, () => job())))
    const [a, b, d] = (await run(c.reserve(3, 60_000, 100))).jobs
    const riders = [
      { id: a!.id, token: a!.token, result: '{"s":"x|y,z"}' },
      { id: b!.id, token: b!.token + 1_000 },
      { id: d!.id, token: d!.token },
    ]
    const r = await run(c.reserve(1, 60_000, 100, riders))
    expect(r.completed).toEqual([true, false, true])
    expect(r.jobs).toHaveLength(1)
    expect(await raw.hget(keys.result, a!.id)).toBe('{"s":"x|y,z"}')
    expect(await raw.hget(keys.result, d!.id)).toBeNull()
    expect((await raw.zrange(keys.done, "0", "-1")).sort()).toEqual([a!.id, d!.id].sort())
    expect(await leaseToken(raw, keys, b!.id)).toBe(String(b!.token))
  })

  it("a reserve whose riders entry or results disagree with its count m is refused and writes nothing", async () => {
    const { keys, c } = setup()
    await run(c.add([job()]))
    const [held] = (await run(c.reserve(1, 60_000, 100))).jobs
    const before = await dumpQueue(raw, keys.queue)
    const args = Scripts.reserve.args({
      workerId: "w",
      requestId: "r",
      count: 1,
      leaseMs: 60_000,
      promoteLimit: 100,
      timeoutMs: 0,
      completes: [held!],
    })
    const m = Scripts.reserve.argv.indexOf("m")
    const bad = args.map((x, i) => String(i === m ? 2 : x))
    const callKeys = scriptKeys(Scripts.reserve, keys)
    await expect(raw.eval(Scripts.reserve.source, callKeys.length, ...callKeys, ...bad)).rejects.toThrow(
      /m \(ARGV\[9\]\) says 2 completes, riders \(ARGV\[10\]\) holds 1 and 0 results follow/,
    )
    // results follow, but not one per rider
    const extra = [...args.map(String), "{}", "{}"]
    await expect(raw.eval(Scripts.reserve.source, callKeys.length, ...callKeys, ...extra)).rejects.toThrow(
      /says 1 completes, riders \(ARGV\[10\]\) holds 1 and 2 results follow \(must be 0 or m\)/,
    )
    expect(await dumpQueue(raw, keys.queue)).toEqual(before)
  })
})

describe("script loading", () => {
  it("after SCRIPT FLUSH (a restart or failover) the next call reloads the script and succeeds", async () => {
    const server = await startRedisServer()
    const own = connect(server.url)
    const admin = rawClient(server.url)
    try {
      const c = makeCommands(own, queueKeys(name()))
      await run(c.add([job()]))
      const before = await admin.info("commandstats")
      expect(before).toMatch(/cmdstat_evalsha:calls=1,/)
      await admin.script("FLUSH")
      await run(c.add([job()]))
      const after = await admin.info("commandstats")
      // the EVALSHA was answered NOSCRIPT, then one EVAL loaded and ran it
      expect(after).toMatch(/cmdstat_evalsha:calls=2,.*failed_calls=[12]/)
      expect((await run(c.stats)).waiting).toBe(2)
      expect(Number(await admin.call("SCRIPT", "EXISTS", Scripts.add.sha).then((r) => (r as number[])[0]))).toBe(1)
    } finally {
      await own.close()
      admin.disconnect()
      await server.stop()
    }
  })
})

describe("layout", () => {
  it("a queue with another layout version is refused and nothing is written", async () => {
    const { keys, c } = setup()
    await raw.hset(keys.meta, "layout", "999")
    const err = await run(c.add([job()])).catch((e) => e)
    expect(err._tag).toBe("LayoutMismatch")
    expect(err.message).toContain("999")
    expect(await raw.exists(keys.wait, keys.data)).toBe(0)
    expect((await run(c.reserve(1, 1000, 10)).catch((e) => e))._tag).toBe("LayoutMismatch")
  })

  it("open refuses a key of a foreign type", async () => {
    const { keys, c } = setup()
    await raw.set(keys.wait, "not a list")
    const err = await run(c.open).catch((e) => e)
    expect(err._tag).toBe("WrongKeyType")
    expect(err.message).toContain(keys.wait)
  })
})
