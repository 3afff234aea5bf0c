/**
 * The runs of an isolated worker's pool (Pool.ts): one job's handler, or one call of the
 * batch handler with every job of its batch; each job of a run (a part) settles once, and
 * a run's end settles every part still open.
 */
import type { Job } from "../model/HandlerJob.ts"
import { HandlerCrashed } from "./IsolationErrors.ts"
import type { WireJob } from "./Protocol.ts"

/** One job of a run (a run of one job has one). */
export interface Part {
  readonly job: Job<unknown>
  readonly settle: (ok: boolean, value: unknown) => void
  readonly onAbort: () => void
  open: boolean
}

/** One run on a member (`M`, the pool's): one job's handler, or one call of the batch handler. */
export interface Task<M> {
  readonly n: number
  readonly batch: boolean
  /** Its jobs; at dispatch, only those still open (a part's index is its place here then). */
  parts: Part[]
  /** The run's own end (a batch's `done`). */
  readonly end: (ok: boolean, value: unknown) => void
  ended: boolean
  member?: M | undefined
  stopTimer?: ReturnType<typeof setTimeout> | undefined
}

/** The job as it crosses to the handler's side. */
export const wire = (job: Job<unknown>): WireJob => {
  const { id, payload, attempt, maxAttempts, token, scheduledFor } = job
  return { id, payload, attempt, maxAttempts, token, scheduledFor }
}

/** Settle a part once: its job's outcome, no longer listening to its signal. */
export const closePart = (p: Part, ok: boolean, value: unknown): void => {
  if (!p.open) return
  p.open = false
  p.job.signal.removeEventListener("abort", p.onAbort)
  p.settle(ok, value)
}

/**
 * End a run: every part still open settles (`each` gives a part its own value; a batch
 * that succeeded completes the rest with no result), then the run itself.
 */
export const finish = <M>(t: Task<M>, ok: boolean, value: unknown, each?: (p: Part) => unknown): void => {
  if (t.ended) return
  t.ended = true
  if (t.stopTimer) clearTimeout(t.stopTimer)
  for (const p of t.parts) closePart(p, ok, each ? each(p) : ok && t.batch ? undefined : value)
  t.end(ok, value)
}

/** A run whose member ended while it ran: every open job of it crashed (each with its own id and token). */
export const crashed = <M>(
  t: Task<M>,
  end: { isolation: "thread" | "process"; cause: unknown; code: number | null; signal: string | null },
): void => {
  const how = end.signal ? { signal: end.signal } : { exitCode: end.code ?? undefined }
  const crash = (p: Part) =>
    new HandlerCrashed({ jobId: p.job.id, token: p.job.token, isolation: end.isolation, cause: end.cause, ...how })
  finish(t, false, crash(t.parts.find((p) => p.open) ?? t.parts[0]!), crash)
}
