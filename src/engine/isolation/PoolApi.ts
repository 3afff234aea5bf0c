/**
 * What an isolated worker's pool (Pool.ts) is made with and what it offers.
 */
import type { ResourceLimits } from "node:worker_threads"
import type { Job } from "../model/HandlerJob.ts"
import type { BatchEntry, BatchRun } from "../worker/Batch.ts"

/** Where an isolated handler runs. */
export type Isolation = "thread" | "process"

/** What a pool is made with. */
export interface PoolOptions {
  readonly isolation: Isolation
  /** The handler module, as a file URL. */
  readonly module: string
  /** Members (threads or processes): the worker's concurrency. */
  readonly size: number
  readonly queue: string
  /** After the shutdown aborts a handler, how long it may take to end before it is stopped (ms). */
  readonly abortGraceMs: number
  /** Threads only: the V8 heap limits of each thread. */
  readonly resourceLimits?: ResourceLimits | undefined
  /** A replacement that failed to load (once per streak). */
  readonly onError: (e: unknown) => void
  /** Told how long each hard stop took, from the decision to the member gone (ms). */
  readonly onStopped?: ((ms: number) => void) | undefined
}

/** A running pool. */
export interface Pool {
  /** Resolves once every member has loaded the module; rejects with {@link HandlerModuleFailed} if it cannot. */
  readonly ready: Promise<void>
  /** Run `job`'s handler on a free member. */
  readonly run: (job: Job<unknown>) => Promise<unknown>
  /** Run the module's batch handler on `entries` (settling each) on a free member. */
  readonly runBatch: (entries: ReadonlyArray<BatchEntry<unknown>>) => BatchRun
  /** The members' process ids (process isolation) or thread ids. */
  readonly ids: () => number[]
  /** Stop every member; runs not ended reject with QueueClosed. */
  readonly close: () => Promise<void>
}
