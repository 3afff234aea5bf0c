/**
 * The Promise face's `byName`: one handler per job name, each job typed by its name's payload.
 */
import { handlerFor, UnknownJobName } from "../engine/queue/ByName.ts"
import type { Job } from "../engine/queue/Job.ts"

export { UnknownJobName } from "../engine/queue/ByName.ts"

/** A job of name `K` of the names → payloads map `M`: its payload typed `M[K]`, its name `K`. */
export type NamedJob<M, K extends keyof M & string = keyof M & string> = {
  readonly [N in K]: Omit<Job<M[N]>, "name"> & { readonly name: N }
}[K]

/**
 * One handler that runs `handlers[job.name]`, with the job typed by its name's payload:
 * `new Worker<Jobs[keyof Jobs]>(q, byName<Jobs>()({ email: (job) => send(job.payload.to), … }))`.
 * A job whose name has no handler (or that has none) fails with {@link UnknownJobName}.
 * The map's types are the producer's promise: add each job with the name of its payload type.
 */
export const byName =
  <M>() =>
  <R>(handlers: { readonly [K in keyof M & string]: (job: NamedJob<M, K>) => Promise<R> | R }) =>
  (job: Job<M[keyof M]>): Promise<R> | R => {
    const handler = handlerFor(handlers as Record<string, (job: unknown) => Promise<R> | R>, job)
    if (handler instanceof UnknownJobName) throw handler
    return handler(job)
  }
