/**
 * What the reserve loop (this folder: the loop, its calls, the scheduling state it owns,
 * prefetch, riders) is given by the worker: the lease keeper's part (it enters leases and
 * freshens late ones) and its own. It starts a job's run through {@link StartRun}, handed
 * to it by the worker, so this folder never imports the run of a job (../run/).
 */
import type * as Effect from "effect/Effect"
import type { RedisClient } from "../../../redis/Client.ts"
import { makeBatcher } from "../../calls/Batcher.ts"
import type { Commands, Reservation } from "../../calls/Commands.ts"
import { SCRIPT_CHUNK } from "../../calls/Commands.ts"
import type { PayloadSizes } from "../../calls/PayloadRefs.ts"
import type { StopSignal } from "../lease/Acks.ts"
import type { LeaseDeps } from "../lease/LeaseDeps.ts"
import type { WorkerHooks } from "../WorkerHooks.ts"
import type { WorkerState } from "../WorkerState.ts"
import type { Finished, Scheduling } from "./Scheduling.ts"

/** What the `drained` hook is judged by (written only by Drained.ts). */
export interface IdleWatch {
  /** A job was started since the last `drained` (or since the start). */
  hadWork: boolean
  /** The last reserve call that landed found fewer jobs than it asked for. */
  empty: boolean
  /**
   * Times the worker had to look again (a job of its own went back to the queue): a reserve
   * sent before the last of these says nothing of the queue as it is now.
   */
  looks: number
}

/** How the loop starts a run (the worker hands it run/RunJob.ts's, bound to its context). */
export interface StartRun {
  /** Run a reserved job now, in a slot of its own (`deadline`: its lease's local deadline). */
  readonly job: (r: Reservation, deadline: number) => Effect.Effect<void>
  /** Start prefetched jobs while slots are free. */
  readonly waiting: () => Effect.Effect<void>
}

/** The batcher of stand-alone completes: one call in flight at a time, so one ack lane of its own. */
export const makeCompleter = (commands: Commands, lane: string) =>
  makeBatcher((items: ReadonlyArray<Finished>) => commands.complete(items, lane), SCRIPT_CHUNK)

/** The hooks the loop calls. */
export type LoopHooks = Pick<Required<WorkerHooks<unknown>>, "leaseLost" | "cancelled" | "error" | "drained">

/** The worker as the reserve loop sees it. */
export interface LoopDeps extends LeaseDeps {
  readonly hooks: LoopHooks
  /** The worker's own connection for the marker wait (closed by the worker). */
  readonly blocking: RedisClient
  /**
   * The reserve loop's scheduling state (slots, calls asked, in flight and landed, riders,
   * prefetched jobs, the linger): read-only here; changed only by telling it what happened
   * (`tell`, Scheduling.ts) or by the loop's own steps.
   */
  readonly sched: Scheduling
  /** The worker's state; changed only through `transition` (WorkerState.ts). */
  readonly state: WorkerState
  /** What the `drained` hook is judged by (Drained.ts: its only writer). */
  readonly idle: IdleWatch
  /** Whether the next reserve call reads large payloads by reference (told by each call that lands, Reserve.ts). */
  readonly payloads: PayloadSizes
  /** Completes sent on their own, batched. */
  readonly completer: ReturnType<typeof makeCompleter>
  /** Fired once close stops waiting for acks (past the grace): they give up, their leases are released. */
  readonly stopAcks: StopSignal
  /** How a landed job's run starts. */
  readonly startRun: StartRun
  /** Report an error the worker survives on the error hook. */
  readonly report: (e: unknown) => Effect.Effect<void>
}
