import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { KEY_NAMES, queueKeys } from "../../src/engine/model/Keys.ts"
import { connect, type RedisClient } from "../../src/redis/Client.ts"
import { startRedisServer } from "../../src/testing/RedisServer.ts"
import { newJob, run } from "../support/jobs.ts"
import { leaseCount, leaseToken, setLeaseToken } from "../support/lease.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { redisNow, untilRedisClock } from "../support/until.ts"

const name = queueNamer("exactly-once")
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
const meta = async (key: string, field: string) => Number((await raw.hget(key, field)) ?? 0)

describe("K1: an add call run twice (a re-send) is stored once", () => {
  it("case A: both copies would be popped by one reserve; the job is leased once", async () => {
    const { keys, c } = setup()
    const j = job()
    expect(await run(c.add([j], "req-a"))).toEqual([j.id])
    expect(await run(c.add([j], "req-a"))).toEqual([j.id])
    expect(await raw.llen(keys.wait)).toBe(1)
    const { jobs } = await run(c.reserve(10, 60_000, 100))
    expect(jobs.map((r) => r.id)).toEqual([j.id])
    expect(await meta(keys.meta, "added")).toBe(1)
    expect(await run(c.complete([{ id: j.id, token: jobs[0]!.token }]))).toEqual([true])
    // one job: the completed one, retained (default retention)
    expect(await run(c.verify(10))).toEqual({ violations: 0, jobs: 1, lines: [] })
    expect(await raw.zcard(keys.done)).toBe(1)
  })

  it("case B: after one copy failed with a backoff, no second copy is reserved at attempt 1", async () => {
    const { keys, c } = setup()
    const j = job()
    await run(c.add([j], "req-b"))
    await run(c.add([j], "req-b"))
    const [r] = (await run(c.reserve(1, 60_000, 100))).jobs
    expect(await run(c.fail(r!, { delayMs: 60_000, error: '{"m":"x"}', mode: "retry" }))).toBe("retry")
    expect((await run(c.reserve(10, 60_000, 100))).jobs).toEqual([])
    expect(await raw.zcard(keys.active)).toBe(0)
    expect(await raw.zscore(keys.delayed, j.id)).not.toBeNull()
    expect(await run(c.verify(10))).toEqual({ violations: 0, jobs: 1, lines: [] })
  })

  it("case C: a job retried after its backoff completes once and never turns into a missing-data dead letter", async () => {
    const { keys, c } = setup()
    const j = job()
    await run(c.add([j], "req-c"))
    await run(c.add([j], "req-c"))
    const [r1] = (await run(c.reserve(1, 60_000, 100))).jobs
    await run(c.fail(r1!, { delayMs: 60_000, error: '{"m":"x"}', mode: "retry" }))
    // no copy is waiting to be reserved (and completed) meanwhile
    expect((await run(c.reserve(10, 60_000, 100))).jobs).toEqual([])
    // the backoff comes due
    await raw.zadd(keys.delayed, "XX", 0, j.id)
    const [r2] = (await run(c.reserve(10, 60_000, 100))).jobs
    expect(r2).toMatchObject({ id: j.id, attempt: 2 })
    expect(await run(c.complete([{ id: j.id, token: r2!.token }]))).toEqual([true])
    expect((await run(c.reserve(10, 60_000, 100))).jobs).toEqual([])
    expect(await raw.zcard(keys.dead)).toBe(0)
    const stats = await run(c.stats)
    expect(stats.counters).toMatchObject({ added: 1, completed: 1, failed: 1, dead: 0 })
    // one job: the completed one, retained (default retention)
    expect(await run(c.verify(10))).toEqual({ violations: 0, jobs: 1, lines: [] })
  })

  it("a second run writes nothing and answers the same ids, dedupe holders read again", async () => {
    const { keys, c } = setup()
    const held = job({ dedupeKey: "k1", dedupeTtlMs: 60_000 })
    await run(c.add([held]))
    const jobs = [job({ dedupeKey: "k1", dedupeTtlMs: 60_000 }), job({ dedupeKey: "k2", dedupeTtlMs: 60_000 }), job()]
    jobs.push(job({ dedupeKey: "k2", dedupeTtlMs: 60_000 }), job({ delayMs: 60_000 }))
    const first = await run(c.add(jobs, "req-d"))
    expect(first).toEqual([held.id, jobs[1]!.id, jobs[2]!.id, jobs[1]!.id, jobs[4]!.id])
    const before = await dumpQueue(raw, keys.queue)
    expect(await run(c.add(jobs, "req-d"))).toEqual(first)
    expect(await dumpQueue(raw, keys.queue)).toEqual(before)
    expect(await meta(keys.meta, "added")).toBe(4)
  })

  it("receipts older than the 60 s window are trimmed by add and by reserve (one call in 8 each), a bounded number per call", async () => {
    const { keys, c } = setup()
    const old = (await redisNow(raw)) - 61_000
    for (let i = 0; i < 200; i++) {
      // as an earlier version left them: in the receipts HASH as well as in receiptsAt
      await raw.hset(keys.receipts, `old-${i}`, old)
      await raw.zadd(keys.receiptsAt, old, `old-${i}`)
    }
    // "f" (102) is not a multiple of 8: this call trims nothing, and leaves its own receipt
    await run(c.add([job()], "fresh"))
    expect(await raw.zcard(keys.receiptsAt)).toBe(200 + 1)
    expect(await raw.hlen(keys.receipts)).toBe(200)
    // "P" (80) is: this call drops 128 old receipts (from both keys), none of the window
    await run(c.add([job()], "P-trims"))
    expect(await raw.zcard(keys.receiptsAt)).toBe(200 - 128 + 2)
    expect(await raw.hlen(keys.receipts)).toBe(200 - 128)
    // a reserve whose request id ends in "1" (49) leaves them; one ending in "8" (56) drops 64
    await run(c.reserve(1, 60_000, 100, [], { workerId: "w", requestId: "1" }))
    expect(await raw.zcard(keys.receiptsAt)).toBe(200 - 128 + 2)
    await run(c.reserve(1, 60_000, 100, [], { workerId: "w", requestId: "8" }))
    expect(await raw.zcard(keys.receiptsAt)).toBe(200 - 128 - 64 + 2)
    expect(await raw.hlen(keys.receipts)).toBe(200 - 128 - 64)
    await run(c.add([job()], "H-trims"))
    expect((await raw.zrange(keys.receiptsAt, "0", "-1")).sort()).toEqual(["H-trims", "P-trims", "fresh"])
    expect(await raw.exists(keys.receipts)).toBe(0)
  })

  it("an add writes its receipt to receiptsAt alone", async () => {
    const { keys, c } = setup()
    await run(c.add([job(), job({ delayMs: 60_000 })], "plain"))
    expect(await raw.zrange(keys.receiptsAt, "0", "-1")).toEqual(["plain"])
    expect(await raw.exists(keys.receipts)).toBe(0)
  })
})

describe("a completed job's kept run entry is not a lease", () => {
  it("a late fail, release or complete with the token of the run that completed it is refused, and the job stays completed", async () => {
    const { keys, c } = setup()
    const j = job()
    await run(c.add([j]))
    const [r] = (await run(c.reserve(1, 60_000, 100))).jobs
    expect(await run(c.complete([{ id: j.id, token: r!.token }]))).toEqual([true])
    // the retained job keeps its run's holder entry (its start), without the token
    expect(await raw.hexists(keys.holder, j.id)).toBe(1)
    expect(await leaseToken(raw, keys, j.id)).toBeNull()
    expect(await run(c.fail(r!, { delayMs: 0, error: "{}", mode: "retry" }))).toBe("lost")
    expect(await run(c.release([r!]))).toEqual([false])
    expect(await run(c.complete([{ id: j.id, token: r!.token }]))).toEqual([false])
    expect(await raw.llen(keys.wait)).toBe(0)
    expect(await raw.zscore(keys.done, j.id)).not.toBeNull()
    expect(await run(c.verify(10))).toEqual({ violations: 0, jobs: 1, lines: [] })
  })
})

describe("a complete of several jobs, one of them refused", () => {
  it("each completed job keeps exactly its own run without the token; the refused one keeps its lease", async () => {
    const { keys, c } = setup()
    const js = [job(), job(), job()]
    await run(c.add(js))
    const leases = (await run(c.reserve(3, 60_000, 100))).jobs
    // the middle lease now another holder's, under a token of another length: a completed
    // job's rewrite that took its neighbour's token place would cut its entry wrong
    await setLeaseToken(raw, keys, leases[1]!.id, "7")
    const before = await Promise.all(leases.map((l) => raw.hget(keys.holder, l.id)))
    expect(await run(c.complete(leases.map((l) => ({ id: l.id, token: l.token }))))).toEqual([true, false, true])
    const after = await Promise.all(leases.map((l) => raw.hget(keys.holder, l.id)))
    // "<workerId>|<token>|<startedAt>|<until>" -> "<workerId>|<startedAt>|<until>"
    const withoutToken = (h: string | null) =>
      h!
        .split("|")
        .filter((_, k) => k !== 1)
        .join("|")
    expect(after).toEqual([withoutToken(before[0]!), before[1], withoutToken(before[2]!)])
    expect(await leaseToken(raw, keys, leases[1]!.id)).toBe("7")
    expect(await run(c.complete([{ id: leases[1]!.id, token: 7 }]))).toEqual([true])
    expect(await run(c.verify(10))).toEqual({ violations: 0, jobs: 3, lines: [] })
  })
})

describe("reserve drops second copies of a job (defence in depth)", () => {
  it("a copy in the same batch, or of a job whose payload is already stored, is dropped and counted", async () => {
    const { keys, c } = setup()
    const a = job({ maxAttempts: 5 })
    const b = job()
    await run(c.add([a, b]))
    // copies as a client without receipts would leave them (with another maxAttempts, to
    // show that a dropped copy writes nothing)
    await raw.lpush(keys.wait, `${a.id}|3|${a.payload}`)
    const { jobs } = await run(c.reserve(10, 60_000, 100))
    expect(jobs.map((r) => r.id)).toEqual([a.id, b.id])
    expect(await meta(keys.meta, "duplicates")).toBe(1)
    const ra = jobs[0]!
    await run(c.fail(ra, { delayMs: 60_000, error: "{}", mode: "retry" }))
    await raw.lpush(keys.wait, `${a.id}|3|${a.payload}`)
    expect((await run(c.reserve(10, 60_000, 100))).jobs).toEqual([])
    expect(await meta(keys.meta, "duplicates")).toBe(2)
    expect(await raw.hget(keys.max, a.id)).toBe("5")
    expect(await run(c.verify(10))).toEqual({ violations: 0, jobs: 2, lines: [] })
  })
})

describe("N3: a reserve call run twice (a re-send) answers the same and changes nothing", () => {
  it("the same leases and rider statuses; a lease no longer held is left out", async () => {
    const { keys, c } = setup()
    const js = [job(), job(), job()]
    await run(c.add(js))
    const call1 = { workerId: "w-1", requestId: "r-1" }
    const first = await run(c.reserve(2, 60_000, 100, [], call1))
    expect(first.jobs.map((r) => r.id)).toEqual([js[0]!.id, js[1]!.id])
    const before = await dumpQueue(raw, keys.queue)
    expect(await run(c.reserve(2, 60_000, 100, [], call1))).toEqual(first)
    expect(await dumpQueue(raw, keys.queue)).toEqual(before)

    // a finished job rides the next call; its re-send still says "completed"
    const ride = [{ id: first.jobs[0]!.id, token: first.jobs[0]!.token }]
    const call2 = { workerId: "w-1", requestId: "r-2" }
    const second = await run(c.reserve(2, 60_000, 100, ride, call2))
    expect(second.completed).toEqual([true])
    expect(second.jobs.map((r) => r.id)).toEqual([js[2]!.id])
    expect(await run(c.reserve(2, 60_000, 100, ride, call2))).toEqual(second)
    // once the lease is gone, a late re-send does not hand it out again
    await run(c.complete([{ id: js[2]!.id, token: second.jobs[0]!.token }]))
    expect(await run(c.reserve(2, 60_000, 100, ride, call2))).toEqual({ ...second, jobs: [] })
    const stats = await run(c.stats)
    expect(stats.counters).toMatchObject({ added: 3, completed: 2 })
    expect(stats).toMatchObject({ waiting: 0, active: 1 })
  })

  it("the same attempt, maxAttempts, timeout, deadline and payload per job: inline, stored, retried, own timeout", async () => {
    const { c } = setup()
    const retried = job({ maxAttempts: 4 })
    await run(c.add([retried]))
    const [lease] = (await run(c.reserve(1, 60_000, 100))).jobs
    expect(await run(c.fail(lease!, { delayMs: 0, error: "{}", mode: "retry" }))).toBe("retry")
    // payloads may hold the characters the reply joins its other fields with
    const own = job({ maxAttempts: 5, timeoutMs: 2_000, payload: '{"s":"a|b,c"}' })
    const plain = job({ payload: '{"s":"|"}' })
    await run(c.add([own, plain]))
    const call = { workerId: "w-1", requestId: "r-1", timeoutMs: 700 }
    const sent = await redisNow(raw)
    const first = await run(c.reserve(3, 60_000, 100, [], call))
    const answered = await redisNow(raw)
    const byId = new Map(first.jobs.map((r) => [r.id, r]))
    expect(byId.get(retried.id)).toMatchObject({ attempt: 2, maxAttempts: 4, timeoutMs: 700, payload: retried.payload })
    expect(byId.get(own.id)).toMatchObject({ attempt: 1, maxAttempts: 5, timeoutMs: 2_000, payload: own.payload })
    expect(byId.get(plain.id)).toMatchObject({ attempt: 1, maxAttempts: 3, timeoutMs: 700, payload: plain.payload })
    for (const r of first.jobs) {
      expect(r.deadline).toBeGreaterThanOrEqual(sent + 60_000)
      expect(r.deadline).toBeLessThanOrEqual(answered + 60_000)
    }
    expect(await run(c.reserve(3, 60_000, 100, [], call))).toEqual(first)
  })

  it("a record per worker; records of workers quiet for 10 minutes are dropped", async () => {
    const { keys, c } = setup()
    await run(c.add([job(), job(), job()]))
    await raw.hset(keys.reqs, "gone", `x|${(await redisNow(raw)) - 601_000}||`)
    const a = await run(c.reserve(1, 60_000, 100, [], { workerId: "w-a", requestId: "r-1" }))
    // another worker with the same request id is another call
    const b = await run(c.reserve(1, 60_000, 100, [], { workerId: "w-b", requestId: "r-1" }))
    expect(a.jobs).toHaveLength(1)
    expect(b.jobs).toHaveLength(1)
    expect(b.jobs[0]!.id).not.toBe(a.jobs[0]!.id)
    // housekeeping runs in calls whose request id ends in a multiple of 8 ("1" is 49: not these);
    // a request id that is not a decimal number has the record of number 0
    expect((await raw.hkeys(keys.reqs)).sort()).toEqual(["gone", "w-a:0", "w-b:0"])
    // "0" (48) is: it samples 16 records, so with fewer than that every quiet one goes
    await run(c.reserve(1, 60_000, 100, [], { workerId: "w-a", requestId: "r-0" }))
    expect((await raw.hkeys(keys.reqs)).sort()).toEqual(["w-a:0", "w-b:0"])
  })

  it("quiet workers' records stay bounded: housekeeping calls drop them faster than workers come and go", async () => {
    const { keys, c } = setup()
    await run(c.add(Array.from({ length: 400 }, () => job())))
    const quiet = `x|${(await redisNow(raw)) - 601_000}||`
    // 40 workers each made a call, then went quiet (crashed or closed)
    for (let i = 0; i < 40; i++) await raw.hset(keys.reqs, `gone-${i}`, quiet)
    // one live worker's 400 numbered calls (as a worker sends them): one in 5 is a housekeeping call
    for (let i = 1; i <= 400; i++) await run(c.reserve(1, 60_000, 100, [], { workerId: "live", requestId: String(i) }))
    // one record per call number mod 4: what the worker may have out, whatever it sent
    expect((await raw.hkeys(keys.reqs)).sort()).toEqual(["live:0", "live:1", "live:2", "live:3"])
  })

  it("F1: two calls out, both run, both re-sent in order: each re-send answers its own first run, nothing is leased to nobody", async () => {
    const { keys, c } = setup()
    await run(c.add(Array.from({ length: 8 }, () => job({ maxAttempts: 1 }))))
    const w = "w-two"
    const call = (requestId: string) => c.reserve(2, 60_000, 100, [], { workerId: w, requestId })
    // calls "1" and "2" run; both replies are lost
    const first1 = await run(call("1"))
    const first2 = await run(call("2"))
    const before = await dumpQueue(raw, keys.queue)
    // ioredis re-sends both, in order, after a reconnect (or the worker does, on a new connection)
    expect(await run(call("1"))).toEqual(first1)
    expect(await run(call("2"))).toEqual(first2)
    expect(await dumpQueue(raw, keys.queue)).toEqual(before)
    expect(await raw.zcard(keys.active)).toBe(4)
    // the next calls lease what is left; their re-sends answer the same once more
    const third = await run(call("3"))
    const fourth = await run(call("4"))
    expect(await run(call("3"))).toEqual(third)
    expect(await run(call("4"))).toEqual(fourth)
    const leased = [first1, first2, third, fourth].flatMap((r) => r.jobs.map((j) => j.id))
    expect(new Set(leased).size).toBe(8)
    expect(await raw.zcard(keys.active)).toBe(8)
  })

  it("F3: a re-send asking for no jobs gives the first run's leases back (a closing worker's give-back), once", async () => {
    const { keys, c } = setup()
    const js = [job(), job(), job()]
    await run(c.add(js))
    const w = "w-closing"
    const [a] = (await run(c.reserve(1, 60_000, 100, [], { workerId: w, requestId: "1" }))).jobs
    const ride = [{ id: a!.id, token: a!.token }]
    const call = (count: number) => c.reserve(count, 60_000, 100, ride, { workerId: w, requestId: "2" })
    const first = await run(call(2))
    expect(first.completed).toEqual([true])
    expect(first.jobs.map((r) => r.id)).toEqual([js[1]!.id, js[2]!.id])
    // the give-back: the same call with count 0 answers the riders and no jobs, and frees the leases
    expect(await run(call(0))).toEqual({ ...first, jobs: [] })
    expect(await raw.zcard(keys.active)).toBe(0)
    expect((await raw.lrange(keys.wait, 0, -1)).sort()).toEqual([js[1]!.id, js[2]!.id].sort())
    expect(await leaseCount(raw, keys)).toBe(0)
    // the given-back leases' holder entries are gone; the completed rider keeps its run's (its start)
    expect(await raw.hkeys(keys.holder)).toEqual([a!.id])
    expect(await meta(keys.meta, "released")).toBe(2)
    // once: a later give-back or re-send finds no lease held under those tokens
    expect(await run(call(0))).toEqual({ ...first, jobs: [] })
    expect(await run(call(2))).toEqual({ ...first, jobs: [] })
    expect(await meta(keys.meta, "released")).toBe(2)
    expect(await raw.llen(keys.wait)).toBe(2)
    const events = await raw.xrange(keys.events, "-", "+")
    expect(events.filter(([, f]) => f.includes("released")).length).toBe(2)
  })

  it("F1: two calls carrying riders, both re-sent: the riders stay completed, none is counted refused", async () => {
    const { keys, c } = setup()
    await run(c.add(Array.from({ length: 6 }, () => job())))
    const w = "w-ride"
    const [a, b] = (await run(c.reserve(2, 60_000, 100, [], { workerId: w, requestId: "1" }))).jobs
    const callA = () => c.reserve(1, 60_000, 100, [{ id: a!.id, token: a!.token }], { workerId: w, requestId: "2" })
    const callB = () => c.reserve(1, 60_000, 100, [{ id: b!.id, token: b!.token }], { workerId: w, requestId: "3" })
    const firstA = await run(callA())
    const firstB = await run(callB())
    expect([firstA.completed, firstB.completed]).toEqual([[true], [true]])
    expect(await run(callA())).toEqual(firstA)
    expect(await run(callB())).toEqual(firstB)
    expect(await meta(keys.meta, "refused")).toBe(0)
    expect(await meta(keys.meta, "completed")).toBe(2)
    expect(await raw.zcard(keys.active)).toBe(2)
  })
})

/** Every key of the queue as DUMP gives it (null: the key does not exist). */
const snapshot = async (queue: string) => {
  const keys = queueKeys(queue)
  return Promise.all(KEY_NAMES.map(async (n) => [keys[n], await raw.dumpBuffer(keys[n])] as const))
}
const restore = async (saved: ReadonlyArray<readonly [string, Buffer | null]>) => {
  for (const [key, dump] of saved) {
    if (dump) await raw.restore(key, 0, dump, "REPLACE")
    else await raw.del(key)
  }
}

describe("K3: fencing tokens never repeat", () => {
  it("after the write of a reserve is lost (a failover), the next lease has a greater token and the old holder is refused", async () => {
    const { keys, c } = setup()
    const j = job()
    await run(c.add([j]))
    const saved = await snapshot(keys.queue)
    const [first] = (await run(c.reserve(1, 60_000, 100))).jobs
    // the promoted replica never saw that reserve
    await restore(saved)
    await untilRedisClock(raw, first!.deadline - 60_000)
    const [second] = (await run(c.reserve(1, 60_000, 100))).jobs
    expect(second!.id).toBe(j.id)
    expect(second!.token).toBeGreaterThan(first!.token)
    expect(Number.isSafeInteger(second!.token)).toBe(true)
    expect(await leaseToken(raw, keys, j.id)).toBe(String(second!.token))
    expect(await run(c.extend([{ id: j.id, token: first!.token }], 60_000))).toEqual([0])
    expect(await run(c.complete([{ id: j.id, token: first!.token }]))).toEqual([false])
    expect(await run(c.complete([{ id: j.id, token: second!.token }]))).toEqual([true])
  })
})

describe("N6: over maxmemory with noeviction", () => {
  it("a reserve with due delayed jobs still runs; every add, with or without a dedupe key, is refused", async () => {
    const server = await startRedisServer()
    const own = connect(server.url)
    const admin = rawClient(server.url)
    try {
      const keys = queueKeys(name("oom"))
      const c = makeCommands(own, keys)
      await run(c.add([job({ delayMs: 1 }), job({ delayMs: 1 }), job(), job()]))
      // an expired dedupe key for the dedupe add to clean up (a write that frees memory)
      await run(c.add([job({ dedupeKey: "old", dedupeTtlMs: 1 })]))
      await untilRedisClock(admin, (await redisNow(admin)) + 1)
      const used = Number(/used_memory:(\d+)/.exec(await admin.info("memory"))![1])
      // a private server (stopped below), so no other test meets this limit
      await admin.config("SET", "maxmemory-policy", "noeviction")
      await admin.config("SET", "maxmemory", String(Math.floor(used / 2)))

      const before = await dumpQueue(admin, keys.queue)
      const refused = /^Redis refused add script: OOM command not allowed when used memory > 'maxmemory'/
      await expect(run(c.add([job()]))).rejects.toThrow(refused)
      await expect(run(c.add([job({ dedupeKey: "new", dedupeTtlMs: 60_000 })]))).rejects.toThrow(refused)
      expect(await dumpQueue(admin, keys.queue)).toEqual(before)

      const { jobs } = await run(c.reserve(10, 60_000, 100))
      expect(jobs).toHaveLength(5)
      expect(await admin.zcard(keys.delayed)).toBe(0)
      expect(await run(c.complete(jobs))).toEqual([true, true, true, true, true])
    } finally {
      await own.close()
      admin.disconnect()
      await server.stop()
    }
  })
})

describe("N11: dedupe keys stay bounded", () => {
  it("an add drops at least as many expired dedupe keys as it claims plus 16, and one call in 8 (by request id) up to 128 (also adds without one)", async () => {
    const { keys, c } = setup()
    for (let round = 0; round < 5; round++) {
      const batch = Array.from({ length: 1000 }, (_, i) => job({ dedupeKey: `r${round}-${i}`, dedupeTtlMs: 1 }))
      await run(c.add(batch))
      // every key of earlier rounds had expired before this round: none is left
      expect(await raw.zcard(keys.dedupe)).toBe(1000)
      expect(await raw.hlen(keys.dedupeid)).toBe(1000)
      await untilRedisClock(raw, (await redisNow(raw)) + 1)
    }
    // "a" (97) is not a multiple of 8: these calls claim nothing and drop nothing
    for (let i = 0; i < 7; i++) await run(c.add([job()], `a-${i}`))
    expect(await raw.zcard(keys.dedupe)).toBe(1000)
    // "H" (72) is: each of these drops 128
    for (let i = 0; i < 7; i++) await run(c.add([job()], `H-${i}`))
    expect(await raw.zcard(keys.dedupe)).toBe(1000 - 7 * 128)
    // not sampled, but it claims a key: 1 + 16 dropped
    await run(c.add([job({ dedupeKey: "fresh", dedupeTtlMs: 60_000 })], "b-1"))
    expect(await raw.zcard(keys.dedupe)).toBe(1000 - 7 * 128 - 17 + 1)
    await run(c.add([job()], "P-1"))
    expect(await raw.zrange(keys.dedupe, "0", "-1")).toEqual(["fresh"])
    expect(await raw.hkeys(keys.dedupeid)).toEqual(["fresh"])
  })
})
