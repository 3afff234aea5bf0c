/**
 * Slots: a worker runs at most `concurrency` handlers at once. A slot is taken when a
 * job starts (`busy`), spoken for while a reserve call that asks for it is out or has
 * landed unstarted (`asked`), and freed when the job's run ends. The counts live in the
 * loop's scheduling state (Scheduling.ts): a run tells it `SlotTaken` and `SlotFreed`, and
 * the rules here only read it. Freeing a slot wakes the reserve loop if it waits and now
 * has something to do.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { LoopDeps } from "./LoopDeps.ts"
import { prefetchNow } from "./Prefetch.ts"
import { armLinger, lingerEnded, SLOT_FREED, SLOT_TAKEN, tell, WAKE, waitFor } from "./Scheduling.ts"

/**
 * Most reserve calls a worker has out at once: with two, Redis runs one while this
 * process starts the jobs of the other (each asks only for free slots). The reserve
 * script keeps a worker's re-send records by call number mod 4 (lua/reserve.lua,
 * "Re-sends"): keep this below 4, or a re-sent call could find a newer call's record.
 */
export const MAX_RESERVES_IN_FLIGHT = 2

/**
 * With no call out, the ms a freed slot may wait for more to free before its call goes,
 * while the handlers are quick (their measured pace is at most this): a call for one
 * slot made 1-job calls every other time at concurrency 16 and 100 (each script call
 * has a fixed cost in Redis and here). Slow handlers do not wait.
 */
export const LINGER_MS = 2

/** Take a slot for a job that starts (and watch the event loop while handlers run: LoopMonitor.ts). */
export const takeSlot = (ctx: LoopDeps): void => {
  tell(ctx.sched, SLOT_TAKEN)
  ctx.loop.touch()
}

/**
 * Give a job's slot back and wake the reserve loop if it waits and now has something to
 * do (a call to send, a waiting job to start): not once per job while a call is out.
 */
export const freeSlot = (ctx: LoopDeps): void => {
  const s = ctx.sched
  tell(s, SLOT_FREED)
  if (!s.loopWaits) return
  if (canStartWaiting(ctx) || canSend(ctx, s.waitShort) || (!s.lingerArmed && lingering(ctx))) tell(s, WAKE)
}

/**
 * Room for jobs to ask for: slots plus prefetch (Prefetch.ts), less the jobs running,
 * spoken for by a reserve call, or waiting for a slot.
 */
export const freeSlots = (ctx: LoopDeps): number =>
  ctx.settings.concurrency + prefetchNow(ctx) - ctx.sched.busy - ctx.sched.asked - ctx.sched.waiting.length

/**
 * True while the loop waits for more slots to free before its call goes: no call out,
 * jobs running, their handlers quick (pace ≤ {@link LINGER_MS}), some but fewer than half
 * the slots free, and the loop has not yet waited {@link LINGER_MS} since its last call
 * (so a freed slot's next job is never late by more than that).
 */
export const lingering = (ctx: LoopDeps): boolean => {
  const s = ctx.sched
  const pace = s.handlerPaceMs
  if (s.lingerOver || s.inFlight.size > 0 || s.busy === 0 || pace === undefined || pace > LINGER_MS) return false
  const free = freeSlots(ctx)
  return free > 0 && free < Math.ceil(ctx.settings.concurrency / 2)
}

/**
 * True when the loop may send another call now: with none out, for any free slot (after
 * a linger of at most {@link LINGER_MS} while quick handlers run: see {@link lingering});
 * with one out, once half the slots are free (a call worth its round trip). A batch
 * worker's call waits for `batch.size` free slots.
 * While prefetched jobs wait, none: the buffer is refilled once it is empty, by one call
 * for all the room (which carries the completes of the jobs run meanwhile).
 */
export const canSend = (ctx: LoopDeps, short: boolean): boolean => {
  const out = ctx.sched.inFlight.size
  if (short || ctx.sched.waiting.length > 0 || out >= MAX_RESERVES_IN_FLIGHT) return false
  // a flow limit holds the queue back (ReserveLoop.ts `waitLimited`)
  if (ctx.sched.limitedUntil !== undefined) return false
  const free = freeSlots(ctx)
  // a batch worker asks for a whole batch or none: calls for the first slots a batch frees
  // would split the next batch over several calls (and wait out its waitMs); a partition's
  // worker (fewer slots than a batch: PartitionWorkers.ts) asks for all of its slots
  const least = ctx.settings.batch ? Math.min(ctx.settings.batch.size, ctx.settings.concurrency) : 1
  return out === 0 ? free >= least && !lingering(ctx) : free >= Math.max(least, Math.ceil(ctx.settings.concurrency / 2))
}

/** True when a prefetched job waits and a slot is free for it. */
export const canStartWaiting = (ctx: LoopDeps): boolean =>
  ctx.sched.waiting.length > 0 && ctx.sched.busy < ctx.settings.concurrency

/**
 * Wait until a call lands, a slot frees that gives the loop something to do, or the
 * worker stops running; while the loop lingers, at most {@link LINGER_MS} (then `lingerOver`).
 */
export const waitEvent = (ctx: LoopDeps, short: boolean): Effect.Effect<void> => {
  const wait = Effect.callback<void>((resume) => {
    if (ctx.sched.landed.length > 0 || ctx.state !== "running" || canStartWaiting(ctx) || canSend(ctx, short))
      return resume(Effect.void)
    return Effect.sync(waitFor(ctx.sched, short, () => resume(Effect.void)))
  })
  if (short || !lingering(ctx)) return wait
  armLinger(ctx.sched, true)
  return wait.pipe(
    Effect.timeoutOption(LINGER_MS),
    Effect.flatMap((woke) =>
      Effect.sync(() => {
        armLinger(ctx.sched, false)
        if (Option.isNone(woke)) lingerEnded(ctx.sched)
      }),
    ),
  )
}
