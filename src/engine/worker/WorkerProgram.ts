/**
 * What a face hands the worker besides its settings: how to decode and run a job, and the
 * hooks to tell. The run of a job (run/) reads it; the worker (Worker.ts) is started with it.
 */
import type * as Effect from "effect/Effect"
import type { InvalidPayload } from "../model/Errors.ts"
import type { Job } from "../model/HandlerJob.ts"
import type { WorkerHooks } from "./WorkerHooks.ts"

/** What the engine needs besides settings: how to decode and run a job. */
export interface WorkerProgram<A> {
  readonly decode: (text: string) => Effect.Effect<A, InvalidPayload>
  readonly handler: (job: Job<A>) => Effect.Effect<unknown, unknown>
  readonly hooks: WorkerHooks<A>
  /** How to serialise a handler's result when completed jobs are retained. */
  readonly encodeResult?: (result: unknown) => string
  /**
   * The same decode and handler as plain functions, when the face has them (the Promise
   * face): a job with nothing to trace and no timeout then runs without a fiber (PlainRun.ts).
   */
  readonly plain?: PlainProgram<A>
}

/** How the Promise face runs a job without Effects: decode (throws on a bad payload) and call the handler. */
export interface PlainProgram<A> {
  readonly decode: (text: string) => A
  readonly run: (job: Job<A>) => unknown
}
