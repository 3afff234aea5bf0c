/**
 * The Effect face of batches (the `batch` worker option): the handler gets `jobs`, an
 * array of {@link BatchJob}s, runs in a fiber of its own per batch, and settles the jobs
 * (see src/engine/worker/Batch.ts). Each job's run waits for its outcome; a run
 * interrupted (its lease lost, cancelled, timed out, shut down past the grace) waits for
 * its batch to end, and the batch's fiber is interrupted once every open job of it was.
 */
import { Cause, type Context, Effect, Exit, Fiber, type Scope } from "effect"
import type { Job as EngineJob } from "../engine/queue/Job.ts"
import { type BatchEntry, type BatchRun, makeBatchCollector } from "../engine/worker/Batch.ts"
import type { BatchSettings } from "../engine/worker/WorkerOptions.ts"

/**
 * A job of a batch: a `Job` (its own id, payload, attempt, token and signal) that the
 * batch handler may settle on its own. Each job's outcome is settled once, by the first of:
 * its `complete` or `fail`, the handler succeeding (completes the rest, result undefined)
 * or failing (fails the rest with that cause, each spending its own attempt).
 */
export type BatchJob<J, Out, E> = J & {
  /** Complete this job now (its slot is freed at once), with `result` kept as a job's handler result is. */
  readonly complete: (result?: Out) => Effect.Effect<void>
  /** Fail this job now with `error`: retried with backoff, or dead when its attempts are used up. */
  readonly fail: (error: E) => Effect.Effect<void>
}

/**
 * The per-job handler that gathers jobs into batches for `handler` (run with `context`),
 * and `close`, for the worker's close (what is gathered is handed at once). `asJob` is the
 * face's job of an engine job; `causes` receives each failed job's full cause.
 */
export const batchRunner = <A, J extends object, Out, E, R>(
  handler: (jobs: ReadonlyArray<BatchJob<J, Out, E>>) => Effect.Effect<unknown, E, R>,
  settings: BatchSettings,
  context: Context.Context<Exclude<R, Scope.Scope>>,
  asJob: (job: EngineJob<A>) => J,
  causes: WeakMap<J, Cause.Cause<E>>,
) => {
  const batchJob = (entry: BatchEntry<A>): BatchJob<J, Out, E> => {
    const job = asJob(entry.job)
    return Object.assign(Object.create(job) as J, {
      complete: (result?: Out) => Effect.sync(() => entry.complete(result)),
      fail: (error: E) =>
        Effect.sync(() => {
          causes.set(job, Cause.fail(error))
          entry.fail(error)
        }),
    })
  }
  const collector = makeBatchCollector<A>(settings, (entries): BatchRun => {
    const jobs = entries.map(batchJob)
    const run = Effect.suspend(() => handler(jobs)).pipe(Effect.scoped, Effect.provideContext(context))
    const fiber = Effect.runFork(run as Effect.Effect<unknown, E>)
    const done = Effect.runPromise(Fiber.await(fiber)).then((exit) => {
      if (Exit.isSuccess(exit)) return exit.value
      for (const e of entries) {
        const job = asJob(e.job)
        if (!causes.has(job)) causes.set(job, exit.cause)
      }
      throw Cause.squash(exit.cause)
    })
    return { done, interrupt: () => Effect.runFork(Fiber.interrupt(fiber)) }
  })
  const run = (job: EngineJob<A>): Effect.Effect<unknown, unknown> =>
    Effect.callback<unknown, unknown>((resume) => {
      const entry = collector.take(job)
      entry.outcome.then(
        (v) => resume(Effect.succeed(v)),
        (e) => resume(Effect.fail(e)),
      )
      return Effect.promise(() => collector.abandon(entry))
    })
  return { run, close: collector.close }
}
