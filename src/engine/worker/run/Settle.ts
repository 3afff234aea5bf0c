/**
 * Settling a job once its handler has ended: complete it (riding a reserve call where one
 * goes, see Riders.ts), or fail it (retry or dead, by the backoff), and tell the hooks.
 * Every ack is sent until answered (Acks.ts); one that gets no answer before close stops
 * waiting has its lease released at close. A payload that does not decode is refused:
 * sent to dead at once, without spending an attempt.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { Commands, LeaseRef, Reservation } from "../../calls/Commands.ts"
import { planRetry } from "../../model/Backoff.ts"
import { AckUndelivered } from "../../model/Errors.ts"
import { describeError, errorJson } from "../../model/Failure.ts"
import { RateLimited, Snooze } from "../../model/Flow.ts"
import type { Job } from "../../model/HandlerJob.ts"
import { ackCancelled, completeLanded, type Delivery, deliver, failLanded } from "../lease/Acks.ts"
import { leaseEnded } from "../lease/LeaseGrant.ts"
import { leaseTo } from "../lease/LeaseState.ts"
import type { Held } from "../lease/LeaseTable.ts"
import { lookAgain } from "../loop/Drained.ts"
import { complete } from "../loop/Riders.ts"
import { encodeOutcome } from "./Outcome.ts"
import { flushProgress, progressPending } from "./Progress.ts"
import type { RunDeps } from "./RunDeps.ts"

/** The failure recorded for a handler that interrupted itself. */
const handlerInterrupted = (): Error => {
  const error = new Error("the handler interrupted itself (the worker still held its lease): counted as a failure")
  error.name = "HandlerInterrupted"
  return error
}

/** An ack that got no answer: at close its lease is released (token-fenced, so safe even if it lands later). */
const undelivered = <A>(
  ctx: RunDeps<A>,
  held: Held,
  ack: "complete" | "fail",
  d: Delivery<unknown> & { _tag: "undelivered" },
) => {
  if (d.reason === "stopped" && leaseTo(held, "release")) ctx.toRelease.push(held)
  ctx.hooks.error?.(
    new AckUndelivered({ queue: ctx.commands.keys.queue, jobId: held.id, token: held.token, ack, reason: d.reason }),
  )
  if (d.reason === "lease-expired") leaseEnded(ctx, held, "lease-lost")
}

/**
 * An ack refused (no lease under its token): told as a cancel when the job was cancelled
 * (`cancelled` hook; a cancel is not a lost lease), else as a lost lease.
 */
const refusedAck = <A>(ctx: RunDeps<A>, held: Held): Effect.Effect<void> =>
  ackCancelled(ctx.commands, held.id).pipe(
    Effect.orElseSucceed(() => false),
    Effect.map((cancelled): void =>
      cancelled ? ctx.hooks.cancelled?.({ id: held.id, token: held.token }) : leaseEnded(ctx, held, "lease-lost"),
    ),
  )

/** Report a complete's outcome; "lease lost" after an uncertain attempt is checked in Redis first. */
const completed = <A>(
  ctx: RunDeps<A>,
  d: Delivery<boolean>,
  held: Held,
  job: Job<A>,
  result: unknown,
): Effect.Effect<void> => {
  // the common answer (completed, surely) needs no generator: told at once
  if (d._tag === "answered" && d.value) {
    ctx.hooks.completed?.(job, result)
    return Effect.void
  }
  return completedSlow(ctx, d, held, job, result)
}

/** `completed`'s uncommon cases: undelivered, refused, or an answer to check in Redis. */
export const completedSlow = <A>(ctx: RunDeps<A>, d: Delivery<boolean>, held: Held, job: Job<A>, result: unknown) =>
  Effect.gen(function* () {
    if (d._tag === "undelivered") return undelivered(ctx, held, "complete", d)
    if (d._tag === "refused") return // reported on error already; as before, no event
    if (d.value) return ctx.hooks.completed?.(job, result)
    // a cancelled job's data may be gone as a completed one's is: the cancel is looked for first
    if (yield* ackCancelled(ctx.commands, held.id).pipe(Effect.orElseSucceed(() => false))) {
      return ctx.hooks.cancelled?.({ id: held.id, token: held.token })
    }
    const landed = d.uncertain && (yield* completeLanded(ctx.commands, held.id).pipe(Effect.orElseSucceed(() => false)))
    if (landed) ctx.hooks.completed?.(job, result)
    else leaseEnded(ctx, held, "lease-lost")
  })

/**
 * Send a fail until answered, on an ack lane of its own (a re-send after a lost reply
 * answers what the first run did); "lease lost" after an uncertain attempt is checked in
 * Redis first. (Also used by Steer.ts.)
 */
export const sendFail = <A>(ctx: RunDeps<A>, r: LeaseRef, held: Held, options: Parameters<Commands["fail"]>[1]) =>
  Effect.gen(function* () {
    const lane = ctx.ackLanes.take()
    const d = yield* deliver(ctx.commands.fail(r, { ...options, lane }), {
      held,
      stop: ctx.stopAcks,
      onError: (e) => ctx.hooks.error?.(e),
    })
    // an attempt still unanswered may yet run: its lane is not used again
    if (d._tag !== "undelivered") ctx.ackLanes.give(lane)
    if (d._tag === "undelivered") undelivered(ctx, held, "fail", d)
    if (d._tag !== "answered") return undefined
    // the job is back in the queue (a retry, a snooze, a hold): not drained until a reserve looks again
    if (d.value !== "lost" && d.value !== "dead") lookAgain(ctx)
    if (d.value !== "lost" || !d.uncertain) return d.value
    // a snooze or hold stores no error to tell whether an uncertain first attempt landed
    if (options.mode === "snooze" || options.mode === "hold") return undefined
    return yield* failLanded(ctx.commands, r.id, options.error).pipe(Effect.orElseSucceed(() => "lost" as const))
  })

/**
 * What happens after the handler: ack, retry or dead, once a progress value still pending
 * is stored (Progress.ts). Runs uninterruptibly.
 */
export const settle = <A>(
  ctx: RunDeps<A>,
  r: Reservation,
  held: Held,
  job: Job<A>,
  handlerExit: Exit.Exit<unknown, unknown>,
  free: () => void,
): Effect.Effect<void> =>
  progressPending(held)
    ? Effect.andThen(flushProgress(ctx, held), settleNow(ctx, r, held, job, handlerExit, free))
    : settleNow(ctx, r, held, job, handlerExit, free)

/** {@link settle} itself. */
const settleNow = <A>(
  ctx: RunDeps<A>,
  r: Reservation,
  held: Held,
  job: Job<A>,
  handlerExit: Exit.Exit<unknown, unknown>,
  free: () => void,
) =>
  Effect.suspend((): Effect.Effect<void> => {
    // from here the complete/fail script's answer decides (see LeaseState.ts)
    if (!leaseTo(held, "settle")) {
      free() // ended: lost, self-fenced, cancelled or timed out: never ack; shutdown: released when the run is over
      return Effect.void
    }
    // a result that cannot be serialised fails the job (normal retry/dead path)
    const { exit, result } = encodeOutcome(handlerExit, ctx.program.encodeResult)
    if (!Exit.isSuccess(exit)) return settleFailed(ctx, r, held, job, exit.cause, free)
    return Effect.flatMap(complete(ctx, { id: r.id, token: r.token, result }, held, free), (d) =>
      completed(ctx, d, held, job, exit.value),
    )
  })

/**
 * The handler failed (or its result cannot be kept): free the slot (`free`), send the fail its
 * retry plan says, then tell the hooks. A RateLimited's slot is freed once its fail is out:
 * the reserve that frees triggers must find the queue held (M1).
 */
export const settleFailed = <A>(
  ctx: RunDeps<A>,
  r: Reservation,
  held: Held,
  job: Job<A>,
  cause: Cause.Cause<unknown>,
  free: () => void,
) =>
  Effect.gen(function* () {
    // not interrupted by the worker (its lease did not end): the handler interrupted itself,
    // which counts as a failure (left alone, the job would wait out its lease)
    const error = Cause.hasInterruptsOnly(cause) ? handlerInterrupted() : Cause.squash(cause)
    if (error instanceof RateLimited) return yield* Effect.ensuring(settleFlow(ctx, r, held, error), Effect.sync(free))
    free()
    if (error instanceof Snooze) return yield* settleFlow(ctx, r, held, error)
    const plan = yield* planRetry(ctx.settings.backoff, r.attempt, error, ctx.hooks.error)
    const outcome = yield* sendFail(ctx, r, held, {
      delayMs: plan.delayMs,
      error: errorJson(error),
      mode: plan.retry ? "retry" : "final",
    })
    if (outcome === "lost") yield* refusedAck(ctx, held)
    else if (outcome !== undefined) {
      ctx.hooks.failed?.(job, error, outcome === "retry")
      if (outcome === "dead") ctx.hooks.dead?.({ id: r.id, token: r.token }, "failed", error)
    }
  })

/**
 * The handler threw {@link Snooze} (the job goes to delayed) or {@link RateLimited} (back to
 * the front, the queue held): no attempt spent, no failure told to the hooks.
 */
const settleFlow = <A>(ctx: RunDeps<A>, r: Reservation, held: Held, error: Snooze | RateLimited) =>
  Effect.gen(function* () {
    const snooze = error instanceof Snooze
    const delayMs = snooze ? error.delayMs : error.retryAfterMs
    const outcome = yield* sendFail(ctx, r, held, { delayMs, error: "", mode: snooze ? "snooze" : "hold" })
    if (outcome === "lost") yield* refusedAck(ctx, held)
  })

/** A payload that does not decode goes to dead at once, without spending an attempt. */
export const refuse = <A>(ctx: RunDeps<A>, r: Reservation, held: Held, cause: Cause.Cause<unknown>) =>
  Effect.gen(function* () {
    const error = Cause.squash(cause)
    const { message } = describeError(error)
    const outcome = yield* sendFail(ctx, r, held, {
      delayMs: 0,
      error: JSON.stringify({ reason: "invalid-payload", message }),
      mode: "dead",
    })
    if (outcome === "dead") ctx.hooks.dead?.({ id: r.id, token: r.token }, "invalid-payload", error)
    else if (outcome === "lost") yield* refusedAck(ctx, held)
  })
