/**
 * A job as the Effect face shows it to a handler and the hooks: the engine's job with
 * `progress`, `log` and `dependencies` as Effects, one view per job.
 */
import { Effect } from "effect"
import type { ScriptFailure } from "../engine/calls/Commands.ts"
import type { DependencyPage, DependencyPageOptions } from "../engine/model/Dependencies.ts"
import type { InvalidOptions } from "../engine/model/Errors.ts"
import type { Job as EngineJob } from "../engine/queue/Job.ts"
import { logEffectOf } from "../engine/worker/run/HeldJob.ts"

/**
 * A job as an Effect handler (and the hooks) see it: id, payload, attempt, maxAttempts,
 * token, signal as for the Promise face; `progress` is an Effect.
 */
export interface Job<A> extends Omit<EngineJob<A>, "progress" | "log" | "dependencies"> {
  /**
   * Report how far the job got: any JSON value (at most 64 KiB of JSON), stored within
   * 250 ms (values set meanwhile coalesced to the latest; the last one set before the handler
   * ends is stored before the job is settled), where `getJob` shows it. Fails
   * with `InvalidOptions` (field "progress") for a value with no JSON form.
   */
  readonly progress: (value: unknown) => Effect.Effect<void, InvalidOptions>
  /** Add a line to the job's log, as the Promise face's `job.log` (fails with InvalidOptions or the Redis error). */
  readonly log: (line: string) => Effect.Effect<void, InvalidOptions | ScriptFailure>
  /** A page of this parent's children (flows), as the Promise face's `job.dependencies<R>()`: `R` their result type as declared. */
  readonly dependencies: <R = unknown>(
    page?: DependencyPageOptions,
  ) => Effect.Effect<DependencyPage<R>, InvalidOptions | ScriptFailure>
}

/** The Effect face's view of an engine job (one per job: hooks and handler see the same object). */
const effectJobs = new WeakMap<EngineJob<unknown>, Job<unknown>>()
export const asEffectJob = <A>(job: EngineJob<A>): Job<A> => {
  const known = effectJobs.get(job as EngineJob<unknown>)
  if (known) return known as Job<A>
  const made: Job<A> = {
    id: job.id,
    payload: job.payload,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    token: job.token,
    get signal() {
      return job.signal
    },
    scheduledFor: job.scheduledFor,
    name: job.name,
    progress: (value) => Effect.try({ try: () => job.progress(value), catch: (e) => e as InvalidOptions }),
    log: (line) => logEffectOf(job, line),
    dependencies: <R>(page?: DependencyPageOptions) =>
      Effect.tryPromise({
        try: () => (job.dependencies ? job.dependencies<R>(page) : Promise.reject(new Error("not a held job"))),
        catch: (e) => e as InvalidOptions | ScriptFailure,
      }),
  }
  effectJobs.set(job as EngineJob<unknown>, made as Job<unknown>)
  return made
}
