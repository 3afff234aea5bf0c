/**
 * The reserve loop: up to `MAX_RESERVES_IN_FLIGHT` (Slots.ts) calls out at once, each for free
 * slots only (never more jobs than `concurrency`), so Redis runs one call while this
 * process starts the jobs of another. When a call finds the queue empty and none is out,
 * it blocks on the marker. It runs while the worker is `running` (`paused`: it leases
 * nothing, Pause.ts); close interrupts it.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { RESERVE_MAX_JOBS, RESERVE_MAX_RIDERS } from "../../scripts/LeaseScripts.ts"
import { holdLease } from "../lease/LeaseGrant.ts"
import { monotonicNow } from "../lease/LeaseTable.ts"
import { lookAgain, noteLanded } from "./Drained.ts"
import { place, prefetchPaused } from "./Fragile.ts"
import { giveBack, reservedJobs } from "./GiveBack.ts"
import type { LoopDeps } from "./LoopDeps.ts"
import { takeWaiting } from "./Prefetch.ts"
import { blockOnMarker, blockThenReserve, reserveBehind, sendReserve } from "./Reserve.ts"
import { flushRiders, standDown } from "./Riders.ts"
import type { Landed } from "./Scheduling.ts"
import { beginCall, expectCall, hold, holdBack, nextLanded, noteFragile, takeAllLanded, waitFor } from "./Scheduling.ts"
import { canSend, canStartWaiting, freeSlots, lingering, waitEvent } from "./Slots.ts"

/** Pauses after a failed reserve call or marker wait, in a row; the last one repeated. */
const RETRY_PAUSE = [100, 200, 500, 1000, 2000] as const

/** A call that failed: reported, unless it failed with the marker wait it was sent behind (the loop reported that). */
const landedFailed = (ctx: LoopDeps, quiet: boolean, cause: Cause.Cause<unknown>) =>
  quiet
    ? Effect.succeed({ next: "skip" as const, due: -1 })
    : Effect.as(ctx.report(Cause.squash(cause)), { next: "failed" as const, due: -1 })

/**
 * Start a landed call's jobs for the free slots; the rest (prefetched) wait, their leases
 * held, for a slot — except those a fragile job keeps from being held (Fragile.ts), which
 * are given back at once, unstarted.
 */
const startPlaced = (ctx: LoopDeps, starts: Landed["starts"]) =>
  Effect.gen(function* () {
    const free = ctx.sched.waiting.length === 0 ? ctx.settings.concurrency - ctx.sched.busy : 0
    const placed = place(ctx, starts, free)
    // given back before any job starts: one that kills the process must find them released
    if (placed.release.length > 0)
      yield* ctx.commands.release(placed.release.map((s) => s.r)).pipe(Effect.catch(ctx.report))
    yield* Effect.uninterruptible(
      Effect.andThen(
        Effect.forEach(placed.start, (s) => ctx.startRun.job(s.r, s.deadline), { discard: true }),
        Effect.forEach(
          placed.hold,
          (s) => Effect.map(holdLease(ctx, s.r, s.deadline), (held) => hold(ctx.sched, { r: s.r, held })),
          { discard: true },
        ),
      ),
    )
  })

/**
 * Start the jobs of a landed call. Returns what the loop does next: "failed" (pause,
 * then go on), "short" (fewer jobs than asked: the queue looked empty; with the ms until
 * the next delayed job is due), "full", or "skip" (a call that failed with its marker
 * wait: nothing to note).
 */
const startLanded = (ctx: LoopDeps, l: Landed) =>
  Effect.gen(function* () {
    if (l.handled) return { next: "full" as const, due: -1 }
    if (ctx.state !== "running") {
      // close began after the call landed: give its jobs straight back, unstarted
      yield* giveBack(ctx, reservedJobs(l.reserved))
      return { next: "full" as const, due: -1 }
    }
    if (Exit.isFailure(l.reserved)) return yield* landedFailed(ctx, l.quiet, l.reserved.cause)
    yield* startPlaced(ctx, l.starts)
    const { limitMs } = l.reserved.value
    if (limitMs !== undefined) return { next: "limited" as const, due: limitMs }
    const short = l.reserved.value.jobs.length < l.want
    return { next: short ? ("short" as const) : ("full" as const), due: l.reserved.value.nextDueMs }
  })

/**
 * Longest wait, in ms, for the concurrency cap when none of this worker's own jobs frees a
 * slot first (another worker's lease leaving active tells this one nothing): two calls a
 * second at most while the cap is full.
 */
export const CAP_WAIT_MS = 500

/**
 * A flow limit held the call back (reserve's `limitMs`): no call goes until it may allow
 * more — the rate window's next opening or the held time, at most `blockTimeoutMs` (a
 * cleared limit is seen that soon), or for the concurrency cap ({@link CAP_WAIT_MS}) until
 * one of this worker's jobs frees its slot.
 */
const holdLimited = (ctx: LoopDeps, limitMs: number) =>
  limitMs > 0
    ? holdBack(ctx.sched, monotonicNow() + Math.min(limitMs + 1, ctx.settings.blockTimeoutMs), false)
    : holdBack(ctx.sched, monotonicNow() + CAP_WAIT_MS, true)

/** Held back by a flow limit: wait, sending nothing, until the hold ends (or a call lands, or close). */
const waitLimited = (ctx: LoopDeps, until: number) =>
  Effect.gen(function* () {
    const left = until - monotonicNow()
    if (left > 0) {
      // riders go on their own: no call follows soon
      if (nothingOut(ctx)) yield* standDown(ctx)
      yield* Effect.timeoutOption(waitEvent(ctx, false), left)
    }
    if (ctx.sched.limitedUntil !== undefined && monotonicNow() >= ctx.sched.limitedUntil)
      holdBack(ctx.sched, undefined, false)
  })

/** What the reserve loop carries from one turn to the next. */
interface LoopState {
  /** Failed reserve calls or marker waits in a row. */
  failures: number
  /** Set after a short call (the queue looked empty): the ms until the next delayed job is due. */
  short: number | undefined
}

/** No reserve call is out and no prefetched job waits for a slot. */
const nothingOut = (ctx: LoopDeps) => ctx.sched.inFlight.size === 0 && ctx.sched.waiting.length === 0

/** Pause after a failure, longer for each one in a row. */
const pauseAfterFailure = (st: LoopState) => Effect.sleep(RETRY_PAUSE[Math.min(st.failures++, RETRY_PAUSE.length - 1)]!)

/** Start the jobs of a landed call and note what it says of the queue. */
const takeLanded = (ctx: LoopDeps, st: LoopState, l: Landed) =>
  Effect.gen(function* () {
    const { next, due } = yield* startLanded(ctx, l)
    if (next === "skip") return
    if (next === "failed") {
      yield* standDown(ctx)
      yield* pauseAfterFailure(st)
      return
    }
    st.failures = 0
    st.short = next === "short" ? due : undefined
    if (Exit.isSuccess(l.reserved)) noteLanded(ctx, l.reserved.value.jobs.length, next === "short", l.looks)
    if (next === "limited") holdLimited(ctx, due)
  })

/**
 * The queue looked empty and no call is out: block on the marker until a job may be there
 * (`due` ms at most), with a reserve call for the free slots sent right behind the wait
 * (Reserve.ts; not after a wait too long for the lease): it lands as any call does, and
 * the loop starts its jobs.
 */
const waitForJobs = (ctx: LoopDeps, st: LoopState, due: number) =>
  Effect.gen(function* () {
    st.short = undefined
    if (due === 0) return
    const wait = due > 0 ? Math.min(due, ctx.settings.blockTimeoutMs) : ctx.settings.blockTimeoutMs
    yield* standDown(ctx)
    const want = reserveBehind(ctx, wait) ? Math.min(freeSlots(ctx), RESERVE_MAX_JOBS) : 0
    const woke = yield* Effect.exit(want > 0 ? blockThenReserve(ctx, wait, want) : blockOnMarker(ctx, wait))
    if (Exit.isFailure(woke) && ctx.state === "running") {
      yield* ctx.report(Cause.squash(woke.cause))
      yield* pauseAfterFailure(st)
    }
  })

/** Send a reserve call for the free slots, carrying the riders it can. */
const sendCall = (ctx: LoopDeps) =>
  Effect.gen(function* () {
    const ride = beginCall(ctx.sched, RESERVE_MAX_RIDERS)
    if (ctx.sched.riding.length > 0) yield* flushRiders(ctx)
    yield* sendReserve(ctx, Math.min(freeSlots(ctx), RESERVE_MAX_JOBS), ride)
  })

/** Nothing to do now: settle what riders do meanwhile, then wait for the next event. */
const idle = (ctx: LoopDeps, short: boolean) =>
  Effect.gen(function* () {
    // riders left go on their own when no call is out (the next slot may be far off);
    // while prefetched jobs wait, a call follows once they have started: riders wait for it;
    // while the loop lingers (Slots.ts), its call follows within LINGER_MS: riders ride it
    if (nothingOut(ctx)) {
      if (!short && lingering(ctx)) expectCall(ctx.sched)
      else yield* standDown(ctx)
    }
    yield* waitEvent(ctx, short)
  })

/** One turn of the reserve loop: the first step that applies. */
const turn = (ctx: LoopDeps, st: LoopState) => {
  const l = nextLanded(ctx.sched)
  if (l !== undefined) return takeLanded(ctx, st, l)
  if (ctx.sched.limitedUntil !== undefined) return waitLimited(ctx, ctx.sched.limitedUntil)
  if (st.short !== undefined && nothingOut(ctx)) return waitForJobs(ctx, st, st.short)
  if (canSend(ctx, st.short !== undefined)) return sendCall(ctx)
  return idle(ctx, st.short !== undefined)
}

/** Until the worker is no longer paused, or a reserve call landed. */
const untilResumed = (ctx: LoopDeps) =>
  Effect.callback<void>((wake) => {
    if (ctx.state !== "paused" || ctx.sched.landed.length > 0) return wake(Effect.void)
    return Effect.sync(waitFor(ctx.sched, false, () => wake(Effect.void)))
  })

/**
 * The reserve loop's turn while paused: a call that landed gives its jobs back; else the
 * riders go on their own, prefetched jobs go back, and the loop waits for resume (or close).
 */
const pausedTurn = (ctx: LoopDeps) =>
  Effect.gen(function* () {
    const l = nextLanded(ctx.sched)
    if (l !== undefined) {
      if (!l.handled) yield* giveBack(ctx, reservedJobs(l.reserved))
      return
    }
    yield* standDown(ctx)
    yield* giveBack(ctx, takeWaiting(ctx))
    lookAgain(ctx)
    yield* untilResumed(ctx)
  })

/** The reserve loop (see the top of this file); while the worker is paused (Pause.ts), its paused turn. */
export const reserveLoop = (ctx: LoopDeps) =>
  Effect.gen(function* () {
    const st: LoopState = { failures: 0, short: undefined }
    while (ctx.state === "running" || ctx.state === "paused") {
      if (ctx.state === "paused") {
        st.short = undefined
        yield* pausedTurn(ctx)
        continue
      }
      // once no fragile job is live and its pause is over, prefetch stops checking (Fragile.ts)
      if (ctx.sched.fragileAt !== undefined && !prefetchPaused(ctx)) noteFragile(ctx.sched, undefined)
      if (canStartWaiting(ctx)) yield* ctx.startRun.waiting()
      yield* turn(ctx, st)
    }
  })

/** At the loop's end: riders go on their own; jobs not started (landed, or prefetched and waiting) are given back. */
export const endLoop = (ctx: LoopDeps) =>
  Effect.gen(function* () {
    yield* standDown(ctx)
    const unstarted = takeAllLanded(ctx.sched).flatMap((l) => (l.handled ? [] : reservedJobs(l.reserved)))
    unstarted.push(...takeWaiting(ctx))
    yield* giveBack(ctx, unstarted)
  })
