/**
 * What an Effect worker is given: its hooks and options, for a handler, a batch handler or
 * a handler module (isolation).
 */
import type { Cause, Effect } from "effect"
import type { IsolationOptions } from "../engine/isolation/Options.ts"
import type { LoopBlocked } from "../engine/model/Errors.ts"
import type { DeadReason } from "../engine/model/Failure.ts"
import type { Durability } from "../engine/partition/Durability.ts"
import type { LeaseRef } from "../engine/scripts/LeaseScripts.ts"
import type {
  BatchOptions as EngineBatchOptions,
  WorkerOptions as EngineOptions,
} from "../engine/worker/WorkerOptions.ts"
import type { Job } from "./EffectJob.ts"

/**
 * What happened to jobs. Each hook returns an Effect, run in its own fiber (hooks never
 * delay the worker); hooks still running 2 s after the worker closed are interrupted.
 * A hook that fails is logged. Defaults: none, except `onError`, which logs a warning.
 */
export interface Hooks<A, Out, E, R> {
  /** The handler succeeded and the job was acknowledged. */
  readonly onCompleted?: ((job: Job<A>, result: Out) => Effect.Effect<void, never, R>) | undefined
  /**
   * The handler failed (or died, or ran past its `timeoutMs`: then the cause is a defect
   * carrying the `JobTimedOut`); `willRetry` is false when the job went to dead.
   */
  readonly onFailed?:
    | ((job: Job<A>, cause: Cause.Cause<E>, willRetry: boolean) => Effect.Effect<void, never, R>)
    | undefined
  /**
   * The lease was lost (reclaimed by a sweep, or self-fenced): the handler was interrupted and
   * did not ack. `cause`: the handler blocked the event loop for a large share of the lease meanwhile.
   */
  readonly onLeaseLost?:
    | ((job: LeaseRef, reason: "lease-lost" | "self-fenced", cause?: LoopBlocked) => Effect.Effect<void, never, R>)
    | undefined
  /** A handler blocked the event loop for at least half a lease (heartbeats could not run): use `isolation: "thread"`. */
  readonly onLoopBlocked?: ((blocked: LoopBlocked) => Effect.Effect<void, never, R>) | undefined
  /** The job was cancelled while its handler ran: the handler was interrupted (its signal's reason a `JobCancelled`), it did not ack, and the job is not retried. */
  readonly onCancelled?: ((job: LeaseRef) => Effect.Effect<void, never, R>) | undefined
  /** The job went to dead: reason `failed` (attempts used up), `timeout` (its last attempt timed out), `invalid-payload` (it did not decode) or `lease-expired` (this worker's sweep found its lease expired once too often). */
  readonly onDead?: ((job: LeaseRef, reason: DeadReason, error: unknown) => Effect.Effect<void, never, R>) | undefined
  /** The worker had work and now has none: its last reserve found no job ready, none of its jobs runs or waits for its ack (BullMQ's worker `drained`; once per move to idle; per partition). */
  readonly onDrained?: (() => Effect.Effect<void, never, R>) | undefined
  /**
   * An error the worker survived (it keeps retrying): a Redis error (`RedisUnavailable`
   * naming the server, once per failed connection attempt of the queue's connection or of
   * the worker's own, also while the worker waits for an unreachable Redis to start), a
   * complete not confirmed by replicas in time (`NotReplicated`, with `durability`), a
   * backoff function that threw or answered nonsense (`CallbackFailed`, `InvalidOptions`),
   * a loop that failed (`WorkerLoopFailed`). A hook that fails is logged, not passed here.
   * Default: `Effect.logWarning`, at most one warning per 30 s (saying how many were not shown).
   */
  readonly onError?: ((error: unknown) => Effect.Effect<void, never, R>) | undefined
}

/**
 * Options of a worker: the engine's options (concurrency 1, leaseMs 30 000, heartbeatMs
 * leaseMs / 3, exponential backoff from 1 s, shutdownGraceMs 10 000, shutdownAbortGraceMs
 * 5000, leaseGraceMs max(1000, leaseMs / 10), in-process sweeping on,
 * blockTimeoutMs 5000 — see `WorkerOptions`), `durability` and the hooks. The prefix,
 * connection and `partitions` are the queue's.
 */
export interface Options<A, Out, E, R>
  extends Omit<EngineOptions, "prefix" | "batch">,
    Hooks<A, Out, E, R>,
    IsolationOptions {
  /**
   * Confirm each `complete` reached this many replicas (Redis `WAIT`, on one more
   * connection of its own so heartbeats never queue behind it). A complete not confirmed
   * in time is reported to `onError` as a `NotReplicated` (it was written; it may be redone
   * after a failover). `false` turns it off. Default: the queue's `durability` (off unless
   * the queue layer sets it).
   */
  readonly durability?: Durability | false | undefined
  /** Not for a one-job handler: with `batch`, the handler takes `jobs` (see {@link BatchOptions}). */
  readonly batch?: undefined
}

/** Options of a batch worker: `batch: { size, waitMs }` hands the handler up to `size` jobs at once (docs/flow-control.md). */
export interface BatchOptions<A, Out, E, R> extends Omit<Options<A, Out, E, R>, "batch"> {
  readonly batch: EngineBatchOptions
}

/** Options of a worker given a handler module (a path or file URL whose default export is the handler): `isolation` is required. */
export interface IsolatedOptions<A, Out, E, R> extends Options<A, Out, E, R> {
  readonly isolation: "thread" | "process"
}

/** Options of a batch worker given a handler module: its default export is the batch handler (a plain function of `jobs`). */
export interface IsolatedBatchOptions<A, Out, E, R> extends BatchOptions<A, Out, E, R> {
  readonly isolation: "thread" | "process"
}
