/**
 * Running one job: one fiber per job, started by the reserve loop for each reserved job.
 * It decodes the payload, runs the handler (interruptible: a lost lease or the end of
 * the grace period interrupts it), then settles (Settle.ts, uninterruptible).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import type { Reservation } from "../Commands.ts"
import type { Job } from "../Job.ts"
import { splitPayload } from "../telemetry/Carrier.ts"
import { endProcess, runHandler, startProcess, traceSettle } from "../telemetry/WorkerTelemetry.ts"
import type { WorkerContext } from "./Context.ts"
import { identity } from "./Heartbeat.ts"
import { type Held, signalOf } from "./Lease.ts"
import { holdLease, recordHandlerMs } from "./Prefetch.ts"
import { refuse, settle } from "./Settle.ts"
import { freeSlot, takeSlot } from "./Slots.ts"
import { armTimeout, reportProgress } from "./Steer.ts"

/**
 * One job, one fiber: decode, run the handler (interruptible: a lost lease or the end
 * of the grace period interrupts this fiber), then settle (uninterruptible). The slot
 * and the table entry are given up only when the fiber ends, i.e. once the handler has
 * ended (the Promise face waits for the handler's promise to settle).
 */
const runJob = <A>(ctx: WorkerContext<A>, r: Reservation, held: Held) => {
  let slotFreed = false
  let settled = false
  const freeOnce = () => {
    if (!slotFreed) {
      slotFreed = true
      freeSlot(ctx)
    }
  }
  return Effect.gen(function* () {
    const w = identity(ctx)
    const carried = splitPayload(r.payload)
    const run = yield* startProcess(w, r, carried.parent)
    held.span = run?.span
    const decoded = yield* Effect.exit(ctx.program.decode(carried.payload))
    if (Exit.isFailure(decoded)) {
      settled = true
      held.settling = true
      endProcess(w, run, decoded, undefined)
      return yield* Effect.uninterruptible(traceSettle(w, r, held, run, "fail", refuse(ctx, r, held, decoded.cause)))
    }
    const job: Job<A> = {
      id: r.id,
      payload: decoded.value,
      attempt: r.attempt,
      maxAttempts: r.maxAttempts,
      token: r.token,
      get signal() {
        return signalOf(held)
      },
      progress: reportProgress(held),
    }
    held.job = job as Job<unknown>
    const began = performance.now()
    const exit = yield* Effect.exit(runHandler(w, run, () => held.ended, ctx.program.handler(job)))
    recordHandlerMs(ctx, performance.now() - began)
    // settle frees the slot (after queueing the complete, so the reserve it triggers carries it)
    const settling = settle(
      ctx,
      r,
      held,
      job,
      exit,
      () => {
        settled = true
      },
      freeOnce,
    )
    const operation = Exit.isSuccess(exit) ? "complete" : "fail"
    yield* Effect.uninterruptible(held.ended ? settling : traceSettle(w, r, held, run, operation, settling))
  }).pipe(
    Effect.catch((e) => ctx.report(e)),
    Effect.onExit(() =>
      Effect.sync(() => {
        freeOnce()
        ctx.table.remove(held)
        if (held.ended === "shutdown" && !settled && !held.overrun) ctx.toRelease.push(held)
      }),
    ),
  )
}

/** Run a job whose lease is held (see `holdLease`) in a fiber of its own; its slot is taken now. */
export const runHeld = <A>(ctx: WorkerContext<A>, r: Reservation, held: Held) =>
  Effect.gen(function* () {
    takeSlot(ctx)
    // the run's timeout counts from here (the server's limit from the reserve, a lease later)
    const disarm = yield* armTimeout(ctx, held)
    const fiber = yield* Effect.forkDetach(runJob(ctx, r, held), { startImmediately: true })
    held.fiber = fiber as Fiber.Fiber<unknown, unknown>
    ctx.jobFibers.add(fiber)
    fiber.addObserver(() => {
      disarm()
      ctx.jobFibers.delete(fiber)
    })
  })

/** Start a reserved job in a fiber of its own; its slot is taken now, its lease entered in the table. */
export const startJob = <A>(ctx: WorkerContext<A>, r: Reservation, deadline: number) =>
  Effect.flatMap(holdLease(ctx, r, deadline), (held) => runHeld(ctx, r, held))

/**
 * Start the waiting (prefetched) jobs for which a slot is free, in order. One whose lease
 * ended while it waited is dropped unstarted (its end was reported when it happened).
 */
export const startWaiting = <A>(ctx: WorkerContext<A>) =>
  Effect.uninterruptible(
    Effect.gen(function* () {
      while (ctx.waiting.length > 0 && ctx.busy < ctx.settings.concurrency) {
        const w = ctx.waiting.shift()!
        if (w.held.ended) ctx.table.remove(w.held)
        else yield* runHeld(ctx, w.r, w.held)
      }
    }),
  )
