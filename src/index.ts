/**
 * leaseq — a reliable job queue for TypeScript on Redis (Promise API).
 *
 * ```ts
 * import { Queue, Worker } from "leaseq"
 * ```
 * @module
 */
export type { Backoff } from "./engine/Backoff.ts"
export type { DeadJob, QueueStats } from "./engine/Commands.ts"
export {
  AckUndelivered,
  CallbackFailed,
  InvalidOptions,
  InvalidPayload,
  InvalidQueueName,
  JobCancelled,
  JobTimedOut,
  LayoutMismatch,
  LeaseLost,
  NotReplicated,
  OutcomeUnknown,
  QueueClosed,
  RedisCommandError,
  RedisUnavailable,
  ShutdownOverrun,
  WorkerLoopFailed,
  WrongKeyType,
} from "./engine/Errors.ts"
export type { EventsFrom, JobEvent, JobEventKind } from "./engine/Events.ts"
export { EvictionPolicyWarning } from "./engine/EvictionPolicy.ts"
export { DEAD_REASONS, type DeadReason } from "./engine/Failure.ts"
export type { Job, JobOptions } from "./engine/Job.ts"
export type { CancelledFrom, JobInfo, JobState } from "./engine/JobCommands.ts"
export { LAYOUT_VERSION, MAX_PARTITIONS } from "./engine/Keys.ts"
export type { Durability } from "./engine/partition/Durability.ts"
export type { PartitionedStats } from "./engine/partition/Producer.ts"
export { type FinishedJob, JobGone, WaitForTimeout } from "./engine/QueueEvents.ts"
export type { WorkerInfo } from "./engine/Registry.ts"
export type { SweepPassOptions, SweepTotals } from "./engine/Sweeper.ts"
export { Limits } from "./engine/Validate.ts"
export type { WorkerState } from "./engine/worker/Worker.ts"
export { type BulkJob, Queue, type QueueOptions } from "./promise/Queue.ts"
export { Worker, type WorkerEvents, type WorkerOptions } from "./promise/Worker.ts"
export type { ConnectionOption } from "./redis/Client.ts"
