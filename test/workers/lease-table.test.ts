/**
 * The worker's table of held leases, keyed by fencing token: two leases on one job in
 * one worker (the job was reclaimed and the same worker reserved it again before the
 * older lease ended here) never overwrite each other. The newer reservation ends the
 * older lease at once as lost; the newer one stays heartbeated and fenced after the
 * older one's handler ends.
 */
import { Context, Effect } from "effect"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { LeaseQueue, LeaseWorker } from "../../src/effect.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { leaseToken } from "../support/lease.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { redisNow, until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("lease-table")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})
/** Take the job's lease away exactly as the sweep script does, and put the job at the front of wait. */
const reclaimAsSweep = async (q: string, id: string) => {
  const keys = queueKeys(q)
  await raw
    .multi()
    .zrem(keys.active, id)
    .hdel(keys.holder, id)
    .hincrby(keys.lost, id, 1)
    .hincrby(keys.meta, "lost", 1)
    .rpush(keys.wait, id)
    .zadd(keys.marker, 0, "0")
    .exec()
}

class Jobs extends Context.Service<Jobs, LeaseQueue.Service<{ readonly n: number }>>()("lease-table/Jobs") {}

describe("lease table", () => {
  it("N1: the Effect face: a job reserved again by the same worker interrupts the older holder at once", async () => {
    const q = name()
    const keys = queueKeys(q)
    const events: string[] = []
    let interruptedToken: number | undefined
    const program = Effect.gen(function* () {
      const queue = yield* Jobs
      yield* LeaseWorker.make(
        Jobs,
        (job) =>
          job.attempt === 1
            ? // the first holder runs until it is told its lease is gone
              Effect.never.pipe(
                Effect.onInterrupt(() =>
                  Effect.sync(() => {
                    interruptedToken = job.token
                  }),
                ),
              )
            : Effect.succeed("second"),
        {
          concurrency: 2,
          // a long lease and heartbeat: only the new reservation can tell the worker
          leaseMs: 30_000,
          sweep: false,
          onLeaseLost: (job, reason) => Effect.sync(() => events.push(`lease-lost ${job.token} ${reason}`)),
          onCompleted: (job) => Effect.sync(() => events.push(`completed ${job.token}`)),
        },
      )
      const id = yield* queue.add({ n: 1 }, { maxAttempts: 3 })
      const first = yield* Effect.promise(() =>
        until("the job leased", async () => (await leaseToken(raw, keys, id)) ?? false),
      )
      yield* Effect.promise(() => reclaimAsSweep(q, id))
      yield* Effect.promise(() =>
        until("the older holder interrupted", () => interruptedToken !== undefined, { timeoutMs: 15_000 }),
      )
      yield* Effect.promise(() =>
        until("the second lease completed", () => events.some((e) => e.startsWith("completed"))),
      )
      return { id, first: Number(first) }
    })
    const { first } = await Effect.runPromise(
      Effect.scoped(program).pipe(Effect.provide(LeaseQueue.layer(Jobs, { name: q, connection: redisUrl() }))),
    )
    expect(interruptedToken).toBe(first)
    // tokens only go up (floored by the Redis clock, so not necessarily first + 1)
    expect(events).toHaveLength(2)
    expect(events[0]).toBe(`lease-lost ${first} lease-lost`)
    const second = Number(/^completed (\d+)$/.exec(events[1] ?? "")?.[1])
    expect(second).toBeGreaterThan(first)
    expect(await raw.hgetall(keys.meta)).toMatchObject({ completed: "1", lost: "1" })
    expect(await raw.zcard(keys.active)).toBe(0)
  })

  it("N1: two leases of one job in one worker: the older is aborted, the newer stays heartbeated after the older ends", async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = useQueue<{ n: number }>(q)
    const started = new Map<number, ReturnType<typeof deferred<number>>>([
      [1, deferred<number>()],
      [2, deferred<number>()],
    ])
    const aborted: number[] = []
    const finishFirst = deferred()
    const finishSecond = deferred()
    const worker = useWorker<{ n: number }>(
      q,
      async (job) => {
        job.signal.addEventListener("abort", () => aborted.push(job.token))
        started.get(job.attempt)?.resolve(job.token)
        // both ignore the signal: they end only when the test lets them
        await (job.attempt === 1 ? finishFirst.promise : finishSecond.promise)
        return job.attempt
      },
      // no grace: a lease the heartbeat leaves alone is reclaimed right at its deadline
      { concurrency: 2, leaseMs: 1_500, leaseGraceMs: 0, sweep: { intervalMs: 100 } },
    )
    onCleanup(async () => {
      finishFirst.resolve()
      finishSecond.resolve()
    })
    const lost: string[] = []
    const completed: number[] = []
    worker.on("lease-lost", (job, reason) => lost.push(`${job.token} ${reason}`))
    worker.on("completed", (job) => completed.push(job.token))

    const id = await queue.add({ n: 1 }, { maxAttempts: 5 })
    const t1 = await started.get(1)!.promise
    await reclaimAsSweep(q, id)
    const t2 = await started.get(2)!.promise
    expect(t2).toBeGreaterThan(t1)
    // the older holder is told at once: its lease is surely gone
    await until("the older holder aborted", () => aborted.includes(t1), { timeoutMs: 10_000 })
    expect(lost).toEqual([`${t1} lease-lost`])

    // the older handler ends; that must not drop the newer lease from heartbeats and fencing
    finishFirst.resolve()
    await until("the older handler's slot freed", () => worker.running === 1)
    const deadline = Number(await raw.zscore(keys.active, id))
    await until(
      "Redis time past the newer lease's deadline as it was then",
      async () => (await redisNow(raw)) > deadline + 500,
    )
    expect(await leaseToken(raw, keys, id)).toBe(String(t2))
    expect(Number(await raw.zscore(keys.active, id))).toBeGreaterThan(deadline)
    expect(aborted).toEqual([t1])

    finishSecond.resolve()
    await until("the newer lease completed", () => completed.length > 0)
    expect(completed).toEqual([t2])
    expect(lost).toEqual([`${t1} lease-lost`])
    const stats = await queue.stats()
    expect(stats).toMatchObject({ waiting: 0, active: 0, dead: 0 })
    expect(stats.counters).toMatchObject({ completed: 1, lostLeases: 1 })
  })
})
