/**
 * Steering running jobs through the Effect face, against real Redis: `workers`,
 * `job.progress` as an Effect, `timeoutMs` interrupting the handler's fiber (counted as a
 * failure), and a cancel reaching the handler (`onCancelled`).
 */
import { expect, it } from "@effect/vitest"
import { Cause, Context, Deferred, Effect } from "effect"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe } from "vitest"
import { InvalidOptions, JobTimedOut, LeaseQueue, LeaseWorker } from "../../src/effect.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { cancelActive } from "../support/lease.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"

const q = queueNamer("workers-effect")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

class Jobs extends Context.Service<Jobs, LeaseQueue.Service<{ readonly n: number }>>()("test/WorkersJobs") {}
const jobsLayer = (name: string) => LeaseQueue.layer(Jobs, { name, connection: redisUrl() })
/** Wait on a Deferred, failing the test (not hanging it) after 10 s. */
const wait = <A, E>(d: Deferred.Deferred<A, E>) => Deferred.await(d).pipe(Effect.timeout("10 seconds"))
/** Poll Redis until `check` holds. */
const untilRedis = (what: string, check: () => Promise<boolean>) =>
  Effect.promise(() => until(what, check, { timeoutMs: 10_000 }))
const lease = { leaseMs: 1_000, heartbeatMs: 100 } as const

describe("the Effect face", () => {
  const progressQueue = q("progress")
  it.live(
    "workers lists the worker; job.progress is an Effect stored by the next heartbeat, failing on bad input",
    () =>
      Effect.gen(function* () {
        const jobs = yield* Jobs
        const bad = yield* Deferred.make<unknown>()
        const finish = yield* Deferred.make<void>()
        yield* LeaseWorker.make(
          Jobs,
          (job) =>
            Effect.gen(function* () {
              yield* job.progress({ n: job.payload.n, pct: 50 })
              yield* Deferred.succeed(bad, yield* Effect.flip(job.progress(() => 1)))
              yield* Deferred.await(finish)
            }),
          { ...lease, concurrency: 2 },
        )
        const [w] = yield* jobs.workers
        expect(w).toMatchObject({ concurrency: 2, state: "running" })
        const id = yield* jobs.add({ n: 7 })
        const key = queueKeys(progressQueue).progress
        yield* untilRedis("progress", async () => (await raw.hget(key, id)) === '{"n":7,"pct":50}')
        expect(yield* wait(bad)).toBeInstanceOf(InvalidOptions)
        yield* Deferred.succeed(finish, undefined)
      }).pipe(Effect.provide(jobsLayer(progressQueue))),
  )

  it.live(
    "timeoutMs interrupts the handler's fiber; the attempt is a failure with JobTimedOut, then it runs again",
    () =>
      Effect.gen(function* () {
        const jobs = yield* Jobs
        const interrupted = yield* Deferred.make<unknown>()
        const failed = yield* Deferred.make<readonly [unknown, boolean]>()
        const second = yield* Deferred.make<number>()
        yield* LeaseWorker.make(
          Jobs,
          (job) =>
            job.attempt === 1
              ? Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, job.signal.reason)))
              : Deferred.succeed(second, job.attempt),
          {
            ...lease,
            timeoutMs: 300,
            backoff: { type: "fixed", delayMs: 0 },
            onFailed: (_job, cause, willRetry) =>
              Deferred.succeed(failed, [Cause.squash(cause), willRetry] as const).pipe(Effect.asVoid),
          },
        )
        yield* jobs.add({ n: 1 })
        expect(yield* wait(interrupted)).toBeInstanceOf(JobTimedOut)
        const [error, willRetry] = yield* wait(failed)
        expect(error).toBeInstanceOf(JobTimedOut)
        expect(willRetry).toBe(true)
        expect(yield* wait(second)).toBe(2)
        const stats = yield* jobs.stats
        expect(stats.counters).toMatchObject({ failed: 1, lostLeases: 0 })
      }).pipe(Effect.provide(jobsLayer(q("timeout")))),
  )

  const cancelQueue = q("cancel")
  it.live("a cancel reaches the handler: its fiber is interrupted, onCancelled runs, nothing is acked", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      const keys = queueKeys(cancelQueue)
      const started = yield* Deferred.make<void>()
      const cancelled = yield* Deferred.make<string>()
      const worker = yield* LeaseWorker.make(
        Jobs,
        () => Deferred.succeed(started, undefined).pipe(Effect.andThen(Effect.never)),
        { ...lease, onCancelled: (ref) => Deferred.succeed(cancelled, ref.id).pipe(Effect.asVoid) },
      )
      const id = yield* jobs.add({ n: 1 })
      yield* wait(started)
      yield* Effect.promise(async () => {
        await cancelActive(raw, keys, id, Date.now())
      })
      expect(yield* wait(cancelled)).toBe(id)
      yield* worker.close
      const stats = yield* jobs.stats
      expect(stats).toMatchObject({ waiting: 0, active: 0, dead: 0 })
      expect(stats.counters).toMatchObject({ completed: 0, failed: 0, lostLeases: 0 })
    }).pipe(Effect.provide(jobsLayer(cancelQueue))),
  )
})
