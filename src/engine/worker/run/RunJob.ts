/**
 * Running one job: one fiber per job, started by the reserve loop for each reserved job.
 * It decodes the payload, runs the handler (interruptible: a lost lease or the end of
 * the grace period interrupts it), then settles (Settle.ts, uninterruptible).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import type { Reservation } from "../../calls/Commands.ts"
import { splitPayload } from "../../model/Carrier.ts"
import type { Job } from "../../model/HandlerJob.ts"
import {
  type Run,
  recordsNothing,
  recordsPlainly,
  runHandler,
  startProcess,
  traceSettle,
  type WorkerIdentity,
} from "../../telemetry/WorkerTelemetry.ts"
import { endOlder, enterLease, identity } from "../lease/LeaseGrant.ts"
import type { Held } from "../lease/LeaseTable.ts"
import { recordHandlerMs } from "../loop/Prefetch.ts"
import { takeWaiting } from "../loop/Scheduling.ts"
import { takeSlot } from "../loop/Slots.ts"
import { HeldJob } from "./HeldJob.ts"
import { freeOnce, refuseUndecoded, runOver, type SlotHold } from "./JobEnd.ts"
import { runPlain } from "./PlainRun.ts"
import type { RunDeps } from "./RunDeps.ts"
import { settle } from "./Settle.ts"
import { armTimeout } from "./Steer.ts"

/**
 * One job, one fiber: decode, run the handler (interruptible: a lost lease or the end
 * of the grace period interrupts this fiber), then settle (uninterruptible). The slot
 * and the table entry are given up only when the fiber ends, i.e. once the handler has
 * ended (the Promise face waits for the handler's promise to settle). Written as a
 * chain of flatMaps, not a generator: it runs once per job, and a generator per job
 * costs measurably more CPU at high concurrency.
 */
const runJob = <A>(ctx: RunDeps<A>, r: Reservation, held: Held) => {
  const flags: SlotHold = { slotFreed: false }
  return Effect.suspend(() => {
    const w = identity(ctx)
    const carried = splitPayload(r.payload)
    const started = (run: Run | undefined) => {
      held.span = run?.span
      return Effect.flatMap(Effect.exit(ctx.program.decode(carried.payload)), (decoded) => {
        if (Exit.isSuccess(decoded)) return runDecoded(ctx, r, held, w, run, decoded.value, flags)
        return Effect.uninterruptible(refuseUndecoded(ctx, w, r, held, run, decoded.cause))
      })
    }
    // with no tracer and no meter (the usual case), no telemetry Effect runs at all
    return recordsNothing() ? started(undefined) : Effect.flatMap(startProcess(w, r, carried.parent), started)
  }).pipe(
    Effect.catch((e) => ctx.report(e)),
    Effect.onExit(() =>
      Effect.sync(() => {
        freeOnce(ctx, flags)
        runOver(ctx, held)
      }),
    ),
  )
}

/** Run the handler on a decoded payload, then settle (uninterruptibly). */
const runDecoded = <A>(
  ctx: RunDeps<A>,
  r: Reservation,
  held: Held,
  w: WorkerIdentity,
  run: Run | undefined,
  payload: A,
  flags: SlotHold,
) => {
  const job: Job<A> = new HeldJob(r, payload, held, ctx)
  held.job = job as Job<unknown>
  const began = performance.now()
  return Effect.flatMap(Effect.exit(runHandler(w, run, () => held.state.ended, ctx.program.handler(job))), (exit) => {
    recordHandlerMs(ctx, performance.now() - began)
    // settle frees the slot (after queueing the complete, so the reserve it triggers carries it)
    const settling = settle(ctx, r, held, job, exit, () => freeOnce(ctx, flags))
    const operation = Exit.isSuccess(exit) ? "complete" : "fail"
    return Effect.uninterruptible(held.state.ended ? settling : traceSettle(w, r, held, run, operation, settling))
  })
}

/** Run a job whose lease is held (see `holdLease`) in a fiber of its own; its slot is taken now. */
export const runHeld = <A>(ctx: RunDeps<A>, r: Reservation, held: Held): Effect.Effect<void> =>
  Effect.suspend(() => forkHeld(ctx, r, held))

/** `runHeld`'s body (run inside an Effect). A job without a timeout arms nothing: one fork, one map. */
const forkHeld = <A>(ctx: RunDeps<A>, r: Reservation, held: Held): Effect.Effect<void> => {
  const plain = ctx.program.plain
  if (plain !== undefined && (held.timeoutMs ?? 0) <= 0 && recordsPlainly()) {
    runPlain(ctx, r, held, plain)
    return Effect.void
  }
  takeSlot(ctx)
  const fork = (disarm: (() => void) | undefined) =>
    Effect.map(Effect.forkDetach(runJob(ctx, r, held), { startImmediately: true }), (fiber) => {
      held.fiber = fiber as Fiber.Fiber<unknown, unknown>
      ctx.jobFibers.add(fiber)
      fiber.addObserver(() => {
        disarm?.()
        ctx.jobFibers.delete(fiber)
      })
    })
  // the run's timeout counts from here (the server's limit from the reserve, a lease later)
  return (held.timeoutMs ?? 0) > 0 ? Effect.flatMap(armTimeout(ctx, held), fork) : fork(undefined)
}

/** Start a reserved job in a fiber of its own; its slot is taken now, its lease entered in the table. */
export const startJob = <A>(ctx: RunDeps<A>, r: Reservation, deadline: number): Effect.Effect<void> =>
  Effect.suspend(() => {
    const { held, older } = enterLease(ctx, r, deadline)
    // an older lease on the same job is ended (and reported) first, as holdLease does
    return older ? Effect.flatMap(endOlder(ctx, older), () => forkHeld(ctx, r, held)) : forkHeld(ctx, r, held)
  })

/**
 * Start the waiting (prefetched) jobs for which a slot is free, in order. One whose lease
 * ended while it waited is dropped unstarted (its end was reported when it happened).
 */
export const startWaiting = <A>(ctx: RunDeps<A>) =>
  Effect.uninterruptible(
    Effect.gen(function* () {
      while (ctx.sched.busy < ctx.settings.concurrency) {
        const w = takeWaiting(ctx.sched)
        if (w === undefined) return
        if (w.held.state.ended) ctx.table.remove(w.held)
        else yield* runHeld(ctx, w.r, w.held)
      }
    }),
  )
