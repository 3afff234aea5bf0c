/**
 * Slots: a worker runs at most `concurrency` handlers at once. A slot is taken when a
 * job starts (`busy`), spoken for while a reserve call that asks for it is out or has
 * landed unstarted (`asked`), and freed when the job's fiber ends. Freeing a slot wakes
 * the reserve loop if it waits.
 */
import * as Effect from "effect/Effect"
import type { WorkerContext } from "./Context.ts"
import { prefetchNow } from "./Prefetch.ts"

/**
 * Most reserve calls a worker has out at once: with two, Redis runs one while this
 * process starts the jobs of the other (each asks only for free slots).
 */
export const MAX_RESERVES_IN_FLIGHT = 2

/**
 * With no call out, the ms a freed slot may wait for more to free before its call goes,
 * while the handlers are quick (their measured pace is at most this): a call for one
 * slot made 1-job calls every other time at concurrency 16 and 100 (each script call
 * has a fixed cost in Redis and here). Slow handlers do not wait.
 */
export const LINGER_MS = 2

/** Take a slot for a job that starts. */
export const takeSlot = <A>(ctx: WorkerContext<A>): void => {
  ctx.busy++
}

/** Give a job's slot back and wake the reserve loop if it waits. */
export const freeSlot = <A>(ctx: WorkerContext<A>): void => {
  ctx.busy--
  ctx.wakeLoop()
}

/**
 * Room for jobs to ask for: slots plus prefetch (Prefetch.ts), less the jobs running,
 * spoken for by a reserve call, or waiting for a slot.
 */
export const freeSlots = <A>(ctx: WorkerContext<A>): number =>
  ctx.settings.concurrency + prefetchNow(ctx) - ctx.busy - ctx.asked - ctx.waiting.length

/**
 * Ms the loop still waits for more slots to free before its call goes (0: send now).
 * Only with no call out, jobs running, their handlers quick (pace ≤ {@link LINGER_MS})
 * and fewer than half the slots free; at most {@link LINGER_MS} from the first check,
 * so a freed slot's next job is never late by more than that.
 */
export const lingerMs = <A>(ctx: WorkerContext<A>): number => {
  const pace = ctx.handlerPaceMs
  if (ctx.inFlight.size > 0 || ctx.busy === 0 || pace === undefined || pace > LINGER_MS) return 0
  if (freeSlots(ctx) >= Math.ceil(ctx.settings.concurrency / 2)) return 0
  const now = performance.now()
  if (ctx.lingerUntil === 0) ctx.lingerUntil = now + LINGER_MS
  return Math.max(0, ctx.lingerUntil - now)
}

/**
 * True when the loop may send another call now: with none out, for any free slot (after
 * a linger of at most {@link LINGER_MS} while quick handlers run: see {@link lingerMs});
 * with one out, once half the slots are free (a call worth its round trip).
 * While prefetched jobs wait, none: the buffer is refilled once it is empty, by one call
 * for all the room (which carries the completes of the jobs run meanwhile).
 */
export const canSend = <A>(ctx: WorkerContext<A>, short: boolean): boolean => {
  if (short || ctx.waiting.length > 0 || ctx.inFlight.size >= MAX_RESERVES_IN_FLIGHT) return false
  const free = freeSlots(ctx)
  return ctx.inFlight.size === 0 ? free > 0 && lingerMs(ctx) === 0 : free >= Math.ceil(ctx.settings.concurrency / 2)
}

/** True when a prefetched job waits and a slot is free for it. */
export const canStartWaiting = <A>(ctx: WorkerContext<A>): boolean =>
  ctx.waiting.length > 0 && ctx.busy < ctx.settings.concurrency

/** Wait until a call lands, a slot frees, the linger ends, or the worker stops running. */
export const waitEvent = <A>(ctx: WorkerContext<A>, short: boolean): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    if (ctx.landed.length > 0 || ctx.state !== "running" || canStartWaiting(ctx) || canSend(ctx, short))
      return resume(Effect.void)
    const linger = short ? 0 : lingerMs(ctx)
    const timer = linger > 0 ? setTimeout(() => ctx.wakeLoop(), linger) : undefined
    ctx.ringSlot = () => {
      clearTimeout(timer)
      resume(Effect.void)
    }
    return Effect.sync(() => clearTimeout(timer))
  })
