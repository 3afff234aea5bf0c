/**
 * leaseq — a reliable job queue for TypeScript on Redis (Promise API).
 *
 * ```ts
 * import { Queue, Worker } from "leaseq"
 * ```
 * @module
 */
export type { Backoff } from "./Backoff.ts"
export type { DeadJob, QueueStats } from "./Commands.ts"
export {
  AckUndelivered,
  CallbackFailed,
  InvalidOptions,
  InvalidPayload,
  InvalidQueueName,
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
} from "./Errors.ts"
export { EvictionPolicyWarning } from "./EvictionPolicy.ts"
export type { Job, JobOptions } from "./Job.ts"
export { LAYOUT_VERSION, MAX_PARTITIONS } from "./Keys.ts"
export type { Durability } from "./partition/Durability.ts"
export type { PartitionedStats } from "./partition/Producer.ts"
export { type BulkJob, Queue, type QueueOptions } from "./promise/Queue.ts"
export { Worker, type WorkerEvents, type WorkerOptions } from "./promise/Worker.ts"
export type { ConnectionOption } from "./redis/Client.ts"
export type { SweepPassOptions, SweepTotals } from "./Sweeper.ts"
export { Limits } from "./Validate.ts"
export type { WorkerState } from "./Worker.ts"
