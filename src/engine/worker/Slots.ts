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
 * True when the loop may send another call now: with none out, for any free slot (no
 * added latency); with one out, once half the slots are free (a call worth its round trip).
 * While prefetched jobs wait, none: the buffer is refilled once it is empty, by one call
 * for all the room (which carries the completes of the jobs run meanwhile).
 */
export const canSend = <A>(ctx: WorkerContext<A>, short: boolean): boolean => {
  if (short || ctx.waiting.length > 0 || ctx.inFlight.size >= MAX_RESERVES_IN_FLIGHT) return false
  const free = freeSlots(ctx)
  return ctx.inFlight.size === 0 ? free > 0 : free >= Math.ceil(ctx.settings.concurrency / 2)
}

/** True when a prefetched job waits and a slot is free for it. */
export const canStartWaiting = <A>(ctx: WorkerContext<A>): boolean =>
  ctx.waiting.length > 0 && ctx.busy < ctx.settings.concurrency

/** Wait until a call lands, a slot frees, or the worker stops running. */
export const waitEvent = <A>(ctx: WorkerContext<A>, short: boolean): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    if (ctx.landed.length > 0 || ctx.state !== "running" || canStartWaiting(ctx) || canSend(ctx, short))
      resume(Effect.void)
    else ctx.ringSlot = () => resume(Effect.void)
  })
