/**
 * The end of a job's run, written once for both ways a job runs (in a fiber, RunJob.ts, or
 * without one, PlainRun.ts): a payload that does not decode is refused; the run's slot is
 * freed once; and when the run is over its lease leaves the table: a lease that shutdown
 * ended goes to be released at close (its handler has ended now), and one whose
 * complete/fail was answered is acknowledged.
 */
import type * as Cause from "effect/Cause"
import type * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { Reservation } from "../../calls/Commands.ts"
import { endProcess, type Run, traceSettle, type WorkerIdentity } from "../../telemetry/WorkerTelemetry.ts"
import { leaseTo } from "../lease/LeaseState.ts"
import type { Held } from "../lease/LeaseTable.ts"
import { noteRunOver } from "../loop/Drained.ts"
import { freeSlot } from "../loop/Slots.ts"
import type { RunDeps } from "./RunDeps.ts"
import { refuse } from "./Settle.ts"

/**
 * A payload that did not decode (`cause`): the run's process ends with that failure and
 * the job is refused (to dead at once, no attempt spent; Settle.ts), traced as its fail.
 * A lease that ended first is never acknowledged: nothing is sent for it.
 */
export const refuseUndecoded = <A>(
  ctx: RunDeps<A>,
  w: WorkerIdentity,
  r: Reservation,
  held: Held,
  rec: Run | undefined,
  cause: Cause.Cause<unknown>,
): Effect.Effect<void> => {
  endProcess(w, rec, Exit.failCause(cause), undefined)
  if (!leaseTo(held, "settle")) return Exit.void
  return traceSettle(w, r, held, rec, "fail", refuse(ctx, r, held, cause))
}

/** A run's hold on its slot: freed once, whichever path frees it first. */
export interface SlotHold {
  slotFreed: boolean
}

/** Free the run's slot, once. */
export const freeOnce = <A>(ctx: RunDeps<A>, run: SlotHold): void => {
  if (run.slotFreed) return
  run.slotFreed = true
  freeSlot(ctx)
}

/**
 * The run is over (its handler ended; its settle done, or never to come): the lease leaves
 * the table. Ended by shutdown, it is released at close (attempts unchanged); settling (its
 * ack answered), it is acknowledged. Any other lease (ended otherwise, overrun, or settling
 * a timed-out run's fail of its own) is left as it is.
 */
export const runOver = <A>(ctx: RunDeps<A>, held: Held): void => {
  ctx.table.remove(held)
  const s = held.state
  if (s.phase === "ended" && s.ended === "shutdown") {
    if (leaseTo(held, "release")) ctx.toRelease.push(held)
  } else if (s.phase === "settling" && s.ended === undefined) leaseTo(held, "answer")
  noteRunOver(ctx)
}
