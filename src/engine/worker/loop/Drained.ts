/**
 * The worker's `drained` event (BullMQ's worker-side `drained`): the worker had work, and
 * now found nothing to do — its last reserve call found no job ready (the queue looked
 * empty), and nothing of its own is left: no handler running, no lease held (every
 * complete and fail answered), no call landed unstarted. Told once per move to idle, not
 * per empty reserve: it is told again only after the worker has had a job again.
 *
 * Two events can make the worker idle, in either order, so both look: a reserve call that
 * lands short ({@link noteLanded}, the reserve loop), and a run that is over
 * ({@link noteRunOver}, JobEnd.ts: its ack answered, its lease out of the table). A job sent
 * back to the queue ({@link lookAgain}, Settle.ts) keeps it from idle until a reserve looks. A paused
 * worker (WorkerState.ts) reserves nothing, so it is not told drained while paused.
 */
import type { IdleWatch, LoopDeps } from "./LoopDeps.ts"

/** What the `drained` rule reads and writes. */
type DrainedDeps = Pick<LoopDeps, "hooks" | "idle" | "sched" | "state" | "table">

/** Tell `drained` when the worker had work, the queue looked empty, and nothing of its own is left. */
const check = (ctx: DrainedDeps): void => {
  const w = ctx.idle
  if (!w.hadWork || !w.empty || ctx.state !== "running") return
  const s = ctx.sched
  if (s.busy > 0 || s.waiting.length > 0 || s.landed.length > 0 || ctx.table.held.size > 0) return
  w.hadWork = false
  ctx.hooks.drained()
}

/**
 * A reserve call landed: it started `started` jobs; `short`: it found fewer than it asked
 * for; `looks`: {@link IdleWatch.looks} when it was sent. A call sent before a job went back
 * to the queue may have run in Redis before it did: its short answer does not make the
 * worker idle (the next reserve looks).
 */
export const noteLanded = (ctx: DrainedDeps, started: number, short: boolean, looks: number): void => {
  const w = ctx.idle
  if (started > 0) w.hadWork = true
  w.empty = short && looks === w.looks
  check(ctx)
}

/** A run is over (its lease left the table). */
export const noteRunOver = (ctx: DrainedDeps): void => {
  if (ctx.idle.empty) check(ctx)
}

/**
 * What the last reserve saw is stale until the worker reserves again: one of its jobs goes
 * back to the queue (a retry, a snooze, a rate-limit hold), or the worker paused.
 */
export const lookAgain = (ctx: DrainedDeps): void => {
  ctx.idle.empty = false
  ctx.idle.looks++
}
