/**
 * Flow control through the Effect face, against real Redis: the queue service's
 * setRateLimit / rateLimit / setConcurrency / concurrency, and a handler that fails with
 * `Snooze` or `RateLimited` (the same classes as the Promise face's) spending no attempt.
 */
import { expect, it } from "@effect/vitest"
import { Context, Deferred, Effect } from "effect"
import { describe } from "vitest"
import { InvalidOptions, LeaseQueue, LeaseWorker, RateLimited, Snooze } from "../../src/effect.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"

const q = queueNamer("flow-effect")

class Jobs extends Context.Service<Jobs, LeaseQueue.Service<{ readonly n: number }>>()("test/FlowJobs") {}
const jobsLayer = (name: string) => LeaseQueue.layer(Jobs, { name, connection: redisUrl() })

describe("flow control on the Effect face", () => {
  it.live("sets, reads and clears the limits; bad input fails with InvalidOptions naming the field", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      yield* jobs.setRateLimit({ max: 10, perMs: 1000 })
      yield* jobs.setConcurrency(3)
      expect(yield* jobs.rateLimit).toEqual({ max: 10, perMs: 1000 })
      expect(yield* jobs.concurrency).toBe(3)
      const bad = yield* Effect.flip(jobs.setRateLimit({ max: 0, perMs: 1000 }))
      expect(bad).toBeInstanceOf(InvalidOptions)
      expect((bad as InvalidOptions).field).toBe("max")
      expect(yield* jobs.rateLimit).toEqual({ max: 10, perMs: 1000 })
      yield* jobs.setRateLimit(null)
      yield* jobs.setConcurrency(null)
      expect(yield* jobs.rateLimit).toBeNull()
      expect(yield* jobs.concurrency).toBeNull()
    }).pipe(Effect.provide(jobsLayer(q("limits")))),
  )

  it.live("a handler failing with Snooze, then RateLimited, then succeeding: three runs, all attempt 1", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      const attempts: number[] = []
      const done = yield* Deferred.make<void>()
      yield* LeaseWorker.make(Jobs, (job) =>
        Effect.gen(function* () {
          attempts.push(job.attempt)
          if (attempts.length === 1) return yield* new Snooze({ delayMs: 20 })
          if (attempts.length === 2) return yield* new RateLimited({ retryAfterMs: 20 })
          yield* Deferred.succeed(done, undefined)
        }),
      )
      yield* jobs.add({ n: 1 }, { maxAttempts: 1 })
      yield* Deferred.await(done).pipe(Effect.timeout("10 seconds"))
      expect(attempts).toEqual([1, 1, 1])
      const stats = yield* jobs.stats
      expect(stats.counters).toMatchObject({ snoozed: 1, rateLimited: 1, failed: 0, dead: 0 })
    }).pipe(Effect.provide(jobsLayer(q("errors")))),
  )
})
