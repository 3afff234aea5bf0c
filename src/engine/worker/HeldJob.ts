/**
 * The job a handler receives for a lease this worker holds, in both the fiber path
 * (RunJob.ts) and the plain one (PlainRun.ts).
 */
import * as Effect from "effect/Effect"
import type { Reservation } from "../calls/Commands.ts"
import { scheduledForOf } from "../model/Schedule.ts"
import { readDependencies } from "../queue/Dependencies.ts"
import type { Job } from "../queue/Job.ts"
import type { WorkerContext } from "./Context.ts"
import { type Held, signalOf } from "./Lease.ts"
import { reportProgress } from "./Progress.ts"

/**
 * The job a handler receives, made without a per-job getter closure: `signal` is read
 * through the prototype (its AbortController is made on first read, see `signalOf`).
 */
export class HeldJob<A> implements Job<A> {
  readonly id: string
  readonly payload: A
  readonly attempt: number
  readonly maxAttempts: number
  readonly token: number
  readonly progress: (value: unknown) => void
  readonly #held: Held
  readonly #commands: WorkerContext<A>["commands"]
  constructor(r: Reservation, payload: A, held: Held, ctx: WorkerContext<A>) {
    this.id = r.id
    this.payload = payload
    this.attempt = r.attempt
    this.maxAttempts = r.maxAttempts
    this.token = r.token
    this.#held = held
    this.#commands = ctx.commands
    this.progress = reportProgress(ctx, held)
  }
  get signal(): AbortSignal {
    return signalOf(this.#held)
  }
  /** The tick a schedule made this job for (read from its id `<schedule>@<tick>`), else undefined. */
  get scheduledFor(): number | undefined {
    return scheduledForOf(this.id)
  }
  /** A page of this job's children (flows): see {@link Job.dependencies}. */
  dependencies(page?: { readonly cursor?: string | undefined; readonly count?: number | undefined }) {
    return Effect.runPromise(readDependencies(this.#commands.client, this.#commands.keys, this.id, page))
  }
}
