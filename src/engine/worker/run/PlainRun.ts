/**
 * Running one job without a fiber of its own: for a handler the face offers as a plain
 * function (the Promise face), with no timeout to arm and no Effect tracer of the
 * application's (spans, when traced, go to the global OpenTelemetry tracer as plain
 * calls: the process span around the handler, the settle span around the complete).
 * The handler's promise is awaited with `then`, the complete is queued as a rider (or
 * sent alone) and its answer listened to with a callback: in the common case (handler
 * resolves, the reserve carrying its complete answers "completed") no Effect runs for
 * the job at all. Every other path (a failure, a payload that does not decode, an ack
 * that must be sent again, an uncertain answer) hands over to the same Effects the fiber
 * path runs (Settle.ts), in a fiber close waits for like a job's.
 *
 * The lease semantics are those of the fiber path: a lease that ends while the handler
 * runs (lost, self-fenced, cancelled, timed out, shutdown) aborts its signal; the slot
 * stays taken and the lease stays in the table until the handler's promise settles, and
 * such a job is never acknowledged (a shutdown-ended one is released at close).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { Reservation } from "../../calls/Commands.ts"
import { splitPayload } from "../../model/Carrier.ts"
import type { Job } from "../../model/HandlerJob.ts"
import {
  endProcess,
  type Run as Recording,
  startProcessPlain,
  startSettlePlain,
  traceSettle,
  type WorkerIdentity,
} from "../../telemetry/WorkerTelemetry.ts"
import { answerOrStopped, type Delivery } from "../lease/Acks.ts"
import { identity } from "../lease/LeaseGrant.ts"
import { leaseTo } from "../lease/LeaseState.ts"
import type { Held } from "../lease/LeaseTable.ts"
import { recordHandlerMs } from "../loop/Prefetch.ts"
import { ride, rideDelivery, ridesNext, sendAlone } from "../loop/Riders.ts"
import type { Finished, RideAnswer } from "../loop/Scheduling.ts"
import { takeSlot } from "../loop/Slots.ts"
import type { PlainProgram } from "../WorkerProgram.ts"
import { HeldJob } from "./HeldJob.ts"
import { freeOnce, refuseUndecoded, runOver } from "./JobEnd.ts"
import { encodeOutcome } from "./Outcome.ts"
import { flushProgress, progressPending } from "./Progress.ts"
import type { RunDeps } from "./RunDeps.ts"
import { completedSlow, settleFailed } from "./Settle.ts"

/** One plain run: what it has done so far, and how it ends. */
interface Run<A> {
  readonly ctx: RunDeps<A>
  readonly r: Reservation
  readonly held: Held
  readonly w: WorkerIdentity
  /** What records the run (its spans, its meter), when anything does. */
  readonly rec: Recording | undefined
  /** Ends the complete's settle span (and records its duration), while one is open. */
  endSettle?: ((exit: Exit.Exit<unknown, unknown>) => void) | undefined
  slotFreed: boolean
  finished: boolean
}

/** Run a held job whose slot is free, without a fiber (see the module's comment). */
export const runPlain = <A>(ctx: RunDeps<A>, r: Reservation, held: Held, plain: PlainProgram<A>): void => {
  takeSlot(ctx)
  ctx.plainRuns.count++
  const carried = splitPayload(r.payload)
  const w = identity(ctx)
  const rec = recordingOf(ctx, w, r, carried.parent)
  held.span = rec?.span
  const run: Run<A> = { ctx, r, held, w, rec, slotFreed: false, finished: false }
  let payload: A
  try {
    payload = plain.decode(carried.payload)
  } catch (e) {
    handOver(run, refuseUndecoded(ctx, w, r, held, rec, Cause.fail(e)))
    return
  }
  const job = new HeldJob(r, payload, held, ctx)
  held.job = job as Job<unknown>
  const began = performance.now()
  let out: unknown
  try {
    // a traced job's process span is the active OpenTelemetry span while the handler runs
    out = rec?.span ? rec.span.runIn(() => plain.run(job)) : plain.run(job)
  } catch (e) {
    queueMicrotask(() => handlerEnded(run, job, Exit.fail(e), began))
    return
  }
  if (isThenable(out)) {
    out.then(
      (v) => handlerEnded(run, job, Exit.succeed(v), began),
      (e) => handlerEnded(run, job, Exit.fail(e), began),
    )
  } else queueMicrotask(() => handlerEnded(run, job, Exit.succeed(out), began))
}

/** The run's recording (spans, meter), if anything records; a throw from the telemetry SDK is reported and the job runs unrecorded. */
const recordingOf = <A>(
  ctx: RunDeps<A>,
  w: WorkerIdentity,
  r: Reservation,
  parent: ReturnType<typeof splitPayload>["parent"],
): Recording | undefined => {
  try {
    return startProcessPlain(w, r, parent)
  } catch (e) {
    ctx.hooks.error?.(e)
    return undefined
  }
}

const isThenable = (x: unknown): x is PromiseLike<unknown> =>
  x !== null &&
  (typeof x === "object" || typeof x === "function") &&
  typeof (x as { then?: unknown }).then === "function"

/**
 * The handler ended: settle as `settle` does (Settle.ts), the common case without Effects;
 * a progress value still pending is stored first (in a fiber, then back here).
 */
const handlerEnded = <A>(run: Run<A>, job: Job<A>, handlerExit: Exit.Exit<unknown, unknown>, began: number): void => {
  const { ctx, r, held, w, rec } = run
  if (progressPending(held)) {
    const at = performance.now()
    // once: the flush clears the value when stored, and a failed one leaves it to the heartbeat
    const flushed = (): void => handlerEnded(run, job, handlerExit, began + performance.now() - at)
    ctx
      .fork(
        Effect.ensuring(
          flushProgress(ctx, held),
          Effect.sync(() => (held.progress = undefined)),
        ),
      )
      .addObserver(flushed)
    return
  }
  try {
    recordHandlerMs(ctx, performance.now() - began)
    endProcess(w, rec, handlerExit, held.state.ended)
    // from here the complete/fail script's answer decides (see LeaseState.ts)
    if (!leaseTo(held, "settle")) {
      finish(run) // ended: lost, self-fenced or cancelled: never ack; shutdown: released at close
      return
    }
    const { exit, result } = encodeOutcome(handlerExit, ctx.program.encodeResult)
    if (Exit.isSuccess(exit)) {
      if (rec !== undefined) run.endSettle = startSettlePlain(w, r, held, rec, "complete")
      completePlain(run, { id: r.id, token: r.token, result }, job, exit.value)
    } else {
      const failing = settleFailed(ctx, r, held, job, exit.cause, () => free(run))
      handOver(run, traceSettle(w, r, held, rec, "fail", failing))
    }
  } catch (e) {
    ctx.hooks.error?.(e)
    settleEnded(run, Exit.fail(e))
    finish(run)
  }
}

/** The complete's settle span (if open) ends with `exit`, once. */
const settleEnded = <A>(run: Run<A>, exit: Exit.Exit<unknown, unknown>): void => {
  const end = run.endSettle
  if (end === undefined) return
  run.endSettle = undefined
  end(exit)
}

/** The complete's answer: the common one (completed, surely) is told at once; the rest go on in a fiber. */
const answered = <A>(run: Run<A>, d: Delivery<boolean>, job: Job<A>, value: unknown): void => {
  if (d._tag === "answered" && d.value) {
    run.ctx.hooks.completed?.(job, value)
    settleEnded(run, Exit.void)
    finish(run)
  } else handOver(run, completedSlow(run.ctx, d, run.held, job, value))
}

/** Send the complete on its own until answered (Acks.ts), in a fiber. */
const sendCompleteAlone = <A>(run: Run<A>, item: Finished, job: Job<A>, value: unknown, uncertain: boolean): void => {
  const { ctx, held } = run
  handOver(
    run,
    Effect.flatMap(sendAlone(ctx, item, held, uncertain), (d) => completedSlow(ctx, d, held, job, value)),
  )
}

/** Queue the complete as a rider of the next reserve call, or send it alone, as `complete` (Riders.ts) does. */
const completePlain = <A>(run: Run<A>, item: Finished, job: Job<A>, value: unknown): void => {
  const { ctx } = run
  if (!ridesNext(ctx)) {
    free(run)
    sendCompleteAlone(run, item, job, value, false)
    return
  }
  const rider = ride(ctx, item, () => free(run))
  // called by the reserve loop as it reads its reply: nothing here may throw into the loop
  answerOrStopped<RideAnswer>(
    ctx.stopAcks,
    (answer) => rider.listen(answer),
    (answer) => {
      try {
        const d = rideDelivery(answer)
        if (d._tag === "resend") sendCompleteAlone(run, item, job, value, d.uncertain)
        else answered(run, d, job, value)
      } catch (e) {
        ctx.hooks.error?.(e)
        settleEnded(run, Exit.fail(e))
        finish(run)
      }
    },
  )
}

/** Go on in a fiber (a failure, a resend, an uncertain answer): close waits for it like a job's. */
const handOver = <A>(run: Run<A>, rest: Effect.Effect<void>): void => {
  const { ctx } = run
  const fiber = ctx.fork(
    rest.pipe(
      Effect.onExit((exit) => Effect.sync(() => settleEnded(run, exit))),
      Effect.catchCause((cause) => ctx.report(Cause.squash(cause))),
      Effect.ensuring(Effect.sync(() => finish(run))),
    ),
  )
  ctx.jobFibers.add(fiber)
  fiber.addObserver(() => ctx.jobFibers.delete(fiber))
}

const free = <A>(run: Run<A>): void => freeOnce(run.ctx, run)

/** The run is over: its slot and table entry are given up (JobEnd.ts, as for a run in a fiber), once. */
const finish = <A>(run: Run<A>): void => {
  if (run.finished) return
  run.finished = true
  settleEnded(run, Exit.void)
  const { ctx, held } = run
  free(run)
  runOver(ctx, held)
  const runs = ctx.plainRuns
  if (--runs.count === 0) for (const wake of runs.idle.splice(0)) wake()
}
