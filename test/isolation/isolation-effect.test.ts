/**
 * Isolation through the Effect face (issue 32): `LeaseWorker.layer(queue, module,
 * { isolation })` runs the module's default export in threads; a handler that blocks its
 * thread past its lease completes once; a batch module gets its jobs and settles each; a
 * module that does not load fails the layer.
 */
import { expect, it } from "@effect/vitest"
import { Cause, Context, Deferred, Effect, Exit, Layer } from "effect"
import { describe } from "vitest"
import { HandlerModuleFailed, LeaseQueue, LeaseWorker } from "../../src/effect.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"

const q = queueNamer("isolation-effect")

class Jobs extends Context.Service<Jobs, LeaseQueue.Service<{ readonly ms: number }>>()("test/IsolationJobs") {}
class BatchJobs extends Context.Service<BatchJobs, LeaseQueue.Service<{ readonly mode: string; readonly n: number }>>()(
  "test/IsolationBatchJobs",
) {}
const fixture = (file: string) => new URL(`./fixtures/${file}`, import.meta.url)

describe("isolation, Effect face", () => {
  it.live("a handler module in a thread blocks past its lease and completes once", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      const completed: string[] = []
      const lost: string[] = []
      const done = yield* Deferred.make<void>()
      yield* Layer.launch(
        LeaseWorker.layer(Jobs, fixture("spin.ts"), {
          isolation: "thread",
          // blocks for 2½ leases; a lease of 2 s, as the parent starved of CPU by a loaded
          // machine lost a 500 ms one (the parent's heartbeats are what this test is about)
          leaseMs: 2_000,
          onCompleted: (job) =>
            Effect.andThen(
              Effect.sync(() => completed.push(job.id)),
              Deferred.succeed(done, undefined),
            ),
          onLeaseLost: (job) => Effect.sync(() => lost.push(job.id)),
        }),
      ).pipe(Effect.forkScoped)
      const id = yield* jobs.add({ ms: 5_000 })
      yield* Deferred.await(done).pipe(Effect.timeout("30 seconds"))
      expect(completed).toEqual([id])
      expect(lost).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(LeaseQueue.layer(Jobs, { name: q("spin"), connection: redisUrl() }))),
  )

  it.live("a batch module in a process gets the whole batch and completes each job with its own result", () =>
    Effect.gen(function* () {
      const jobs = yield* BatchJobs
      const ids = yield* jobs.addBulk([{ payload: { mode: "double", n: 1 } }, { payload: { mode: "double", n: 3 } }])
      const results = new Map<string, unknown>()
      const done = yield* Deferred.make<void>()
      yield* LeaseWorker.make(BatchJobs, fixture("batch.ts"), {
        isolation: "process",
        batch: { size: 2, waitMs: 5_000 },
        onCompleted: (job, result) =>
          Effect.suspend(() => {
            results.set(job.id, result)
            return results.size === 2 ? Deferred.succeed(done, undefined) : Effect.void
          }).pipe(Effect.asVoid),
      })
      yield* Deferred.await(done).pipe(Effect.timeout("30 seconds"))
      expect(results.get(ids[0]!)).toEqual({ doubled: 2, size: 2 })
      expect(results.get(ids[1]!)).toEqual({ doubled: 6, size: 2 })
    }).pipe(Effect.scoped, Effect.provide(LeaseQueue.layer(BatchJobs, { name: q("batch"), connection: redisUrl() }))),
  )

  it.live("a module that does not load fails the worker's start with HandlerModuleFailed", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        LeaseWorker.make(Jobs, fixture("load-fails.ts"), { isolation: "thread" }).pipe(Effect.scoped),
      )
      expect(Exit.isFailure(exit) && Cause.squash(exit.cause)).toBeInstanceOf(HandlerModuleFailed)
    }).pipe(Effect.provide(LeaseQueue.layer(Jobs, { name: q("load"), connection: redisUrl() }))),
  )
})
