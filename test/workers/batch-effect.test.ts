/**
 * Batch workers through the Effect face, against real Redis: the handler gets up to
 * `batch.size` jobs; `job.fail` and `job.complete` are Effects; a failing handler fails
 * every job not yet settled with its own attempt and full cause; a cancelled job of the
 * batch interrupts nothing but its own run, and once every open job was interrupted,
 * the batch's fiber is.
 */
import { expect, it } from "@effect/vitest"
import { Cause, Context, Deferred, Effect } from "effect"
import { describe } from "vitest"
import { LeaseQueue, LeaseWorker } from "../../src/effect.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"

const q = queueNamer("batch-effect")

class Rows extends Context.Service<Rows, LeaseQueue.Service<number>>()("test/BatchRows") {}
const rowsLayer = (name: string) => LeaseQueue.layer(Rows, { name, connection: redisUrl() })
const wait = <A, E>(d: Deferred.Deferred<A, E>) => Deferred.await(d).pipe(Effect.timeout("10 seconds"))

class Bad {
  readonly _tag = "Bad"
  readonly n: number
  constructor(n: number) {
    this.n = n
  }
}

describe("the Effect face, batches", () => {
  const failing = q("fails")
  it.live("fails single jobs with job.fail, completes the rest; each failed job keeps its own attempt and cause", () =>
    Effect.gen(function* () {
      const rows = yield* Rows
      const ids = yield* rows.addBulk([0, 1, 2, 3, 4].map((payload) => ({ payload })))
      const batches: Array<ReadonlyArray<readonly [number, number]>> = []
      const failed: Array<readonly [string, unknown]> = []
      const completed: string[] = []
      yield* LeaseWorker.make(
        Rows,
        (jobs) =>
          Effect.gen(function* () {
            batches.push(jobs.map((j) => [j.payload, j.attempt] as const))
            for (const job of jobs)
              if (job.payload % 2 === 1 && job.attempt === 1) yield* job.fail(new Bad(job.payload))
          }),
        {
          batch: { size: 5, waitMs: 500 },
          backoff: { type: "fixed", delayMs: 10 },
          sweep: { intervalMs: 20 },
          onFailed: (job, cause) => Effect.sync(() => void failed.push([job.id, Cause.squash(cause)])),
          onCompleted: (job) => Effect.sync(() => void completed.push(job.id)),
        },
      )
      yield* Effect.promise(() => until("5 completed", () => completed.length === 5))
      expect(batches[0]).toEqual([0, 1, 2, 3, 4].map((n) => [n, 1]))
      expect(batches.slice(1).flat()).toEqual([
        [1, 2],
        [3, 2],
      ])
      expect(failed.map(([id]) => id).sort()).toEqual([ids[1], ids[3]].sort())
      expect(failed.map(([, e]) => e)).toEqual([new Bad(1), new Bad(3)])
    }).pipe(Effect.provide(rowsLayer(failing))),
  )

  const failingAll = q("fails-all")
  it.live("a failing handler fails every job not yet settled, each with the batch's cause", () =>
    Effect.gen(function* () {
      const rows = yield* Rows
      const ids = yield* rows.addBulk([0, 1, 2].map((payload) => ({ payload, options: { maxAttempts: 1 } })))
      const dead: string[] = []
      const causes: unknown[] = []
      yield* LeaseWorker.make(Rows, (jobs) => Effect.andThen(jobs[0]!.complete(7), Effect.fail(new Bad(-1))), {
        batch: { size: 3, waitMs: 5_000 },
        onFailed: (_job, cause) => Effect.sync(() => void causes.push(Cause.squash(cause))),
        onDead: (job) => Effect.sync(() => void dead.push(job.id)),
      })
      yield* Effect.promise(() => until("2 dead", () => dead.length === 2))
      expect(dead.sort()).toEqual(ids.slice(1).sort())
      expect(causes).toEqual([new Bad(-1), new Bad(-1)])
      expect((yield* rows.stats).counters).toMatchObject({ completed: 1, failed: 2 })
    }).pipe(Effect.provide(rowsLayer(failingAll))),
  )

  const cancelled = q("cancel")
  it.live("a job cancelled mid-batch is reported as cancelled; the batch's fiber is interrupted once all are", () =>
    Effect.gen(function* () {
      const rows = yield* Rows
      const ids = yield* rows.addBulk([0, 1].map((payload) => ({ payload })))
      const running = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      const told: string[] = []
      yield* LeaseWorker.make(
        Rows,
        () =>
          Deferred.succeed(running, undefined).pipe(
            Effect.andThen(Effect.never),
            Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)),
          ),
        {
          batch: { size: 2, waitMs: 5_000 },
          // the cancel is told by a heartbeat: a quick one, on a lease no busy machine can lose
          heartbeatMs: 100,
          onCancelled: (job) => Effect.sync(() => void told.push(job.id)),
        },
      )
      yield* wait(running)
      expect(yield* rows.cancel(ids[0]!)).toBe("active")
      yield* Effect.promise(() => until("the first cancel told", () => told.length === 1))
      expect(yield* Deferred.isDone(interrupted)).toBe(false)
      expect(yield* rows.cancel(ids[1]!)).toBe("active")
      yield* wait(interrupted)
      yield* Effect.promise(() => until("both cancels told", () => told.length === 2))
      expect(told).toEqual(ids)
    }).pipe(Effect.provide(rowsLayer(cancelled))),
  )
})
