/**
 * The job a handler receives for a lease this worker holds, in both the fiber path
 * (RunJob.ts) and the plain one (PlainRun.ts).
 */
import * as Effect from "effect/Effect"
import type { Reservation, ScriptFailure } from "../../calls/Commands.ts"
import { readDependencies } from "../../calls/DependencyPage.ts"
import { splitPayload } from "../../model/Carrier.ts"
import type { DependencyPage } from "../../model/Dependencies.ts"
import type { InvalidOptions } from "../../model/Errors.ts"
import type { Job } from "../../model/HandlerJob.ts"
import { scheduledForOf } from "../../model/Schedule.ts"
import { type Held, signalOf } from "../lease/LeaseTable.ts"
import { logLine } from "./JobLog.ts"
import { type ProgressDeps, reportProgress } from "./Progress.ts"

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
  readonly #stored: string
  readonly #ctx: ProgressDeps
  constructor(r: Reservation, payload: A, held: Held, ctx: ProgressDeps) {
    this.id = r.id
    this.payload = payload
    this.attempt = r.attempt
    this.maxAttempts = r.maxAttempts
    this.token = r.token
    this.#held = held
    this.#stored = r.payload
    this.#ctx = ctx
    this.progress = reportProgress(ctx, held)
  }
  get signal(): AbortSignal {
    return signalOf(this.#held)
  }
  /** Add a line to the job's log (see {@link Job.log}), as an Effect (the Effect face's `job.log`). */
  logEffect(line: unknown) {
    return logLine(this.#ctx.commands, { id: this.id, token: this.token }, line)
  }
  log(line: string): Promise<void> {
    return Effect.runPromise(this.logEffect(line))
  }
  /** The job's name (add's `name` option), read from the stored payload's prefix; undefined without one. */
  get name(): string | undefined {
    return this.#stored.charCodeAt(0) === 126 /* ~ */ ? splitPayload(this.#stored).name : undefined
  }
  /** The tick a schedule made this job for (read from its id `<schedule>@<tick>`), else undefined. */
  get scheduledFor(): number | undefined {
    return scheduledForOf(this.id)
  }
  /** A page of this job's children (flows): see {@link Job.dependencies}. */
  dependencies<R = unknown>(page?: {
    readonly cursor?: string | undefined
    readonly count?: number | undefined
  }): Promise<DependencyPage<R>> {
    return Effect.runPromise(
      readDependencies(this.#ctx.commands.client, this.#ctx.commands.keys, this.id, page),
    ) as Promise<DependencyPage<R>>
  }
}

/** `job.log(line)` as an Effect: the held job's own call, else its Promise (a job made elsewhere). */
export const logEffectOf = <A>(job: Job<A>, line: unknown): Effect.Effect<void, InvalidOptions | ScriptFailure> =>
  job instanceof HeldJob
    ? job.logEffect(line)
    : Effect.tryPromise({ try: () => job.log(line as string), catch: (e) => e as InvalidOptions | ScriptFailure })
