/**
 * Prefetch: jobs a worker holds beyond `concurrency`, leased but not started yet, so that
 * a freed slot starts the next job at once and one reserve call completes and leases
 * several jobs instead of one (at concurrency 1: one script call per job without it).
 *
 * A prefetched job is in the lease table from the moment its call lands: heartbeated and
 * fenced like a running one. One whose lease ends while it waits (lost, self-fenced) is
 * dropped unstarted (the lease-lost hook has fired). At close the waiting ones are
 * released at once, unstarted, their attempts unchanged.
 *
 * `"auto"` (the default) keeps fairness between workers: it holds only as many jobs as the
 * worker's handlers finish in {@link AUTO_PREFETCH_WAIT_MS} at their measured pace (a
 * moving average of handler durations); none until a first handler has finished, none
 * while handlers are slow. So a job waits in a worker's buffer for about that long at
 * most, and no other worker is kept from a job for longer. It also tops the worker up to
 * {@link AUTO_PREFETCH_UPTO} jobs held in all, no more: what it buys is reserve calls that
 * carry enough jobs to be worth their round trip (at concurrency 16, calls of 16 jobs
 * instead of 8 cut the worker's CPU per job by about a third), and from that concurrency on
 * the freed slots alone make calls that large (so at concurrency 48 or more, "auto"
 * prefetches none).
 */
import type { Reservation } from "../../calls/Commands.ts"
import { leaseTo } from "../lease/LeaseState.ts"
import { prefetchPaused } from "./Fragile.ts"
import type { LoopDeps } from "./LoopDeps.ts"
import { type SchedEvent, takeAllWaiting, tell } from "./Scheduling.ts"

/** "auto": hold as many jobs as handlers finish in this many ms at their measured pace. */
export const AUTO_PREFETCH_WAIT_MS = 2

/** "auto": at most this many jobs held in all (running and waiting), so none from this concurrency on. */
export const AUTO_PREFETCH_UPTO = 48

/** Record how long a handler ran (ms), for "auto" (a moving average, Scheduling.ts). */
export const recordHandlerMs = (ctx: LoopDeps, ms: number): void =>
  tell(ctx.sched, { _tag: "Paced", ms } satisfies SchedEvent)

/** How many jobs the worker may hold beyond `concurrency` now. */
export const prefetchNow = (ctx: LoopDeps): number => {
  const setting = ctx.settings.prefetch ?? 0
  if (setting === 0 || prefetchPaused(ctx)) return 0
  if (setting !== "auto") return setting
  const pace = ctx.sched.handlerPaceMs
  if (pace === undefined) return 0
  const quick = Math.floor((AUTO_PREFETCH_WAIT_MS * ctx.settings.concurrency) / Math.max(pace, 0.001))
  return Math.max(0, Math.min(AUTO_PREFETCH_UPTO - ctx.settings.concurrency, quick))
}

/** Take the waiting jobs out of the buffer (at close): those whose lease is still live are to be released. */
export const takeWaiting = (ctx: LoopDeps): Reservation[] =>
  takeAllWaiting(ctx.sched).flatMap((w) => {
    ctx.table.remove(w.held)
    return w.held.state.phase === "held" && leaseTo(w.held, "release") ? [w.r] : []
  })
