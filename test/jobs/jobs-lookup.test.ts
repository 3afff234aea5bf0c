import { describe, expect, it } from "vitest"
import { type Commands, makeCommands } from "../../src/engine/calls/Commands.ts"
import { InvalidOptions } from "../../src/engine/model/Errors.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { Queue, Worker } from "../../src/index.ts"
import { connect } from "../../src/redis/Client.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { run } from "../support/jobs.ts"
import { leaseToken } from "../support/lease.ts"
import { dumpQueue, queueNamer, redisUrl, sharedClients } from "../support/redis.ts"

const name = queueNamer("jobs-lookup")
const shared = sharedClients()

/** A queue: its Promise face (closed after the test) and its script commands. */
const setup = () => {
  const q = name()
  const queue = new Queue<{ n: number }>(q, { connection: redisUrl() })
  onCleanup(() => queue.close())
  return { q, queue, keys: queueKeys(q), c: makeCommands(shared.client, queueKeys(q)) }
}

/** Keep the newest `keep` completed and cancelled jobs (the queue's retention). */
const retain = (queue: Queue<{ n: number }>, keep: number) =>
  queue.setRetention({ completed: { count: keep }, cancelled: { count: keep } })

/** Lease the next waiting job. */
const lease = async (c: Commands) => {
  const { jobs } = await run(c.reserve(1, 5_000, 0))
  expect(jobs).toHaveLength(1)
  return jobs[0]!
}

describe("getJob", () => {
  it("shows a waiting job (never reserved) with its payload, attempts, add time and dedupe key", async () => {
    const { queue } = setup()
    const before = Date.now()
    const id = await queue.add({ n: 1 }, { maxAttempts: 5, dedupeKey: "k-1" })
    const info = await queue.getJob(id)
    expect(info).toMatchObject({
      id,
      state: "waiting",
      payload: { n: 1 },
      attempt: 1,
      maxAttempts: 5,
      failures: 0,
      lostLeases: 0,
      dedupeKey: "k-1",
    })
    expect(info!.addedAt).toBeGreaterThanOrEqual(before)
    expect(info!.addedAt).toBeLessThanOrEqual(Date.now())
    expect(info).not.toHaveProperty("lease")
    expect(info).not.toHaveProperty("finishedAt")
  })

  it("shows a delayed job with when it is due, and an active one with its lease", async () => {
    const { queue, c } = setup()
    const delayed = await queue.add({ n: 1 }, { delayMs: 60_000 })
    const d = await queue.getJob(delayed)
    expect(d).toMatchObject({ state: "delayed", payload: { n: 1 } })
    expect(d!.dueAt).toBeGreaterThan(d!.addedAt + 50_000)
    const id = await queue.add({ n: 2 })
    const l = await lease(c)
    expect(await queue.getJob(id)).toMatchObject({
      state: "active",
      attempt: 1,
      lease: { token: l.token, deadline: l.deadline },
    })
  })

  it("shows a retained completed job with its result, a dead one with its last error, and forgets the rest", async () => {
    const { queue, c } = setup()
    const kept = await queue.add({ n: 1 })
    const l = await lease(c)
    await run(c.complete([{ id: l.id, token: l.token, result: JSON.stringify({ ok: 1 }) }]))
    const done = await queue.getJob(kept)
    expect(done).toMatchObject({ state: "completed", payload: { n: 1 }, result: { ok: 1 }, attempt: 1 })
    expect(done!.finishedAt).toBeGreaterThanOrEqual(done!.addedAt)

    const poison = await queue.add({ n: 2 }, { maxAttempts: 1 })
    const p = await lease(c)
    const error = JSON.stringify({ reason: "failed", message: "boom" })
    expect(await run(c.fail(p, { delayMs: 0, error, mode: "retry" }))).toBe("dead")
    expect(await queue.getJob(poison)).toMatchObject({
      state: "dead",
      attempt: 1,
      failures: 1,
      error: { reason: "failed", message: "boom" },
    })

    // past the retention (count 0 now): the next completion drops what was kept
    await retain(queue, 0)
    const gone = await queue.add({ n: 3 })
    const g = await lease(c)
    await run(c.complete([{ id: g.id, token: g.token }]))
    expect(await queue.getJob(gone)).toBeUndefined()
    expect(await queue.getJob(kept)).toBeUndefined()
    expect(await queue.getJob("01NEVERADDED0000000000000X")).toBeUndefined()
  })

  it("counts a retried job's failures and lost leases, with its last error", async () => {
    const { queue, c } = setup()
    const id = await queue.add({ n: 1 }, { maxAttempts: 5 })
    const first = await lease(c)
    const error = JSON.stringify({ reason: "failed", message: "try again" })
    expect(await run(c.fail(first, { delayMs: 0, error, mode: "retry" }))).toBe("retry")
    expect(await queue.getJob(id)).toMatchObject({
      state: "waiting",
      attempt: 2,
      failures: 1,
      lostLeases: 0,
      error: { reason: "failed", message: "try again" },
    })
    expect(await run(c.fail(await lease(c), { delayMs: 60_000, error, mode: "retry" }))).toBe("retry")
    const delayed = await queue.getJob(id)
    expect(delayed).toMatchObject({ state: "delayed", attempt: 3, failures: 2 })
    expect(delayed!.dueAt).toBeGreaterThan(delayed!.addedAt + 50_000)
  })

  it("refuses a bad id with a clear error and sends nothing", async () => {
    const { q, queue } = setup()
    await queue.add({ n: 1 })
    const before = await dumpQueue(shared.raw, q)
    for (const bad of ["", 42, null, "x".repeat(129)]) {
      for (const call of [() => queue.getJob(bad as string), () => queue.cancel(bad as string)]) {
        const e = await call().catch((x: unknown) => x)
        expect(e).toBeInstanceOf(InvalidOptions)
        expect((e as InvalidOptions).message).toContain("id")
      }
    }
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })
})

describe("cancel", () => {
  it("a waiting job: leaves wait, is never reserved, and is retained as cancelled (default retention)", async () => {
    const { queue, keys, c } = setup()
    await retain(queue, 10)
    const id = await queue.add({ n: 1 }, { dedupeKey: "w" })
    const other = await queue.add({ n: 2 })
    expect(await queue.cancel(id)).toBe("waiting")
    expect(await shared.raw.lrange(keys.wait, 0, -1)).toEqual([other])
    expect((await lease(c)).id).toBe(other)
    expect((await run(c.reserve(10, 5_000, 100))).jobs).toEqual([])
    const info = await queue.getJob(id)
    expect(info).toMatchObject({ state: "cancelled", payload: { n: 1 }, dedupeKey: "w" })
    expect(info!.finishedAt).toBeGreaterThanOrEqual(info!.addedAt)
    expect((await queue.stats()).counters.cancelled).toBe(1)
    // a cancelled job cannot be cancelled again
    expect(await queue.cancel(id)).toBeUndefined()
    // a retained cancelled job is a known state for verify, not an orphan
    expect(await queue.verify()).toMatchObject({ violations: 0 })
  })

  it("a delayed job: never comes due, not even for a sweep", async () => {
    const { queue, keys, c } = setup()
    await retain(queue, 10)
    const id = await queue.add({ n: 1 }, { delayMs: 1 })
    expect(await queue.cancel(id)).toBe("delayed")
    expect(await shared.raw.zcard(keys.delayed)).toBe(0)
    const swept = await queue.sweep()
    expect(swept.promoted).toBe(0)
    expect((await run(c.reserve(10, 5_000, 100))).jobs).toEqual([])
    expect(await queue.getJob(id)).toMatchObject({ state: "cancelled" })
  })

  it("an active job: the lease is revoked at once; extend, complete and fail are refused; no sweep reclaims it", async () => {
    const { queue, keys, c } = setup()
    await retain(queue, 10)
    const id = await queue.add({ n: 1 })
    const l = await lease(c)
    expect(await queue.cancel(id)).toBe("active")
    expect(await shared.raw.zscore(keys.active, id)).toBeNull()
    expect(await leaseToken(shared.raw, keys, id)).toBeNull()
    // what the holder's worker reads to tell a cancel from a lost lease
    expect(await shared.raw.zscore(keys.cancelled, id)).not.toBeNull()
    // -1: the lease is gone because the job was cancelled (not an ordinary lost lease)
    expect(await run(c.extend([l], 5_000))).toEqual([-1])
    expect(await run(c.complete([l]))).toEqual([false])
    expect(await run(c.fail(l, { delayMs: 0, error: "{}", mode: "retry" }))).toBe("lost")
    const swept = await queue.sweep()
    expect(swept.reclaimed).toBe(0)
    const stats = await queue.stats()
    expect(stats).toMatchObject({ waiting: 0, active: 0, delayed: 0, dead: 0 })
    expect(stats.counters.completed).toBe(0)
    expect(await queue.getJob(id)).toMatchObject({ state: "cancelled", failures: 0 })
    // recorded in the events stream by the same script
    const events = (await shared.raw.xrange(keys.events, "-", "+")).map(([, f]) => f.join(" "))
    expect(events.filter((e) => e.startsWith("kind cancelled"))).toEqual([`kind cancelled id ${id} was active`])
  })

  it("an active job shows its worker, progress and own timeout; cancel deletes its holder and keeps the rest (retained)", async () => {
    const { queue, keys, c } = setup()
    const id = await queue.add({ n: 1 }, { timeoutMs: 60_000 })
    const { jobs } = await run(c.reserve(1, 5_000, 0, [], { workerId: "host-a:42:abc" }))
    const l = jobs[0]!
    expect(await run(c.extend([{ id: l.id, token: l.token, progress: JSON.stringify({ pct: 40 }) }], 5_000))).toEqual([
      expect.any(Number),
    ])
    const info = await queue.getJob(id)
    expect(info).toMatchObject({
      state: "active",
      lease: { token: l.token, workerId: "host-a:42:abc" },
      progress: { pct: 40 },
      timeoutMs: 60_000,
    })
    expect(await shared.raw.hget(keys.holder, id)).not.toBeNull()
    expect(await queue.cancel(id)).toBe("active")
    // the lease goes; the job is retained as cancelled (default retention) with its progress and timeout
    expect(await shared.raw.hget(keys.holder, id)).toBeNull()
    expect(await queue.getJob(id)).toMatchObject({ state: "cancelled", progress: { pct: 40 }, timeoutMs: 60_000 })
    expect(await queue.getJob(id)).not.toHaveProperty("lease")
    expect(await queue.verify()).toMatchObject({ violations: 0 })
  })

  it("with a cancelled retention of 0 the data goes at once; the id is still remembered for the holder", async () => {
    const { queue, keys } = setup()
    await retain(queue, 0)
    const id = await queue.add({ n: 1 })
    expect(await queue.cancel(id)).toBe("waiting")
    expect(await queue.getJob(id)).toBeUndefined()
    expect(await shared.raw.hget(keys.data, id)).toBeNull()
    expect(await shared.raw.hget(keys.max, id)).toBeNull()
    expect(await shared.raw.zscore(keys.cancelled, id)).not.toBeNull()
  })

  it("keeps the data of only the newest `cancelled.count` cancelled jobs", async () => {
    const { queue } = setup()
    await retain(queue, 2)
    const ids = [await queue.add({ n: 1 }), await queue.add({ n: 2 }), await queue.add({ n: 3 })]
    for (const id of ids) expect(await queue.cancel(id)).toBe("waiting")
    expect(await queue.getJob(ids[0]!)).toBeUndefined()
    expect(await queue.getJob(ids[1]!)).toMatchObject({ state: "cancelled" })
    expect(await queue.getJob(ids[2]!)).toMatchObject({ state: "cancelled" })
  })

  it("a finished or unknown job: undefined, and nothing is written", async () => {
    const { q, queue, c } = setup()
    await retain(queue, 10)
    const done = await queue.add({ n: 1 })
    const l = await lease(c)
    await run(c.complete([l]))
    const dead = await queue.add({ n: 2 }, { maxAttempts: 1 })
    const d = await lease(c)
    await run(c.fail(d, { delayMs: 0, error: "{}", mode: "final" }))
    const before = await dumpQueue(shared.raw, q)
    expect(await queue.cancel(done)).toBeUndefined()
    expect(await queue.cancel(dead)).toBeUndefined()
    expect(await queue.cancel("01NEVERADDED0000000000000X")).toBeUndefined()
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
    expect(await queue.getJob(done)).toMatchObject({ state: "completed" })
    expect(await queue.getJob(dead)).toMatchObject({ state: "dead" })
  })

  it("racing complete: exactly one wins, and getJob says which", async () => {
    const { queue, c } = setup()
    await retain(queue, 1000)
    // complete on its own connection, so the two calls really race to the server
    const other = connect(redisUrl())
    onCleanup(() => other.close())
    const c2 = makeCommands(other, queueKeys(queue.name))
    const wins = { cancel: 0, complete: 0 }
    for (let i = 0; i < 40; i++) {
      const id = await queue.add({ n: i })
      const l = await lease(c)
      const [cancelled, completed] = await Promise.all([queue.cancel(id), run(c2.complete([l]))])
      const info = await queue.getJob(id)
      if (completed[0]) {
        wins.complete++
        expect(cancelled).toBeUndefined()
        expect(info!.state).toBe("completed")
      } else {
        wins.cancel++
        expect(cancelled).toBe("active")
        expect(info!.state).toBe("cancelled")
      }
    }
    expect(wins.cancel + wins.complete).toBe(40)
    const stats = await queue.stats()
    expect(stats.counters.completed).toBe(wins.complete)
    expect(stats.counters.cancelled).toBe(wins.cancel)
    expect(stats).toMatchObject({ active: 0, waiting: 0 })
  })
})

describe("cancel with a real worker", () => {
  it("an active job whose handler ignores its signal: never acknowledged, never retried", async () => {
    const { queue } = setup()
    await retain(queue, 10)
    const id = await queue.add({ n: 1 })
    const started = deferred<void>()
    const release = deferred<void>()
    const told = deferred<string>()
    let runs = 0
    const worker = new Worker<{ n: number }>(
      queue.name,
      async () => {
        runs++
        started.resolve()
        await release.promise // ignores job.signal
        return "late"
      },
      // a quick heartbeat on the default lease: a 1 s lease lost on a busy machine re-ran the job
      { connection: redisUrl(), heartbeatMs: 100 },
    )
    onCleanup(() => worker.close())
    worker.on("cancelled", (job) => {
      if (job.id === id) told.resolve(job.id)
    })
    await started.promise
    expect(await queue.cancel(id)).toBe("active")
    // the next heartbeat finds the lease gone, and the job in cancelled
    expect(await told.promise).toBe(id)
    release.resolve()
    await worker.close()
    expect(runs).toBe(1)
    const stats = await queue.stats()
    expect(stats).toMatchObject({ waiting: 0, active: 0, delayed: 0, dead: 0 })
    expect(stats.counters).toMatchObject({ completed: 0, failed: 0, cancelled: 1 })
    expect(await queue.getJob(id)).toMatchObject({ state: "cancelled", failures: 0, lostLeases: 0 })
  })
})

describe("waitFor finds a job that ended before the call", () => {
  it("cancelled (data not retained, or retained) and dead: answered from the lookup, not from a later event", async () => {
    const { queue, c } = setup()
    // cancelled jobs not retained: the cancelled job's data goes, its id stays in cancelled
    await retain(queue, 0)
    const gone = await queue.add({ n: 1 })
    expect(await queue.cancel(gone)).toBe("waiting")
    expect(await queue.getJob(gone)).toBeUndefined()
    // no event will come for these jobs any more: only the lookup can answer before the timeout
    expect(await queue.waitFor(gone, { timeoutMs: 2_000 })).toMatchObject({ id: gone, state: "cancelled" })
    await retain(queue, 10)
    const kept = await queue.add({ n: 2 })
    expect(await queue.cancel(kept)).toBe("waiting")
    const info = await queue.getJob(kept)
    expect(await queue.waitFor(kept, { timeoutMs: 2_000 })).toEqual({
      id: kept,
      state: "cancelled",
      finishedAt: info!.finishedAt,
    })
    const dead = await queue.add({ n: 3 }, { maxAttempts: 1 })
    const l = await lease(c)
    expect(await run(c.fail(l, { delayMs: 0, error: '{"message":"boom"}', mode: "retry" }))).toBe("dead")
    expect(await queue.waitFor(dead, { timeoutMs: 2_000 })).toMatchObject({
      id: dead,
      state: "dead",
      error: { message: "boom" },
    })
  })
})
