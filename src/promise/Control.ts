/**
 * The job-control calls of the Promise face's {@link Queue}: the engine's `JobControlOf`
 * (src/engine/queue/QueueApi.ts) in its Promise form, its types and JSDoc the engine's, its
 * methods installed from the capability's spread table by one adapter (Effect.runPromise,
 * rejecting with the error object as it is). A job-control call declared in the engine is on
 * `Queue` with no line here; only a result the face reshapes is named ({@link RESHAPED}:
 * `getJob`'s payload parsed from JSON). `Queue` is composed of this and its other call groups.
 */
import * as Effect from "effect/Effect"
import type { AnyQueue } from "../engine/partition/Queue.ts"
import { type JobInfo, withJsonPayload } from "../engine/queue/JobCommands.ts"
import { CONTROL_SPREAD } from "../engine/queue/JobControl.ts"
import type { JobControl, JobControlOf, PromiseFace } from "../engine/queue/QueueApi.ts"

/** Job control of a queue; `T` is the payload type, `R` what its handlers return. */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface types the calls installed on the prototype below
// biome-ignore lint/correctness/noUnusedVariables: T and R type the merged interface's calls
export abstract class QueueControl<T, R> {
  /** @internal */
  abstract readonly queue: AnyQueue
}

/** The calls of job control, declared in the engine, as Promises. */
export interface QueueControl<T, R> extends JobControlOf<PromiseFace<T, R>> {}

/** The engine results the face reshapes before resolving (the others resolve as they are). */
const RESHAPED: { readonly [K in keyof JobControl]?: (answer: never) => unknown } = {
  getJob: (info: JobInfo<string> | undefined) => info && withJsonPayload(info),
}

/** Run job-control member `call` of `queue` with `args` as a Promise (a member without arguments takes none). */
const runControl = async (queue: AnyQueue, call: keyof JobControl, args: ReadonlyArray<unknown>): Promise<unknown> => {
  const member = queue.control[call] as Effect.Effect<unknown, unknown> | ((...a: Array<unknown>) => unknown)
  const answer = await Effect.runPromise(
    (typeof member === "function" ? member(...args) : member) as Effect.Effect<unknown, unknown>,
  )
  const reshape = RESHAPED[call] as ((a: unknown) => unknown) | undefined
  return reshape === undefined ? answer : reshape(answer)
}

// one adapter for every call of the capability's table
for (const call of Object.keys(CONTROL_SPREAD) as Array<keyof JobControl>) {
  Object.defineProperty(QueueControl.prototype, call, {
    configurable: true,
    writable: true,
    value(this: QueueControl<unknown, unknown>, ...args: Array<unknown>) {
      return runControl(this.queue, call, args)
    },
  })
}
