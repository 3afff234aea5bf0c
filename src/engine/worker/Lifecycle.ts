/**
 * The worker's lifecycle: its loops run supervised, and close runs the shutdown phases in
 * order, each bounded by a named timeout (the state machine is drawn in Worker.ts):
 *
 *   quiet    stop reserving: the reserve loop is interrupted, a give-back sent behind each
 *            reserve call still out, the marker connection closed
 *   drain    running handlers get up to `shutdownGraceMs` to finish
 *   abort    handlers still running are aborted and get up to `shutdownAbortGraceMs` to end
 *   release  leases not acked are released; reserve calls in flight land and give their jobs back
 *
 * then the other loops stop, the worker takes its record out of the queue's registry, and
 * it is `closed`.
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { ShutdownOverrun, WorkerLoopFailed } from "../model/Errors.ts"
import type { WorkerContext } from "./Context.ts"
import { fireStop } from "./lease/Acks.ts"
import { leaseTo } from "./lease/LeaseState.ts"
import { recallInFlight } from "./loop/Reserve.ts"
import { flushRiders } from "./loop/Riders.ts"
import { transition } from "./WorkerState.ts"

/** Options of {@link supervise}. */
export interface SuperviseOptions {
  /** Called with the cause each time the loop fails; `stopped` when it is given up. */
  readonly onFailure: (cause: unknown, stopped: boolean) => void
  /** Pauses before restarts, the last one repeated. Default 100, 200, 500, 1000, 2000, 5000 ms. */
  readonly pausesMs?: ReadonlyArray<number>
  /** Failures in a row after which the loop is given up. Default 5. */
  readonly maxFailures?: number
  /** A run that lasted this long resets the count of failures in a row. Default 60 000 ms. */
  readonly resetAfterMs?: number
}

const PAUSES_MS = [100, 200, 500, 1000, 2000, 5000] as const

/**
 * Run `loop` once. Undefined when it returned; its cause and how long it ran when it
 * failed or died; an interrupt of the loop interrupts the caller.
 */
const runOnce = (loop: Effect.Effect<unknown, unknown>) =>
  Effect.gen(function* () {
    const started = performance.now()
    const exit = yield* Effect.exit(loop)
    if (Exit.isSuccess(exit)) return undefined
    if (Cause.hasInterruptsOnly(exit.cause)) return yield* Effect.interrupt
    return { cause: exit.cause, ranMs: performance.now() - started }
  })

/**
 * Run a long-lived loop under supervision: when it fails or dies (a defect), the cause is
 * reported and the loop starts again after a pause. After `maxFailures` failures in a
 * row it is given up: reported with `stopped` true, and the returned effect ends. A loop
 * that returns ends the supervision; interrupting the supervisor interrupts the loop.
 */
export const supervise = (loop: Effect.Effect<unknown, unknown>, options: SuperviseOptions): Effect.Effect<void> =>
  Effect.gen(function* () {
    const pauses = options.pausesMs ?? PAUSES_MS
    const maxFailures = options.maxFailures ?? 5
    const resetAfterMs = options.resetAfterMs ?? 60_000
    let failures = 0
    while (true) {
      const failed = yield* runOnce(loop)
      if (failed === undefined) return
      // a run that lasted resetAfterMs starts the count of failures in a row again
      failures = failed.ranMs >= resetAfterMs ? 1 : failures + 1
      const stopped = failures >= maxFailures
      options.onFailure(Cause.squash(failed.cause), stopped)
      if (stopped) return
      yield* Effect.sleep(pauses[Math.min(failures - 1, pauses.length - 1)] ?? 1000)
    }
  })

/** Quiet: most time close waits for the reserve loop to stop (a call in flight goes on in its own fiber). */
export const STOP_RESERVE_LOOP_MS = 1_000
/** Quiet: most time close waits for the marker connection to close. */
export const CLOSE_BLOCKING_MS = 200
/** Release: most time close waits for Redis to release the leases not acked. */
export const RELEASE_MS = 2_000
/** Release: most time close waits for reserve calls in flight to land (each gives its jobs back). */
export const LANDING_MS = 2_000

/** A loop restarted when it fails; given up after too many failures in a row (worker `failed`). */
export const supervised = <A>(ctx: WorkerContext<A>, loop: string, effect: Effect.Effect<unknown, unknown>) =>
  supervise(effect, {
    onFailure: (cause, stopped) => {
      if (stopped && (ctx.state === "running" || ctx.state === "paused")) transition(ctx, "failed")
      if (stopped) ctx.wakeLoop()
      ctx.hooks.error?.(new WorkerLoopFailed({ queue: ctx.commands.keys.queue, loop, cause, stopped }))
    },
  })

/**
 * Quiet: stop reserving. The loop is interrupted (a call in flight goes on in its own
 * fiber); each call still out gets its give-back sent behind it (Reserve.ts), so its
 * leases go back to wait however late Redis runs it.
 */
const quiet = <A>(ctx: WorkerContext<A>, reserver: Fiber.Fiber<unknown, unknown>) =>
  Effect.gen(function* () {
    transition(ctx, "draining")
    yield* Fiber.interrupt(reserver).pipe(Effect.timeoutOption(STOP_RESERVE_LOOP_MS))
    yield* recallInFlight(ctx)
    yield* Effect.promise(() => ctx.blocking.close(CLOSE_BLOCKING_MS))
    yield* flushRiders(ctx)
  })

/** Until no job started without a fiber (PlainRun.ts) runs or settles. */
const plainIdle = <A>(ctx: WorkerContext<A>) =>
  Effect.callback<void>((resume) => {
    const runs = ctx.plainRuns
    if (runs.count === 0) return resume(Effect.void)
    const wake = () => resume(Effect.void)
    runs.idle.push(wake)
    return Effect.sync(() => {
      const i = runs.idle.indexOf(wake)
      if (i >= 0) runs.idle.splice(i, 1)
    })
  })

/** Until the jobs running or settling now (in fibers or not) have ended (also `pause({ wait: true })`, Pause.ts). */
export const jobsEnded = <A>(ctx: WorkerContext<A>) =>
  Effect.andThen(Fiber.awaitAll([...ctx.jobFibers]), plainIdle(ctx))

/** Drain: let running handlers finish, up to the grace period. */
const drain = <A>(ctx: WorkerContext<A>) =>
  ctx.jobFibers.size === 0 && ctx.plainRuns.count === 0
    ? Effect.void
    : jobsEnded(ctx).pipe(Effect.timeoutOption(ctx.settings.shutdownGraceMs), Effect.asVoid)

/**
 * Abort: the handlers still running are aborted; acks still unanswered stop waiting.
 * A handler still running after `shutdownAbortGraceMs` keeps its lease until it
 * expires (heartbeats stop), and is reported.
 */
const abort = <A>(ctx: WorkerContext<A>) =>
  Effect.gen(function* () {
    transition(ctx, "releasing")
    fireStop(ctx.stopAcks)
    for (const h of ctx.table.live()) yield* ctx.table.end(h, "shutdown", "worker shutting down")
    const waitedMs = ctx.settings.shutdownAbortGraceMs
    const ended = yield* jobsEnded(ctx).pipe(Effect.timeoutOption(waitedMs))
    if (Option.isSome(ended)) return
    for (const h of ctx.table.heartbeated()) {
      if (!leaseTo(h, "overrun")) continue
      yield* ctx.report(new ShutdownOverrun({ queue: ctx.commands.keys.queue, jobId: h.id, token: h.token, waitedMs }))
    }
  })

/**
 * Release: each job whose handler ended without an ack is released, so another worker
 * starts it at once with attempts unchanged; a reserve that lands now releases its own
 * jobs (see Reserve.ts).
 */
const release = <A>(ctx: WorkerContext<A>) => {
  const released =
    ctx.toRelease.length === 0
      ? Effect.void
      : ctx.commands.release(ctx.toRelease.splice(0)).pipe(Effect.timeoutOption(RELEASE_MS), Effect.catch(ctx.report))
  const landing = Fiber.awaitAll([...ctx.sched.inFlight]).pipe(Effect.timeoutOption(LANDING_MS))
  return Effect.all([released, landing], { concurrency: "unbounded", discard: true })
}

/** Closed: most time close waits for the worker's record to leave the registry. */
export const LEAVE_MS = 1_000

/** What close stops: the reserve loop, and the other loops (stopped last). */
export interface WorkerFibers {
  readonly reserver: Fiber.Fiber<unknown, unknown>
  readonly loops: ReadonlyArray<Fiber.Fiber<unknown, unknown>>
}

/** The shutdown: quiet → drain → abort → release, then the loops stop and the worker is closed. */
export const shutdown = <A>(ctx: WorkerContext<A>, fibers: WorkerFibers, onClosed: () => void) =>
  Effect.gen(function* () {
    yield* quiet(ctx, fibers.reserver)
    yield* drain(ctx)
    yield* abort(ctx)
    yield* release(ctx)
    yield* Fiber.interruptAll(fibers.loops)
    ctx.loop.stop()
    // out of the registry at once (sent after the last heartbeat on the same connection);
    // if this fails the record goes stale and a sweep drops it
    yield* ctx.commands.workerLeave(ctx.workerId).pipe(Effect.timeoutOption(LEAVE_MS), Effect.exit)
    transition(ctx, "closed")
    onClosed()
  })

/**
 * `close` for a handle: the first call starts `run` in a fiber of its own (a caller
 * interrupted while it waits does not cut the shutdown short); every call waits for it.
 */
export const memoizedClose = (run: Effect.Effect<void>): Effect.Effect<void> => {
  let closing: Deferred.Deferred<void> | undefined
  return Effect.suspend(() => {
    if (closing) return Deferred.await(closing)
    const done = Deferred.makeUnsafe<void>()
    closing = done
    const detached = run.pipe(Effect.ensuring(Effect.sync(() => Deferred.doneUnsafe(done, Effect.void))))
    return Effect.forkDetach(detached, { startImmediately: true }).pipe(Effect.andThen(Deferred.await(done)))
  })
}
