/**
 * What the lease keeper (this folder: the lease table, the heartbeat and fence loops, the
 * acks' resending) is given by the worker: the narrow part of the worker's context it reads
 * and writes. The worker's context (../Context.ts) has these fields among others; nothing
 * here reaches the reserve loop's state or a job's run.
 */
import type { Commands } from "../../calls/Commands.ts"
import type { makeRegistryBeat } from "../../model/Registry.ts"
import type { WorkerHooks } from "../WorkerHooks.ts"
import type { WorkerSettings } from "../WorkerOptions.ts"
import type { LeaseTable } from "./LeaseTable.ts"
import type { LoopMonitor } from "./LoopMonitor.ts"

/** The hooks the lease keeper calls: none of them sees a job's payload. */
export type LeaseHooks = Pick<Required<WorkerHooks<unknown>>, "leaseLost" | "cancelled" | "error">

/** The worker as the lease keeper sees it. */
export interface LeaseDeps {
  readonly commands: Commands
  readonly settings: WorkerSettings
  readonly workerId: string
  /** The user's hooks, guarded: a throw is reported on the error hook, never thrown into the engine. */
  readonly hooks: LeaseHooks
  readonly table: LeaseTable
  /** The lease length asked of the server: the worker fences on leaseMs, a sweep waits the grace more. */
  readonly serverLeaseMs: number
  /**
   * When the heartbeat sends the worker's record (see Registry.ts); the record goes stale
   * (a sweep drops it) when a lease of this worker would have expired too.
   */
  readonly registry: ReturnType<typeof makeRegistryBeat>
  /** The event-loop check while in-process handlers run (LoopMonitor.ts). */
  readonly loop: LoopMonitor
  /** Leases this worker self-fenced since it started (reported to the queue's counter by its heartbeat). */
  selfFenced: number
  /** How many times the main connection was replaced as silent (a heartbeat got no reply). */
  replaced: number
}
