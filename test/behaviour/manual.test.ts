/**
 * Manual processing (queue.reserve, then complete / fail / extend / release by id and
 * token) on both faces: a Worker's fencing, attempts, dead letters and counters.
 */

import { Effect, Exit, Schema, Scope } from "effect"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { LeaseQueue } from "../../src/effect.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { InvalidOptions, JobCancelled, LeaseLost, Queue } from "../../src/index.ts"
import { onCleanup } from "../support/cleanup.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { faces } from "./faces.ts"

const name = queueNamer("manual")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

describe.each(faces)("$name", (face) => {
  it("reserve leases jobs with their tokens; complete settles them", async () => {
    const q = await face.open(name())
    const a = await q.add({ n: 1 })
    const b = await q.add({ n: 2 })
    const jobs = await q.manual.reserve({ count: 5, leaseMs: 10_000 })
    expect(jobs.map((j) => [j.id, j.payload, j.attempt, j.maxAttempts])).toEqual([
      [a, { n: 1 }, 1, 3],
      [b, { n: 2 }, 1, 3],
    ])
    expect(jobs[0]!.token).toBeGreaterThan(0)
    expect(jobs[1]!.token).toBeGreaterThan(jobs[0]!.token)
    expect(await q.getJob(a)).toMatchObject({ state: "active", lease: { token: jobs[0]!.token } })
    expect(await q.manual.reserve()).toEqual([])
    for (const j of jobs) await q.manual.complete(j.id, j.token, { done: j.payload.n })
    const s = await q.stats()
    expect([s.waiting, s.active, s.counters.completed]).toEqual([0, 0, 2])
  })

  it("a manual complete is retained with its result as the queue's retention says (default: an hour)", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 1 })
    const [job] = await q.manual.reserve()
    await q.manual.complete(id, job!.token, { done: 1 })
    expect(await q.getJob(id)).toMatchObject({ state: "completed", result: { done: 1 } })
    expect(await q.waitFor(id, 5_000)).toMatchObject({ state: "completed", result: { done: 1 } })
  })

  it("a stale token is refused once the lease expired and the sweep handed the job on", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 1 })
    const [first] = await q.manual.reserve({ leaseMs: 50 })
    // the lease runs out on the Redis clock: a sweep reclaims it, the next reserve leases it again
    await until("the sweep reclaims the lease", async () => (await q.sweep()).reclaimed === 1)
    const [second] = await q.manual.reserve({ leaseMs: 10_000 })
    expect([second!.id, second!.attempt]).toEqual([id, 2])
    for (const settle of [
      () => q.manual.complete(id, first!.token),
      () => q.manual.fail(id, first!.token, new Error("late")),
      () => q.manual.extend(id, first!.token, 10_000),
      () => q.manual.release(id, first!.token),
    ]) {
      const e = await settle().catch((x: unknown) => x)
      expect(e).toBeInstanceOf(LeaseLost)
      expect(e).toMatchObject({ jobId: id, token: first!.token })
    }
    // nothing changed (the refused complete and fail are counted in refused): the newer lease holds, and settles
    expect(await q.getJob(id)).toMatchObject({ state: "active", lease: { token: second!.token } })
    const deadline = await q.manual.extend(id, second!.token, 60_000)
    expect(deadline).toBeGreaterThan(second!.deadline)
    await q.manual.complete(id, second!.token)
    expect((await q.stats()).counters).toMatchObject({ completed: 1, lostLeases: 1, refused: 2 })
  })

  it("fail counts an attempt (retry, then dead); release gives the job back without one", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 1 }, { maxAttempts: 2 })
    let [job] = await q.manual.reserve()
    expect(await q.manual.fail(id, job!.token, new Error("first"), { delayMs: 0 })).toBe("retry")
    ;[job] = await q.manual.reserve()
    expect(job!.attempt).toBe(2)
    await q.manual.release(id, job!.token)
    ;[job] = await q.manual.reserve()
    expect(job!.attempt).toBe(2)
    expect(await q.manual.fail(id, job!.token, new Error("second"))).toBe("dead")
    expect(await q.getJob(id)).toMatchObject({ state: "dead", error: { message: "second" } })
    expect((await q.stats()).counters).toMatchObject({ failed: 2, released: 1, dead: 1 })
  })

  it("a cancelled job's settle is refused as cancelled; bad input is refused before anything is written", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 1 })
    const [job] = await q.manual.reserve()
    expect(await q.cancel(id)).toBe("active")
    await expect(q.manual.complete(id, job!.token)).rejects.toBeInstanceOf(JobCancelled)
    await q.add({ n: 2 })
    const before = await dumpQueue(raw, q.name)
    for (const [call, field] of [
      [() => q.manual.reserve({ count: 0 }), "count"],
      [() => q.manual.reserve({ leaseMs: 1 }), "leaseMs"],
      [() => q.manual.reserve({ lease: 5 } as never), "options.lease"],
      [() => q.manual.complete(id, -1), "token"],
      [() => q.manual.complete("", 1), "id"],
      [() => q.manual.fail(id, 1, "x", { retry: "no" } as never), "retry"],
      [() => q.manual.extend(id, 1, 0), "leaseMs"],
    ] as const) {
      const e = await call().catch((x: unknown) => x)
      expect(e, field).toBeInstanceOf(InvalidOptions)
      expect((e as InvalidOptions).field).toBe(field)
    }
    expect(await dumpQueue(raw, q.name)).toEqual(before)
  })

  it("a partitioned queue: reserve takes from the partitions in turn; each job settles in its own", async () => {
    const q = await face.open(name(), { partitions: 3 })
    const ids = await q.addBulk([1, 2, 3, 4, 5, 6].map((n) => ({ payload: { n } })))
    const leased: Array<{ id: string; token: number }> = []
    for (let i = 0; i < 6 && leased.length < 6; i++) leased.push(...(await q.manual.reserve({ count: 6 })))
    expect(leased.map((j) => j.id).sort()).toEqual([...ids].sort())
    const [a, b, ...rest] = leased
    expect(await q.manual.fail(a!.id, a!.token, new Error("x"), { delayMs: 0 })).toBe("retry")
    await q.manual.release(b!.id, b!.token)
    await q.manual.extend(rest[0]!.id, rest[0]!.token, 60_000)
    for (const j of rest) await q.manual.complete(j.id, j.token)
    // settled already: refused in its partition; gone from every partition: refused at once
    await expect(q.manual.release(a!.id, a!.token)).rejects.toBeInstanceOf(LeaseLost)
    await expect(q.manual.complete(rest[0]!.id, rest[0]!.token)).rejects.toBeInstanceOf(LeaseLost)
    const again = [...(await q.manual.reserve({ count: 6 })), ...(await q.manual.reserve({ count: 6 }))]
    expect(again.map((j) => [j.id, j.attempt]).sort()).toEqual(
      [
        [a!.id, 2],
        [b!.id, 1],
      ].sort(),
    )
    const s = await q.stats()
    expect([s.waiting, s.active, s.counters.completed, s.counters.failed, s.counters.released]).toEqual([0, 2, 4, 1, 1])
  })
})

describe("a re-sent manual reserve", () => {
  it("answers the same leases and leases nothing more (Effect face: the same Effect run again)", async () => {
    const q = name()
    const scope = Effect.runSync(Scope.make())
    onCleanup(() => Effect.runPromise(Scope.close(scope, Exit.void)))
    const queue = await Effect.runPromise(
      Scope.provide(scope)(LeaseQueue.make<number>({ name: q, connection: redisUrl() })),
    )
    for (let i = 0; i < 3; i++) await Effect.runPromise(queue.add(i))
    const call = queue.reserve({ count: 2 })
    const first = await Effect.runPromise(call)
    const again = await Effect.runPromise(call)
    expect(again).toEqual(first)
    expect(first.map((j) => j.payload)).toEqual([0, 1])
    expect((await Effect.runPromise(queue.stats)).active).toBe(2)
    // a new call leases the third
    expect((await Effect.runPromise(queue.reserve({ count: 2 }))).map((j) => j.payload)).toEqual([2])
  })

  it("finds its record however many other reserves of the queue ran meanwhile, up to 63 (Promise face's engine call)", async () => {
    const q = name()
    const queue = new Queue<number>(q, { connection: redisUrl() })
    onCleanup(() => queue.close())
    for (let i = 0; i < 3; i++) await queue.add(i)
    const call = queue.queue.manual.reserve({ count: 1 })
    const first = await Effect.runPromise(call)
    for (let i = 0; i < 63; i++) await queue.reserve()
    expect(await Effect.runPromise(call)).toEqual(first)
    expect(await raw.hlen(queueKeys(q).reqs)).toBeLessThanOrEqual(64)
  })
})

describe("a manual reserve on a queue with a Schema", () => {
  it("sends a payload that does not decode to dead (invalid-payload) instead of answering it", async () => {
    const q = name()
    const scope = Effect.runSync(Scope.make())
    onCleanup(() => Effect.runPromise(Scope.close(scope, Exit.void)))
    const typed = await Effect.runPromise(
      Scope.provide(scope)(LeaseQueue.make({ name: q, connection: redisUrl(), schema: Schema.Number })),
    )
    const plain = new Queue<unknown>(q, { connection: redisUrl() })
    onCleanup(() => plain.close())
    const bad = await plain.add("not a number")
    const good = await plain.add(7)
    const jobs = await Effect.runPromise(typed.reserve({ count: 5 }))
    expect(jobs.map((j) => [j.id, j.payload])).toEqual([[good, 7]])
    expect(await plain.getJob(bad)).toMatchObject({ state: "dead", error: { reason: "invalid-payload" } })
    expect((await plain.stats()).counters.failed).toBe(0)
  })
})
