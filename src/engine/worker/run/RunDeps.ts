/**
 * What the run of a job (this folder: one job from its start to its settled ack) is given
 * by the worker: the reserve loop's part (it takes and frees slots, rides completes on the
 * loop's calls: it *tells* the loop, never steers it) and its own.
 */
import type * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import type { AckLanes } from "../../model/AckLanes.ts"
import type { Held } from "../lease/LeaseTable.ts"
import type { LoopDeps } from "../loop/LoopDeps.ts"
import type { WorkerHooks } from "../WorkerHooks.ts"
import type { WorkerProgram } from "../WorkerProgram.ts"

/** Jobs running without a fiber (PlainRun.ts): how many, and who waits for none to be left. */
export interface PlainRuns {
  count: number
  readonly idle: Array<() => void>
}

/** The worker as the run of a job sees it. */
export interface RunDeps<A> extends LoopDeps {
  readonly program: WorkerProgram<A>
  /** The user's hooks, guarded: a throw is reported on the error hook, never thrown into the engine. */
  readonly hooks: Required<WorkerHooks<A>>
  /** The worker's ack lanes (model/AckLanes.ts): one per fail in flight, one the completer's. */
  readonly ackLanes: AckLanes
  /** Fibers of the jobs whose handlers run or settle. */
  readonly jobFibers: Set<Fiber.Fiber<void>>
  /** Jobs whose handlers run or settle without a fiber (PlainRun.ts). */
  readonly plainRuns: PlainRuns
  /** Leases to release at close (shutdown-ended jobs, acks that got no answer). */
  readonly toRelease: Held[]
  /**
   * Start an Effect in a fiber of its own from plain code (a callback), with the services
   * the worker was started with (its clock, tracer, references): the plain runs' hand-overs.
   */
  readonly fork: <X>(effect: Effect.Effect<X>) => Fiber.Fiber<X>
}
