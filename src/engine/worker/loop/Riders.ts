/**
 * Riders: a job that finishes while the reserve loop is about to send a reserve call
 * (or waits for the slot the job frees) has its complete carried by that call, so one
 * script call (and one write) completes it and leases its successor. A rider whose
 * reserve fails, or never goes (the loop blocks, sleeps or waits for a slot), is sent
 * on its own by its job's fiber, until answered (see Acks.ts).
 */
import * as Effect from "effect/Effect"
import { type Delivery, deliver, untilStopped } from "../lease/Acks.ts"
import type { Held } from "../lease/LeaseTable.ts"
import type { LoopDeps } from "./LoopDeps.ts"
import type { Finished, RideAnswer, Rider } from "./Scheduling.ts"
import { FLUSH_RIDERS, type SchedEvent, STAND_DOWN, tell } from "./Scheduling.ts"
import { freeSlots } from "./Slots.ts"

export const makeRider = (item: Finished): Rider => {
  let answered: RideAnswer | undefined
  let listener: ((a: RideAnswer) => void) | undefined
  return {
    item,
    answer: (a) => {
      if (answered !== undefined) return
      answered = a
      const f = listener
      listener = undefined
      f?.(a)
    },
    listen: (f) => {
      if (answered !== undefined) f(answered)
      else listener = f
      return () => {
        listener = undefined
      }
    },
  }
}

/** Send a complete on its own, again and again until it is answered (see Acks.ts). */
export const sendAlone = (ctx: LoopDeps, item: Finished, held: Held, uncertain: boolean) =>
  deliver<boolean>((done) => ctx.completer.offer(item, done), {
    held,
    stop: ctx.stopAcks,
    onError: (e) => ctx.hooks.error?.(e),
    uncertain,
  })

/**
 * True when a finished job's complete rides the next reserve call: ride-along is on, the
 * worker runs, and the reserve loop waits for a slot or will send its next call without
 * waiting (`reserving`: a call is in flight or about to go), and no flow limit holds it back
 * past the slot the job frees, and the queue has no fan-in peer (flows: a complete alone carries
 * the parent queue's keys and releases the parent in its script, calls/FanIn.ts; a reserve
 * would leave an outbox note). Otherwise it goes on its own.
 */
export const ridesNext = (ctx: LoopDeps): boolean =>
  ctx.settings.rideAlong !== false &&
  (ctx.sched.loopWaits || ctx.sched.reserving) &&
  ctx.state === "running" &&
  ctx.commands.peer.current() === undefined &&
  // held back by a flow limit, no call follows a freed slot (but the concurrency cap's: see Scheduling.ts)
  (ctx.sched.limitedUntil === undefined || ctx.sched.limitEndsOnSlot) &&
  !batchHeldBack(ctx)

/**
 * A batch worker's loop sends no call until a whole batch of slots is free (Slots.ts
 * `canSend`): a complete that frees one slot of too few would wait for its batch's others,
 * which may run for long (a job of the batch still running, or stuck).
 */
const batchHeldBack = (ctx: LoopDeps): boolean => {
  const batch = ctx.settings.batch
  if (batch === undefined || ctx.sched.reserving) return false
  return freeSlots(ctx) + 1 < Math.min(batch.size, ctx.settings.concurrency)
}

/** A rider's answer (or "stopped": close stopped waiting) as a delivery, or "resend": it must go on its own. */
export const rideDelivery = (
  answer: RideAnswer | "stopped",
): Delivery<boolean> | { readonly _tag: "resend"; readonly uncertain: boolean } => {
  if (answer === "stopped") return { _tag: "undelivered", reason: "stopped", uncertain: true }
  if (typeof answer === "boolean") return { _tag: "answered", value: answer, uncertain: false }
  return { _tag: "resend", uncertain: answer.uncertain }
}

/** Queue `item` as a rider of the next reserve call (queued first, then the slot is freed: the call it triggers carries it). */
export const ride = (ctx: LoopDeps, item: Finished, free: () => void): Rider => {
  const rider = makeRider(item)
  tell(ctx.sched, { _tag: "Rider", rider } satisfies SchedEvent)
  free()
  return rider
}

/**
 * Complete a finished job and free its slot: riding the next reserve call when
 * {@link ridesNext}, else on its own. A rider whose reserve fails (or never goes: the loop
 * blocks, sleeps or waits for a slot) is sent on its own.
 */
export const complete = (
  ctx: LoopDeps,
  item: Finished,
  held: Held,
  free: () => void,
): Effect.Effect<Delivery<boolean>> =>
  Effect.suspend(() => {
    if (!ridesNext(ctx)) {
      free()
      return sendAlone(ctx, item, held, false)
    }
    const rider = ride(ctx, item, free)
    return untilStopped<RideAnswer>(ctx.stopAcks, (answer) => rider.listen(answer)).pipe(
      Effect.flatMap((answer): Effect.Effect<Delivery<boolean>> => {
        const d = rideDelivery(answer)
        return d._tag === "resend" ? sendAlone(ctx, item, held, d.uncertain) : Effect.succeed(d)
      }),
    )
  })

/** Riders that will not get a reserve call: each is sent on its own by its job's fiber. */
export const flushRiders = (ctx: LoopDeps): Effect.Effect<void> => Effect.sync(() => tell(ctx.sched, FLUSH_RIDERS))

/** Nothing will carry the riders: they go on their own, and new finishers too. */
export const standDown = (ctx: LoopDeps): Effect.Effect<void> => Effect.sync(() => tell(ctx.sched, STAND_DOWN))
