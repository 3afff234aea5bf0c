/**
 * The job as a handler receives it (the Promise face's; the Effect face's `Job` adapts it):
 * what it is, its lease's token and signal, and the calls it makes while it runs.
 */

import type { DependencyPage, DependencyPageOptions } from "./Dependencies.ts"

/** A job as a handler receives it. */
export interface Job<A> {
  /** The job id (a ULID, or the `id` it was added with). */
  readonly id: string
  /** The decoded payload. */
  readonly payload: A
  /** The job's name (add's `name` option); undefined for a job added without one. */
  readonly name?: string | undefined
  /** 1 on the first run; +1 after each failure or lost lease (a graceful release costs nothing). */
  readonly attempt: number
  /** The job's maxAttempts. */
  readonly maxAttempts: number
  /** The fencing token of this lease: unique, only goes up. Pass it to downstream writes to fence them. */
  readonly token: number
  /**
   * Aborted when the lease is lost (or self-fenced), the job is cancelled (reason a
   * `JobCancelled`), it runs past its `timeoutMs` (reason a `JobTimedOut`), or the worker
   * shuts down past its grace period.
   */
  readonly signal: AbortSignal
  /**
   * Report how far the job got: any JSON value (≤ 64 KiB of JSON), stored within 250 ms (one
   * write per 250 ms at most, the latest value; the last one before the handler returns is
   * stored before the job settles), shown by `getJob`. Throws `InvalidOptions` (field
   * "progress") for a value with no JSON form; values reported after the lease ended are dropped.
   */
  readonly progress: (value: unknown) => void
  /**
   * Add a line to the job's log (the newest 100 kept, each cut to 1024 characters, dropped with
   * the job), shown by getJob (`logs`) and the job page; resolves once stored (a line after the
   * lease ended is dropped); rejects with InvalidOptions (field "line") or the Redis error.
   */
  readonly log: (line: string) => Promise<void>
  /**
   * A job a schedule made (`queue.schedule`): the tick it was made for, in ms since the
   * epoch (Redis clock); undefined for a job added otherwise.
   */
  readonly scheduledFor?: number | undefined
  /**
   * A page of this parent's children (flows, docs/flows.md), as `queue.getDependencies(job.id,
   * page)`; `R` the children's result type as you declare it (`job.dependencies<Sent>()`):
   * each child's `value` is its result decoded, typed `R` (not checked; default unknown).
   */
  readonly dependencies?: <R = unknown>(page?: DependencyPageOptions) => Promise<DependencyPage<R>>
}
