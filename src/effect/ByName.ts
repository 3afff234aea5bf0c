/**
 * The Effect face's `byName`: one handler per job name, each job typed by its name's payload.
 */
import * as Effect from "effect/Effect"
import { handlerFor, UnknownJobName } from "../engine/queue/ByName.ts"
import type { Job } from "./EffectJob.ts"

export { UnknownJobName } from "../engine/queue/ByName.ts"

/** A job of name `K` of the names → payloads map `M`: its payload typed `M[K]`, its name `K`. */
export type NamedJob<M, K extends keyof M & string = keyof M & string> = {
  readonly [N in K]: Omit<Job<M[N]>, "name"> & { readonly name: N }
}[K]

/**
 * One Effect handler that runs `handlers[job.name]`, with the job typed by its name's payload:
 * `LeaseWorker.layer(Jobs, byName<Jobs>()({ email: (job) => send(job.payload.to), … }))`. A job
 * whose name has no handler (or that has none) fails with {@link UnknownJobName}.
 */
export const byName =
  <M>() =>
  <Out, E, R>(
    handlers: {
      readonly [K in keyof M & string]: (job: NamedJob<M, K>) => Effect.Effect<Out, E, R>
    },
  ) =>
  (job: Job<M[keyof M]>): Effect.Effect<Out, E | UnknownJobName, R> => {
    const handler = handlerFor(handlers as Record<string, (job: unknown) => Effect.Effect<Out, E, R>>, job)
    return handler instanceof UnknownJobName ? Effect.fail(handler) : handler(job)
  }
