/**
 * Fragile jobs and prefetch. A prefetched job is leased but not started: if its worker dies
 * (killed by the job it runs, say), the job's lease expires and the sweep counts a lost
 * lease against it, an attempt it never ran. A job with attempts to spare pays one attempt
 * and runs later; a *fragile* job — on its last attempt, or one that already lost a lease
 * or failed (so possibly the job that kills workers) — could go to dead without ever
 * running, or take its neighbours' attempts with it.
 *
 * So a worker never holds a fragile job unstarted, never holds jobs unstarted beside a
 * fragile one, and does not start a suspect (it lost a lease or failed before) while
 * another of its reserve calls is out (that call's jobs would be leased to it unstarted if
 * the suspect killed it), nor, to run alone, while one of its completes or fails is
 * unanswered (the job that ran would lose its lease and run again). Of a landed call, the jobs it would hold from the first fragile
 * one on (or all of them, when a job it starts now is fragile) are released at once — unstarted,
 * attempts unchanged, back at the head of the queue — and the worker asks for no prefetch
 * while it runs a fragile job and for {@link FRAGILE_PAUSE_MS} after one last landed (a
 * queue of `maxAttempts: 1` jobs, all fragile, is then served without prefetch and
 * without releases).
 */
import type { Reservation } from "../../calls/Commands.ts"
import { monotonicNow } from "../lease/LeaseTable.ts"
import type { LoopDeps } from "./LoopDeps.ts"
import { noteFragile } from "./Scheduling.ts"

/** What the fragile rules read: the scheduling state and the lease table. */
export type FragileDeps = Pick<LoopDeps, "sched" | "table">

/** After a fragile job landed, the worker asks for no prefetch for this long (ms). */
export const FRAGILE_PAUSE_MS = 1_000

/** It lost a lease or failed before (attempt > 1): maybe the job that kills its workers. */
export const isSuspect = (r: Reservation): boolean => r.attempt > 1

/** A suspect, or on its last attempt: one more lost lease could send it to dead. */
export const isFragile = (r: Reservation): boolean => isSuspect(r) || r.attempt >= r.maxAttempts

/**
 * True while the worker asks for no prefetch: a fragile job landed within
 * {@link FRAGILE_PAUSE_MS}, or one it holds is still live (running). A worker that never
 * saw a fragile job checks nothing; once none is left, the reserve loop notes it
 * (ReserveLoop.ts) and it stops checking.
 */
export const prefetchPaused = (ctx: FragileDeps): boolean => {
  const at = ctx.sched.fragileAt
  if (at === undefined) return false
  if (monotonicNow() - at < FRAGILE_PAUSE_MS) return true
  for (const h of ctx.table.held.values()) {
    if (h.state.ended === undefined && (h.attempt > 1 || h.attempt >= h.maxAttempts)) return true
  }
  return false
}

/**
 * A complete or fail of this worker is out, unanswered (its lease settling), and no lease
 * is held (nothing runs or waits): a suspect started now would run alone. Beside a running
 * job it waits for nothing: that job's lease is at stake anyway, and new acks keep coming.
 * The fail of a job that landed again (`landed`: their ids) is not at stake: Redis ran it,
 * or the job could not have been leased again.
 */
const unansweredAlone = (ctx: FragileDeps, landed: ReadonlySet<string>): boolean => {
  let settling = false
  for (const h of ctx.table.held.values()) {
    if (h.state.phase === "held") return false
    if (h.state.phase === "settling" && !landed.has(h.id)) settling = true
  }
  return settling
}

/** A landed call's jobs, split: those to start now, those to hold (prefetched), those to give back. */
export interface Placed<S> {
  readonly start: ReadonlyArray<S>
  readonly hold: ReadonlyArray<S>
  readonly release: ReadonlyArray<S>
}

/**
 * Split the jobs of a landed call, in order: the first `free` start now, the rest are held,
 * except that none is held from the first fragile one on, nor at all when one that starts
 * is fragile, and that a suspect (one that lost a lease or failed before) does not start
 * while another reserve call is out, nor alone while an ack is (see the top of this file). Notes when a fragile job landed.
 */
export const place = <S extends { readonly r: Reservation }>(
  ctx: FragileDeps,
  jobs: ReadonlyArray<S>,
  free: number,
): Placed<S> => {
  let start = jobs.slice(0, Math.max(0, free))
  const rest = jobs.slice(start.length)
  // while another call is out, a suspect does not start: that call's jobs would be leased
  // to this worker, unstarted, if the job killed it; nor, when it would run alone, while a
  // complete or fail of this worker is unanswered: a job that ran would lose its lease and
  // run again. Given back, it comes again in a call of its own (prefetch pauses, so one call
  // at a time asks only for free slots; with nothing running no new ack comes meanwhile)
  const wait =
    start.some((s) => isSuspect(s.r)) &&
    (ctx.sched.inFlight.size > 0 || unansweredAlone(ctx, new Set(start.map((s) => s.r.id))))
  const deferred = wait ? start.filter((s) => isSuspect(s.r)) : []
  if (deferred.length > 0) start = start.filter((s) => !isSuspect(s.r))
  const fragileStarts = start.some((s) => isFragile(s.r))
  const firstFragile = rest.findIndex((s) => isFragile(s.r))
  if (deferred.length > 0 || fragileStarts || firstFragile >= 0) noteFragile(ctx.sched, monotonicNow())
  const cut = fragileStarts ? 0 : firstFragile >= 0 ? firstFragile : rest.length
  return { start, hold: rest.slice(0, cut), release: [...deferred, ...rest.slice(cut)] }
}
