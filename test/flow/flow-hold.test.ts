/**
 * Lifting a RateLimited hold (correctness review G6): `clearHold()` on both faces and on a
 * partitioned queue (every partition), `setRateLimit(null)` lifting it too, and a worker
 * held by it going back to work, and the hold applying to the worker's very next reserve (M1).
 */
import { expect, it } from "@effect/vitest"
import { Context, Effect } from "effect"
import { describe } from "vitest"
import { RateLimited as EffectRateLimited, LeaseQueue, LeaseWorker } from "../../src/effect.ts"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { RateLimited } from "../../src/index.ts"
import { run } from "../support/jobs.ts"
import { queueNamer, redisUrl, sharedClients } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("flow-hold")
const shared = sharedClients()
const DAYS_30 = 30 * 86_400_000

/** Hold queue (or partition) `q` as a handler's RateLimited does: lease one job and fail it in mode "hold". */
const hold = async (q: string, ms = DAYS_30) => {
  const c = makeCommands(shared.client, queueKeys(q))
  const [job] = (await run(c.reserve(1, 30_000, 0))).jobs
  expect(await run(c.fail(job!, { delayMs: ms, error: "", mode: "hold" }))).toBe("retry")
}

describe("lifting a RateLimited hold", () => {
  it("clearHold() lifts a 30-day hold: the queue leases again; a second call answers false", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    await queue.addBulk([{ payload: 1 }, { payload: 2 }])
    await queue.setRateLimit({ max: 100, perMs: 1000 })
    await hold(q)
    expect((await queue.stats()).limits.heldMs).toBeGreaterThan(DAYS_30 - 60_000)
    expect(await queue.reserve({ count: 5 })).toEqual([])
    expect(await queue.clearHold()).toBe(true)
    expect((await queue.stats()).limits.heldMs).toBe(0)
    // the rate limit stays
    expect(await queue.rateLimit()).toEqual({ max: 100, perMs: 1000 })
    expect((await queue.reserve({ count: 5 })).map((j) => j.payload).sort()).toEqual([1, 2])
    expect(await queue.clearHold()).toBe(false)
  })

  it("setRateLimit(null) lifts a hold too", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    await queue.add(1)
    await hold(q)
    expect(await queue.reserve()).toEqual([])
    await queue.setRateLimit(null)
    expect((await queue.reserve()).map((j) => j.payload)).toEqual([1])
  })

  it("a partitioned queue's clearHold() lifts every partition's hold", async () => {
    const q = name()
    const queue = useQueue<number>(q, { partitions: 2 })
    await queue.addBulk(Array.from({ length: 20 }, (_, n) => ({ payload: n })))
    for (const p of [0, 1]) await hold(`${q}~${p}`)
    expect(await queue.reserve({ count: 5 })).toEqual([])
    expect(await queue.clearHold()).toBe(true)
    for (const p of [0, 1]) expect(await shared.raw.hget(`leaseq:{${q}~${p}}:meta`, "heldUntil")).toBeNull()
    expect((await queue.reserve({ count: 5 })).length).toBeGreaterThan(0)
  })

  it("a worker held by its handler's RateLimited (30 days) goes back to work after clearHold()", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const ran: number[] = []
    useWorker<number>(
      q,
      async (job) => {
        ran.push(job.payload)
        if (ran.length === 1) throw new RateLimited({ retryAfterMs: DAYS_30 })
      },
      { concurrency: 1, prefetch: 0, blockTimeoutMs: 500 },
    )
    await queue.add(1)
    await until("the queue is held", async () => (await queue.stats()).counters.rateLimited === 1)
    await queue.add(2)
    expect(await queue.stats()).toMatchObject({ waiting: 2, active: 0, counters: { completed: 0 } })
    expect(await queue.clearHold()).toBe(true)
    await until("both jobs completed", async () => (await queue.stats()).counters.completed === 2)
    expect(ran).toEqual([1, 1, 2])
  })

  it("the reserve that follows a handler's RateLimited leases nothing more: the hold applies at once (M1)", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    await queue.addBulk([{ payload: 1 }, { payload: 2 }])
    const ran: number[] = []
    useWorker<number>(
      q,
      async (job) => {
        ran.push(job.payload)
        throw new RateLimited({ retryAfterMs: 3_600_000 })
      },
      { concurrency: 1, prefetch: 0, blockTimeoutMs: 500 },
    )
    // the worker's reserve after the fail was held back (counted once per call held)
    await until("a reserve was held back", async () => (await queue.stats()).counters.limitedHeld >= 1)
    expect(ran).toEqual([1])
    expect(await queue.stats()).toMatchObject({ waiting: 2, active: 0, counters: { rateLimited: 1 } })
  })
})

class Jobs extends Context.Service<Jobs, LeaseQueue.Service<number>>()("test/HoldJobs") {}

describe("lifting a hold on the Effect face", () => {
  it.live("clearHold lifts a handler's RateLimited hold and the worker goes on", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      const ran: number[] = []
      yield* LeaseWorker.make(
        Jobs,
        (job) =>
          Effect.gen(function* () {
            ran.push(job.payload)
            if (ran.length === 1) return yield* new EffectRateLimited({ retryAfterMs: DAYS_30 })
          }),
        { concurrency: 1, prefetch: 0, blockTimeoutMs: 500 },
      )
      yield* jobs.add(1)
      const counted = (f: (c: { rateLimited: number; completed: number }) => boolean) =>
        Effect.promise(() =>
          until("the counters", () => Effect.runPromise(Effect.map(jobs.stats, (s) => f(s.counters)))),
        )
      yield* counted((c) => c.rateLimited === 1)
      yield* jobs.add(2)
      expect(yield* jobs.stats).toMatchObject({ waiting: 2, active: 0, counters: { completed: 0 } })
      expect(yield* jobs.clearHold).toBe(true)
      expect((yield* jobs.stats).limits.heldMs).toBe(0)
      yield* counted((c) => c.completed === 2)
      expect(ran).toEqual([1, 1, 2])
      expect(yield* jobs.clearHold).toBe(false)
    }).pipe(Effect.provide(LeaseQueue.layer(Jobs, { name: name(), connection: redisUrl() }))),
  )
})
