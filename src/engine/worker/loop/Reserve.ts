/**
 * One reserve call and the marker wait. A reserve call leases up to `want` jobs for free
 * slots and carries the completes riding with it (Riders.ts); it lands in a fiber of its
 * own, so close may stop waiting for it but never cuts it off. When the queue looks empty,
 * the loop blocks on the queue's marker on the worker's own connection, with a reserve
 * call for its free slots sent right behind the wait (Marker.ts).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { type MarkerWait, waitForMarker } from "../../calls/Marker.ts"
import { RESERVE_PROMOTE_LIMIT, type Reserved, type ReserveInput } from "../../scripts/LeaseScripts.ts"
import { refusedBeforeRun } from "../lease/Acks.ts"
import { freshen } from "../lease/LeaseGrant.ts"
import { fenceAfter, monotonicNow } from "../lease/LeaseTable.ts"
import { giveBack, reservedJobs } from "./GiveBack.ts"
import type { LoopDeps } from "./LoopDeps.ts"
import type { RideAnswer, Rider } from "./Scheduling.ts"
import { nextRequestId, tell } from "./Scheduling.ts"

/**
 * How much later than its own timeout a BZPOPMIN may answer before its connection is
 * taken for silent (half-open) and replaced: 5 s, room for a loaded Redis or process.
 */
export const BLOCK_REPLY_SLACK_MS = 5_000

/** The reserve call's arguments for `want` jobs carrying the completes of `ride`. */
const reserveInput = (ctx: LoopDeps, want: number, ride: ReadonlyArray<Rider>): ReserveInput => ({
  workerId: ctx.workerId,
  requestId: nextRequestId(ctx.sched),
  count: want,
  leaseMs: ctx.serverLeaseMs,
  promoteLimit: RESERVE_PROMOTE_LIMIT,
  timeoutMs: ctx.settings.timeoutMs,
  completes: ride.map((r) => r.item),
  // large payloads just seen: this call reads them by reference (calls/PayloadRefs.ts)
  refAt: ctx.payloads.refAt(),
})

/**
 * The reserve call `input` describes, on the worker's main connection (same request id
 * each time it is sent); `answerOnly`: asking for no jobs and promoting none — a give-back:
 * the script releases the leases a run of the call made and answers no jobs.
 */
const resendOf = (ctx: LoopDeps, input: ReserveInput) => (answerOnly: boolean) =>
  ctx.commands.reserve(
    answerOnly ? 0 : input.count,
    input.leaseMs,
    answerOnly ? 0 : input.promoteLimit,
    input.completes,
    input,
  )

/** A reserve call sent (or to send when run): its reply, and the monotonic time it was sent at. */
interface Call {
  readonly reply: Effect.Effect<Reserved, unknown>
  readonly sentAt: number
  /** Fails quietly: it failed because the marker wait sent before it did, which is reported instead. */
  readonly quietFailure?: Effect.Effect<boolean>
  /**
   * The same call (same request id) sent again on the worker's main connection, when the
   * reply failed and Redis may have run the call: a run it made is answered again.
   * `answerOnly` (once close began): asking for no jobs and promoting none, a give-back:
   * the leases a run of it made are released by the script, and no new lease is made.
   */
  readonly resend?: (answerOnly: boolean) => Effect.Effect<Reserved, unknown>
  /** Whether to send it again at all (default: yes) — e.g. only if its connection was replaced meanwhile. */
  readonly resendIf?: () => boolean
}

/**
 * The call's reply; when it failed after it may have run (its connection went silent, or
 * closed under it — close itself tears the marker connection down), the answer of the same
 * call sent again on the worker's other connection: the script answers a run it already
 * made (its leases) and changes nothing, so no job stays leased to a worker that never
 * heard of it. A closing (or failed) worker sends a give-back instead (count 0): the
 * script releases what that run leased.
 */
const replyOf = (ctx: LoopDeps, call: Call) =>
  Effect.flatMap(Effect.exit(call.reply), (first) => {
    if (Exit.isSuccess(first) || refusedBeforeRun(Cause.squash(first.cause))) return Effect.succeed(first)
    if (call.resendIf !== undefined && !call.resendIf()) return Effect.succeed(first)
    return call.resend === undefined ? Effect.succeed(first) : Effect.exit(call.resend(ctx.state !== "running"))
  })

/** Tell each rider what became of its complete: the call's answer, or to go on its own when the call failed. */
const answerRiders = (ride: ReadonlyArray<Rider>, reserved: Exit.Exit<Reserved, unknown>): void => {
  const uncertain = Exit.isFailure(reserved) && !refusedBeforeRun(Cause.squash(reserved.cause))
  for (let i = 0; i < ride.length; i++) {
    const answer: RideAnswer = Exit.isSuccess(reserved)
      ? reserved.value.completed[i] === true
      : { resend: true, uncertain }
    ride[i]!.answer(answer)
  }
}

/**
 * One reserve call, in a fiber of its own: close may stop waiting for it, never cut it
 * off. It answers its riders whatever happens (a failed call sends them on their own),
 * and when it lands after close began, it gives its jobs back at once, unstarted.
 */
const reserveCall = (ctx: LoopDeps, call: Call, ride: ReadonlyArray<Rider>) =>
  Effect.gen(function* () {
    const reserved = yield* replyOf(ctx, call)
    if (Exit.isSuccess(reserved)) ctx.payloads.leased(reserved.value.jobs)
    answerRiders(ride, reserved)
    // a rider left notes for parents in the outbox (flows): the outbox loop drains them now
    if (Exit.isSuccess(reserved) && reserved.value.notes) ctx.commands.outbox.poke()
    const starts =
      Exit.isSuccess(reserved) && ctx.state === "running" ? yield* freshen(ctx, reserved.value.jobs, call.sentAt) : []
    const quiet = Exit.isFailure(reserved) && call.quietFailure !== undefined && (yield* call.quietFailure)
    if (Exit.isSuccess(reserved) && ctx.state !== "running") {
      // closed while the call was in flight: give the jobs straight back, unstarted
      yield* giveBack(ctx, reserved.value.jobs)
      return { reserved, starts, handled: true, quiet }
    }
    return { reserved, starts, handled: false, quiet }
  })

/**
 * The give-back of each reserve call out, by the fiber that watches it: the same call with
 * count 0, which the script answers by releasing that call's leases (lua/reserve.lua,
 * "Re-sends"). Kept beside the context, not in it: only close reads it ({@link recallInFlight}).
 */
const recalls = new WeakMap<Fiber.Fiber<unknown>, () => Effect.Effect<Reserved, unknown>>()

/**
 * Close, once the reserve loop stopped: send the give-back of every reserve call still out,
 * on the main connection, queued behind the call itself. However late Redis runs the
 * call, it runs the give-back right after it, so the call's leases go back to wait even
 * when this worker has given up on the call and closed its connections by then. Each
 * give-back is watched like a call (close waits for it as for the calls, LANDING_MS at
 * most); one that fails is reported. What cannot be given back so: a call that ran on a
 * connection that broke before the give-back reached Redis (its leases expire).
 */
export const recallInFlight = (ctx: LoopDeps) =>
  Effect.gen(function* () {
    for (const fiber of [...ctx.sched.inFlight]) {
      const recall = recalls.get(fiber)
      if (recall === undefined) continue
      recalls.delete(fiber)
      const sent = yield* Effect.forkDetach(Effect.catch(recall(), ctx.report), { startImmediately: true })
      tell(ctx.sched, { _tag: "CallOut", fiber: sent })
      sent.addObserver(() => tell(ctx.sched, { _tag: "CallOver", fiber: sent }))
    }
  })

/**
 * Watch a reserve call in a fiber of its own; when it lands, its answer is queued for
 * the loop (woken when the fiber ends), or, once close began, its jobs are given back at once.
 */
const track = (ctx: LoopDeps, want: number, call: Call, ride: ReadonlyArray<Rider>) =>
  Effect.gen(function* () {
    tell(ctx.sched, { _tag: "Asked", want })
    const looks = ctx.idle.looks
    const landing = reserveCall(ctx, call, ride).pipe(
      Effect.flatMap((l) => {
        if (l.handled || ctx.state === "running") {
          tell(ctx.sched, { _tag: "Landed", landed: { ...l, want, looks } })
          return Effect.void
        }
        // close began while the jobs were being freshened: give them straight back
        return giveBack(ctx, reservedJobs(l.reserved))
      }),
    )
    const fiber = yield* Effect.forkDetach(landing, { startImmediately: true })
    tell(ctx.sched, { _tag: "CallOut", fiber })
    const resend = call.resend
    if (resend !== undefined) recalls.set(fiber, () => resend(true))
    // the loop is woken once the call is no longer counted as out
    fiber.addObserver(() => {
      recalls.delete(fiber)
      tell(ctx.sched, { _tag: "CallOver", fiber })
    })
    return fiber
  })

/** Send a reserve call for `want` jobs carrying the completes of `ride` (see {@link track}). */
export const sendReserve = (ctx: LoopDeps, want: number, ride: ReadonlyArray<Rider>) =>
  Effect.suspend(() => {
    const sentAt = monotonicNow()
    const input = reserveInput(ctx, want, ride)
    const resend = resendOf(ctx, input)
    // sent again only when its connection was replaced as silent under it (see replyOf)
    const replaced = ctx.replaced
    const resendIf = () => ctx.replaced !== replaced
    return Effect.asVoid(track(ctx, want, { reply: resend(false), sentAt, resend, resendIf }, ride))
  })

/** The marker wait's deadline: a reply later than the wait plus {@link BLOCK_REPLY_SLACK_MS} means a silent connection. */
const markerWait = (timeoutMs: number): MarkerWait => ({ timeoutMs, deadlineMs: timeoutMs + BLOCK_REPLY_SLACK_MS })

/**
 * Wait for the marker on the blocking connection. A reply later than the wait plus
 * {@link BLOCK_REPLY_SLACK_MS} means the connection went silent (half-open): it is
 * replaced and the call fails, so the loop reports it and goes on.
 */
export const blockOnMarker = (ctx: LoopDeps, timeoutMs: number) =>
  waitForMarker(ctx.blocking, ctx.commands.keys, markerWait(timeoutMs))

/**
 * True when a reserve sent behind a wait of `waitMs` may be used as it lands: its leases
 * are counted from the wait's start (nothing tells when Redis ran it), so after a wait
 * longer than half the fence they would land "late" and need an extend before their jobs
 * start (lease/LeaseGrant.ts `freshen`); such long waits (a long `blockTimeoutMs`, a short lease)
 * go alone. With the defaults (5 s against a 25 s fence) every wait takes its reserve.
 */
export const reserveBehind = (ctx: LoopDeps, waitMs: number): boolean =>
  waitMs < fenceAfter(ctx.settings.leaseMs, ctx.settings.heartbeatMs) / 2

/**
 * Wait for the marker as {@link blockOnMarker}, with a reserve call for `want` jobs sent
 * right behind the wait on the same connection (Marker.ts): Redis runs it the moment the
 * wait ends, so a job added to an idle queue starts with no round trip between the wake-up
 * and the reserve. The call is watched like any other (it lands in a fiber of its own, and
 * close waits for it); once the wait answered, the loop waits for that call to land (its
 * reply comes with the wait's) and then starts its jobs. A reserve that fails because the
 * wait failed is not reported twice: the wait's failure is. When the wait's connection went
 * silent after Redis ran both, or close tore it down just after Redis ran both, the
 * reserve's reply is lost: the same call is sent again on the worker's other connection,
 * and the script answers it with the leases it made, or, once close began (a give-back,
 * count 0), releases them.
 */
export const blockThenReserve = (ctx: LoopDeps, timeoutMs: number, want: number) =>
  Effect.gen(function* () {
    const sentAt = monotonicNow()
    const input = reserveInput(ctx, want, [])
    const both = yield* ctx.commands.markerThenReserve(ctx.blocking, markerWait(timeoutMs), input)
    const quietFailure = Effect.map(Effect.exit(both.woke), Exit.isFailure)
    const resend = resendOf(ctx, input)
    const landing = yield* track(ctx, want, { reply: both.reserved, sentAt, quietFailure, resend }, [])
    const woke = yield* both.woke
    // its reply came with the wake-up's: the loop takes its jobs next, without waiting for a ring
    yield* Fiber.await(landing)
    return woke
  })
