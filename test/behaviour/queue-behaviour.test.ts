/**
 * One behaviour suite, run against both faces (test/behaviour/faces.ts): the same cases,
 * the same assertions, for the Promise `Queue`/`Worker` and the Effect `LeaseQueue`/
 * `LeaseWorker`, on the suite's real Redis. Where the faces differ, a case says so.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { NotReplicated } from "../../src/index.ts"
import { proxyToSuiteRedis } from "../support/proxy.ts"
import { dumpQueue, queueNamer, rawClient } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { faces } from "./faces.ts"

const name = queueNamer("behaviour")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

describe.each(faces)("$name", (face) => {
  it("add: the job runs once with its payload and is completed; the queue is empty after", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 7 })
    const w = await q.worker(() => "ok")
    await until("the job completes", () => w.seen.completed.length === 1)
    expect(w.seen.runs).toEqual([{ id, attempt: 1, token: w.seen.runs[0]!.token, n: 7 }])
    expect(w.seen.completed).toEqual([id])
    const s = await q.stats()
    expect([s.waiting, s.active, s.delayed, s.dead]).toEqual([0, 0, 0, 0])
    expect(s.counters.completed).toBe(1)
  })

  it("a custom id added twice (and once more after completion) runs once, with default options", async () => {
    const q = await face.open(name())
    const id = "order:42.v1"
    expect(await q.add({ n: 1 }, { id })).toBe(id)
    expect(await q.add({ n: 2 }, { id })).toBe(id)
    const w = await q.worker(() => "ok")
    await until("the job completes", () => w.seen.completed.length === 1)
    expect(await q.add({ n: 3 }, { id })).toBe(id)
    expect(await q.getJob(id)).toMatchObject({ id, state: "completed", payload: { n: 1 } })
    expect((await q.waitFor(id, 5_000)).state).toBe("completed")
    expect(w.seen.runs.map((r) => [r.id, r.n])).toEqual([[id, 1]])
    expect((await q.stats()).counters.added).toBe(1)
    const before = await dumpQueue(raw, q.name)
    await expect(q.add({ n: 4 }, { id: "a|b" })).rejects.toMatchObject({ field: "options.id", value: "a|b" })
    expect(await dumpQueue(raw, q.name)).toEqual(before)
  })

  it("addBulk: distinct ids in order; one worker at concurrency 1 runs them in that order", async () => {
    const q = await face.open(name())
    const ids = await q.addBulk([{ payload: { n: 1 } }, { payload: { n: 2 } }, { payload: { n: 3 } }])
    expect(new Set(ids).size).toBe(3)
    const w = await q.worker(() => "ok", { concurrency: 1 })
    await until("all complete", () => w.seen.completed.length === 3)
    expect(w.seen.runs.map((r) => [r.id, r.n])).toEqual([
      [ids[0], 1],
      [ids[1], 2],
      [ids[2], 3],
    ])
  })

  it("priorities: lower runs first, FIFO within one, lifo to the front; changePriority moves a waiting job and refuses an unknown one", async () => {
    const q = await face.open(name())
    const ids = await q.addBulk([
      { payload: { n: 1 }, options: { priority: 5 } },
      { payload: { n: 2 }, options: { priority: 5 } },
      { payload: { n: 3 } },
      { payload: { n: 4 }, options: { priority: 9 } },
      { payload: { n: 5 }, options: { priority: 5, lifo: true } },
    ])
    expect(await q.changePriority(ids[3]!, 1)).toBe("waiting")
    expect((await q.getJob(ids[3]!))?.priority).toBe(1)
    await expect(q.changePriority("no-such-job", 1)).rejects.toMatchObject({ _tag: "JobNotWaiting", state: "missing" })
    await expect(q.changePriority(ids[0]!, -1)).rejects.toMatchObject({ _tag: "InvalidOptions", field: "priority" })
    const w = await q.worker(() => "ok", { concurrency: 1 })
    await until("all complete", () => w.seen.completed.length === 5)
    expect(w.seen.runs.map((r) => r.n)).toEqual([3, 4, 5, 1, 2])
  })

  it("delayed: a job added with delayMs waits in delayed, then runs once due", async () => {
    const q = await face.open(name())
    const w = await q.worker(() => "ok")
    const id = await q.add({ n: 1 }, { delayMs: 1_000 })
    const s = await q.stats()
    // still delayed when looked at: it is not handed out before it is due
    expect([s.delayed, s.waiting]).toEqual([1, 0])
    expect(w.seen.runs).toEqual([])
    await until("the delayed job completes", () => w.seen.completed.length === 1)
    expect(w.seen.completed).toEqual([id])
    expect((await q.stats()).delayed).toBe(0)
  })

  it("retry with backoff: a failed attempt is retried (attempt 2) after the backoff, then completes", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 1 }, { maxAttempts: 3 })
    const w = await q.worker((job) => (job.attempt === 1 ? "fail" : "ok"), { backoff: { type: "fixed", delayMs: 300 } })
    await until("the retry completes", () => w.seen.completed.length === 1)
    expect(w.seen.runs.map((r) => [r.id, r.attempt])).toEqual([
      [id, 1],
      [id, 2],
    ])
    expect(w.seen.failed).toEqual([{ id, willRetry: true }])
    const s = await q.stats()
    expect([s.counters.failed, s.counters.completed, s.dead]).toEqual([1, 1, 0])
  })

  it("dead after maxAttempts: every attempt fails, the last goes to dead with reason failed", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 1 }, { maxAttempts: 2 })
    const w = await q.worker(() => "fail", { backoff: { type: "fixed", delayMs: 10 } })
    await until("the job is dead", () => w.seen.dead.length === 1)
    expect(w.seen.runs.map((r) => r.attempt)).toEqual([1, 2])
    expect(w.seen.failed).toEqual([
      { id, willRetry: true },
      { id, willRetry: false },
    ])
    expect(w.seen.dead).toEqual([{ id, reason: "failed" }])
    const s = await q.stats()
    expect([s.dead, s.waiting, s.delayed, s.active]).toEqual([1, 0, 0, 0])
  })

  it("release on close: a running job is stopped, given back at once with its attempts unchanged, and runs again", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 1 }, { maxAttempts: 1 })
    const first = await q.worker(() => "hang", { shutdownGraceMs: 100 })
    await until("the job runs", () => first.seen.runs.length === 1)
    await first.close()
    expect(await first.state()).toBe("closed")
    expect(first.seen.stopped).toEqual([id])
    expect(first.seen.failed).toEqual([])
    const s = await q.stats()
    expect([s.waiting, s.active, s.counters.released]).toEqual([1, 0, 1])
    // maxAttempts 1: had the release spent an attempt, the job would now be dead
    const second = await q.worker(() => "ok")
    await until("the released job completes", () => second.seen.completed.length === 1)
    expect(second.seen.runs.map((r) => [r.id, r.attempt])).toEqual([[id, 1]])
  })

  it("lease lost on expiry: a worker cut off from Redis stops its handler before the lease expires; a sweep reclaims it and the job runs again", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 1 })
    const proxy = await proxyToSuiteRedis()
    // the sweeps start once the handler is stopped, so a short server grace only shortens the wait
    const w = await q.worker((job) => (job.attempt === 1 ? "hang" : "ok"), {
      leaseMs: 1_000,
      heartbeatMs: 200,
      leaseGraceMs: 200,
      sweep: false,
      connection: proxy.url,
    })
    await until("the job runs", () => w.seen.runs.length === 1)
    const token = w.seen.runs[0]!.token
    proxy.cut()
    await until("the holder is told its lease is gone", () => w.seen.leaseLost.length === 1)
    expect(w.seen.leaseLost).toEqual([{ id, token, reason: "self-fenced" }])
    await until("the handler is stopped", () => w.seen.stopped.length === 1)
    // the server's lease runs out (lease + grace after the last extend): a sweep takes the job back
    await until("a sweep reclaims the expired lease", async () => (await q.sweep()).reclaimed === 1, { everyMs: 100 })
    proxy.heal()
    await until("the job runs again and completes", () => w.seen.completed.length === 1)
    expect(w.seen.runs.map((r) => r.attempt)).toEqual([1, 2])
    expect(w.seen.stopped).toEqual([id])
    expect((await q.stats()).counters.lostLeases).toBe(1)
  })

  it("dead after a lost lease: with its attempts used up, a worker's in-process sweep moves it to dead (lease-expired) and says so", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 1 }, { maxAttempts: 1 })
    const proxy = await proxyToSuiteRedis()
    // the server keeps the lease leaseGraceMs past the holder's deadline (default 1 s): the
    // case is about the sweep, not that grace, so a short one only shortens the wait
    const holder = await q.worker(() => "hang", {
      leaseMs: 1_000,
      heartbeatMs: 200,
      leaseGraceMs: 200,
      sweep: false,
      connection: proxy.url,
    })
    await until("the job runs", () => holder.seen.runs.length === 1)
    proxy.cut()
    const sweeper = await q.worker(() => "ok", { sweep: { intervalMs: 100 } })
    await until("the sweeping worker reports the job dead", () => sweeper.seen.dead.length === 1)
    expect(sweeper.seen.dead).toEqual([{ id, reason: "lease-expired" }])
    expect(sweeper.seen.runs).toEqual([])
    expect(holder.seen.leaseLost.map((l) => [l.id, l.reason])).toEqual([[id, "self-fenced"]])
    expect(await q.stats()).toMatchObject({ dead: 1, active: 0, waiting: 0, counters: { lostLeases: 1 } })
    // the holder back in touch, so its close does not wait out its bounds on a cut connection
    proxy.heal()
  })

  // each failed connection attempt reaches the worker's error event / onError (the Effect
  // worker hears those of its queue service's connection, which it shares)
  it("a worker cut off from Redis says why (an error event) by the time it stops a handler", async () => {
    const q = await face.open(name())
    await q.add({ n: 1 })
    const proxy = await proxyToSuiteRedis()
    const w = await q.worker(() => "hang", { leaseMs: 1_000, heartbeatMs: 200, sweep: false, connection: proxy.url })
    await until("the job runs", () => w.seen.runs.length === 1)
    proxy.cut()
    await until("the holder stops the handler", () => w.seen.leaseLost.length === 1)
    const errorsWhenFenced = w.seen.errors.length
    proxy.heal()
    expect(errorsWhenFenced).toBeGreaterThan(0)
  })

  it("partitions: jobs spread over 3 sub-queues are all run by a worker given the same count; stats sum them", async () => {
    const q = await face.open(name(), { partitions: 3 })
    const ids = await q.addBulk([1, 2, 3, 4, 5, 6].map((n) => ({ payload: { n } })))
    const w = await q.worker(() => "ok", { concurrency: 3 })
    await until("all six complete", () => w.seen.completed.length === 6)
    expect([...w.seen.completed].sort()).toEqual([...ids].sort())
    expect(await q.stats()).toMatchObject({ waiting: 0, active: 0, counters: { added: 6, completed: 6 } })
  })

  // the suite's Redis has no replica: WAIT answers 0 once its timeout is up, so every write is "not replicated"
  it("durability: an add not confirmed by a replica in time is refused with NotReplicated, yet written; so is a complete, reported as an error", async () => {
    const q = await face.open(name(), { durability: { replicas: 1, timeoutMs: 100 } })
    const refused = await q.add({ n: 1 }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(refused).toBeInstanceOf(NotReplicated)
    expect(refused).toMatchObject({ operation: "add", replicas: 1, acknowledged: 0, timeoutMs: 100 })
    const [id] = (refused as NotReplicated).jobIds ?? []
    // written on the master all the same: it is there and runs
    expect(await q.stats()).toMatchObject({ waiting: 1, counters: { added: 1 } })
    const w = await q.worker(() => "ok")
    await until("the complete is reported as not replicated", () =>
      w.seen.errors.some((e) => e instanceof NotReplicated && e.operation === "complete"),
    )
    expect(w.seen.runs.map((r) => r.id)).toEqual([id])
    await until("the job is completed", async () => (await q.stats()).counters.completed === 1)
    // an unconfirmed complete is not reported as completed: it could still be lost in a failover
    expect(w.seen.completed).toEqual([])
    expect(await q.stats()).toMatchObject({ waiting: 0, active: 0, dead: 0 })
  })

  it("stats: waiting, delayed, active and the counters as jobs move", async () => {
    const q = await face.open(name())
    await q.addBulk([{ payload: { n: 1 } }, { payload: { n: 2 } }])
    await q.add({ n: 3 }, { delayMs: 3_600_000 })
    const before = await q.stats()
    expect(before).toMatchObject({ queue: q.name, waiting: 2, delayed: 1, active: 0, dead: 0 })
    expect(before.counters.added).toBe(3)
    const w = await q.worker(() => "hang", { concurrency: 2, shutdownGraceMs: 100 })
    await until("both ready jobs run", () => w.seen.runs.length === 2)
    expect(await q.stats()).toMatchObject({ waiting: 0, delayed: 1, active: 2 })
    await w.close()
    expect(await q.stats()).toMatchObject({ waiting: 2, active: 0, counters: { released: 2 } })
  })

  it("bad input is refused naming the field and value, and writes nothing", async () => {
    const q = await face.open(name())
    await q.add({ n: 0 }) // the queue exists: a refused call must leave it as it is
    const before = await dumpQueue(raw, q.name)
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => "accepted",
        (e: { _tag?: string; field?: string; value?: unknown }) => ({ tag: e._tag, field: e.field, value: e.value }),
      )
    expect(await refusal(q.add({ n: 1 }, { delayMs: -1 }))).toEqual({
      tag: "InvalidOptions",
      field: "options.delayMs",
      value: -1,
    })
    expect(await refusal(q.add({ n: 2n } as never))).toMatchObject({ tag: "InvalidPayload", field: "payload" })
    // what JSON would store changed (a Map would be {}) is refused too, naming its path
    const changed = await q.add({ n: 3, tags: new Map([["a", 1]]) } as never).catch((e: Error) => e)
    expect(changed).toMatchObject({ _tag: "InvalidPayload", field: "payload" })
    expect((changed as Error).message).toContain("contains a Map at payload.tags")
    expect(
      await refusal(q.addBulk([{ payload: { n: 1 } }, { payload: { n: 2, at: [undefined] } as never }])),
    ).toMatchObject({ tag: "InvalidPayload", field: "jobs[1].payload" })
    expect(
      await refusal(q.addBulk([{ payload: { n: 1 } }, { payload: { n: 2 }, options: { maxAttempts: 0 } }])),
    ).toEqual({ tag: "InvalidOptions", field: "jobs[1].options.maxAttempts", value: 0 })
    expect(await dumpQueue(raw, q.name)).toEqual(before)
  })

  it("a closed queue refuses every call with QueueClosed", async () => {
    const q = await face.open(name())
    await q.add({ n: 0 })
    await q.close()
    const tagOf = (p: Promise<unknown>) =>
      p.then(
        () => "accepted",
        (e: { _tag?: string; message?: string }) => e._tag ?? e.message,
      )
    expect({
      add: await tagOf(q.add({ n: 1 })),
      addBulk: await tagOf(q.addBulk([{ payload: { n: 1 } }])),
      stats: await tagOf(q.stats()),
      sweep: await tagOf(q.sweep()),
    }).toEqual({ add: "QueueClosed", addBulk: "QueueClosed", stats: "QueueClosed", sweep: "QueueClosed" })
  })

  it("verify: a clean queue has no violation; a corrupted one lists each; bad options are refused naming the field", async () => {
    const q = await face.open(name())
    const [a] = await q.addBulk([{ payload: { n: 1 } }, { payload: { n: 2 } }])
    expect(await q.verify()).toEqual({ violations: 0, jobs: 2, lines: [] })
    const keys = queueKeys(q.name)
    await raw.hset(keys.data, "orphan-1", "{}")
    await raw.rpush(keys.wait, a!)
    const found = await q.verify({ pageSize: 1 })
    expect(found.violations).toBe(2)
    expect(found.lines).toEqual(
      expect.arrayContaining([
        expect.stringContaining("orphan-data orphan-1"),
        expect.stringContaining(`duplicate ${a} in wait and wait`),
      ]),
    )
    expect((await q.verify({ maxLines: 1 })).lines).toHaveLength(1)
    for (const [options, field] of [
      [{ pageSize: 0 }, "pageSize"],
      [{ maxLines: 1.5 }, "maxLines"],
      [null, "options"],
    ] as const) {
      expect(await q.verify(options).catch((e) => e)).toMatchObject({ _tag: "InvalidOptions", field })
    }
  })

  it("retryDead and purgeDead refuse ids that are not an array of job ids, naming ids; nothing is written", async () => {
    const q = await face.open(name())
    await q.add({ n: 1 })
    const before = await dumpQueue(raw, q.name)
    for (const ids of ["abc", [""], [1], null]) {
      expect(await q.retryDead(ids).catch((e) => e)).toMatchObject({ _tag: "InvalidOptions", field: "ids" })
      expect(await q.purgeDead(ids).catch((e) => e)).toMatchObject({ _tag: "InvalidOptions", field: "ids" })
    }
    expect(await dumpQueue(raw, q.name)).toEqual(before)
  })

  it("a closed queue refuses the dead-letter calls and verify with QueueClosed too", async () => {
    const q = await face.open(name())
    await q.add({ n: 0 })
    await q.close()
    const tagOf = (p: Promise<unknown>) =>
      p.then(
        () => "accepted",
        (e: { _tag?: string; message?: string }) => e._tag ?? e.message,
      )
    expect({
      deadJobs: await tagOf(q.deadJobs()),
      retryDead: await tagOf(q.retryDead(["x"])),
      purgeDead: await tagOf(q.purgeDead(["x"])),
      verify: await tagOf(q.verify()),
    }).toEqual({ deadJobs: "QueueClosed", retryDead: "QueueClosed", purgeDead: "QueueClosed", verify: "QueueClosed" })
  })

  it("schedules: a due tick's job <name>@<tick> runs once; bad input writes nothing; a closed queue refuses", async () => {
    const q = await face.open(name())
    const keys = queueKeys(q.name)
    const set = await q.schedule("beat", { every: 60_000 }, { n: 5 })
    expect((await q.schedules()).map((s) => [s.name, s.payload, s.nextRunAt])).toEqual([
      ["beat", { n: 5 }, set.nextRunAt],
    ])
    const before = await dumpQueue(raw, q.name)
    expect(await q.schedule("beat", { every: 5 }, { n: 5 }).catch((e) => e)).toMatchObject({
      _tag: "InvalidOptions",
      field: "when.every",
    })
    expect(await dumpQueue(raw, q.name)).toEqual(before)
    // the tick due now, as a minute without sweeps leaves it
    const due = set.nextRunAt - 60_000
    await raw.zadd(keys.schedAt, "XX", due, "beat")
    const w = await q.worker(() => "ok", { sweep: false })
    await q.sweep()
    await until("the tick's job ran", () => w.seen.completed.length === 1)
    expect(w.seen.runs).toEqual([{ id: `beat@${due}`, attempt: 1, token: w.seen.runs[0]!.token, n: 5 }])
    expect(await q.unschedule("beat")).toBe(true)
    await q.close()
    expect(await q.schedules().catch((e) => e._tag)).toBe("QueueClosed")
  })
})
