/**
 * Steering a running job from outside its handler: its timeout, a cancel, its progress.
 *
 * - Timeout: `timeoutMs` after the job started (its own, else the worker's default), its
 *   lease ends with reason "timeout": the signal aborts (reason a {@link JobTimedOut}), the
 *   handler's fiber is interrupted, and a fail with reason "timeout" is sent at once (the
 *   backoff decides retry or dead), without waiting for a handler that ignores its signal.
 *   The server keeps a limit too (see lua/extend.lua): a heartbeat past it answers
 *   "timeout", which ends the lease the same way.
 * - Cancel: a heartbeat that finds the job cancelled ends the lease with reason
 *   "cancelled" (the signal's reason a {@link JobCancelled}); nothing is sent: the cancel
 *   already took the job out, and its complete would be refused.
 * - Progress: see Progress.ts.
 */
import * as Effect from "effect/Effect"
import { planRetry } from "../../model/Backoff.ts"
import { JobTimedOut } from "../../model/Errors.ts"
import type { Job } from "../../model/HandlerJob.ts"
import { leaseTo } from "../lease/LeaseState.ts"
import type { Held } from "../lease/LeaseTable.ts"
import type { RunDeps } from "./RunDeps.ts"
import { sendFail } from "./Settle.ts"

/** The failure of an attempt that ran past its timeout, as recorded in the job's last error. */
const timeoutJson = (e: JobTimedOut): string =>
  JSON.stringify({ name: e._tag, reason: "timeout", message: e.message, timeoutMs: e.timeoutMs })

/**
 * Fail a job whose run passed its timeout (its lease already ended with reason "timeout"):
 * once, at once, with the backoff's delay; then tell the hooks as for any failure.
 */
const failTimedOut = <A>(ctx: RunDeps<A>, held: Held, job: Job<A>) =>
  Effect.gen(function* () {
    const error = held.abortReason as JobTimedOut
    const plan = yield* planRetry(ctx.settings.backoff, held.attempt, error, ctx.hooks.error)
    const outcome = yield* sendFail(ctx, held, held, {
      delayMs: plan.delayMs,
      error: timeoutJson(error),
      mode: plan.retry ? "retry" : "final",
    })
    if (outcome !== undefined) leaseTo(held, "answer")
    if (outcome === "retry" || outcome === "dead") {
      ctx.hooks.failed?.(job, error, outcome === "retry")
      if (outcome === "dead") ctx.hooks.dead?.({ id: held.id, token: held.token }, "timeout", error)
    }
  })

/**
 * A running job passed its timeout (found by its timer, or by a heartbeat the server
 * answered "timeout"): end its lease with reason "timeout" (unless it ended otherwise or
 * is settling already) and fail it, in a fiber of its own that close waits for like a job's.
 */
export const timeOut = <A>(ctx: RunDeps<A>, held: Held) =>
  Effect.suspend(() => {
    const job = held.job as Job<A> | undefined
    if (job === undefined) return Effect.void
    const end =
      held.state.phase === "held"
        ? ctx.table.end(
            held,
            "timeout",
            new JobTimedOut({
              queue: ctx.commands.keys.queue,
              jobId: held.id,
              token: held.token,
              timeoutMs: held.timeoutMs ?? 0,
            }),
          )
        : Effect.void
    // ended by its timeout (now or before): the worker fails it, once; any other lease is left alone
    return Effect.andThen(end, () => (leaseTo(held, "time-out") ? failInFiber(ctx, held, job) : Effect.void))
  })

/** Fail a timed-out job in a fiber of its own that close waits for like a job's. */
const failInFiber = <A>(ctx: RunDeps<A>, held: Held, job: Job<A>) =>
  Effect.forkDetach(Effect.uninterruptible(failTimedOut(ctx, held, job))).pipe(
    Effect.tap((fiber) =>
      Effect.sync(() => {
        ctx.jobFibers.add(fiber)
        fiber.addObserver(() => ctx.jobFibers.delete(fiber))
      }),
    ),
    Effect.asVoid,
  )

/**
 * Arm a job's timeout: a timer fiber that calls {@link timeOut} `held.timeoutMs` after now.
 * Returns how to disarm it (when the job's fiber ends first); nothing to arm without a timeout.
 */
export const armTimeout = <A>(ctx: RunDeps<A>, held: Held): Effect.Effect<() => void> => {
  const ms = held.timeoutMs ?? 0
  // no timer, no fiber: the common case costs no Effect of its own per job
  if (ms <= 0) return unarmed
  return Effect.map(
    Effect.forkDetach(Effect.sleep(ms).pipe(Effect.andThen(Effect.uninterruptible(timeOut(ctx, held))))),
    (timer) => () => timer.interruptUnsafe(),
  )
}
const unarmed: Effect.Effect<() => void> = Effect.succeed(() => {})
