/**
 * leaseq — a reliable job queue for TypeScript on Redis (Promise API).
 *
 * ```ts
 * import { Queue, Worker } from "leaseq"
 * ```
 * @module
 */

export type { SweepPassOptions, SweepTotals } from "./engine/admin/Sweeper.ts"
export type { DeadJob, QueueStats } from "./engine/calls/Commands.ts"
export { EvictionPolicyWarning } from "./engine/calls/EvictionPolicy.ts"
export type { EventsFrom, JobEvent, JobEventKind } from "./engine/events/Events.ts"
export {
  type FinishedJob,
  JobGone,
  WaitForTimeout,
} from "./engine/events/QueueEvents.ts"
export { HandlerCrashed, HandlerModuleFailed } from "./engine/isolation/IsolationErrors.ts"
export type { Isolation } from "./engine/isolation/Pool.ts"
export type { Backoff, JobBackoff } from "./engine/model/Backoff.ts"
export {
  AckUndelivered,
  CallbackFailed,
  GroupFull,
  IllegalStateMove,
  InvalidOptions,
  InvalidPayload,
  InvalidQueueName,
  JobCancelled,
  JobNotWaiting,
  JobTimedOut,
  LayoutMismatch,
  LeaseLost,
  LoopBlocked,
  NotReplicated,
  OutcomeUnknown,
  QueueClosed,
  QueueHasActiveJobs,
  RedisCommandError,
  RedisUnavailable,
  ShutdownOverrun,
  WorkerLoopFailed,
  WorkerNotRunning,
  WrongJobState,
  WrongKeyType,
} from "./engine/model/Errors.ts"
export { DEAD_REASONS, type DeadReason } from "./engine/model/Failure.ts"
export { type FlowLimits, type RateLimit, RateLimited, Snooze } from "./engine/model/Flow.ts"
export { LAYOUT_VERSION } from "./engine/model/Keys.ts"
export { MAX_PARTITIONS } from "./engine/model/QueueName.ts"
export type { WorkerInfo } from "./engine/model/Registry.ts"
export { Limits } from "./engine/model/Validate.ts"
export type { Durability } from "./engine/partition/Durability.ts"
export type { PartitionedStats } from "./engine/partition/Producer.ts"
export type { Job, JobOptions } from "./engine/queue/Job.ts"
export type { CancelChildren, CancelledFrom, JobInfo, JobState } from "./engine/queue/JobCommands.ts"
export type { FailOptions, ReservedJob, ReserveOptions } from "./engine/queue/Manual.ts"
export type {
  CleanResult,
  CleanState,
  DrainResult,
  JobPage,
  ListedJob,
  ListOptions,
  ListState,
  MovedFrom,
} from "./engine/queue/OpsApi.ts"
export type { CancelOptions, PriorityOptions } from "./engine/queue/QueueApi.ts"
export type {
  ScheduleChange,
  ScheduledJob,
  ScheduledJobOptions,
  ScheduleInfo,
  SchedulePage,
  SchedulePageOptions,
  ScheduleSet,
  ScheduleWhen,
} from "./engine/queue/Schedules.ts"
export type { PauseOptions, WorkerState } from "./engine/worker/Worker.ts"
export type { BatchHandler, BatchJob, BatchOptions } from "./promise/Batch.ts"
export { byName, type NamedJob, UnknownJobName } from "./promise/ByName.ts"
export type {
  AddFlowOptions,
  ChildFailurePolicy,
  Dependency,
  DependencyOptions,
  DependencyPage,
  DependencyRef,
  FlowIds,
  FlowJob,
} from "./promise/Dependencies.ts"
export { type BulkJob, Queue, type QueueOptions } from "./promise/Queue.ts"
export {
  type BatchWorkerOptions,
  type IsolatedBatchWorkerOptions,
  type IsolatedWorkerOptions,
  Worker,
  type WorkerEventName,
  type WorkerEvents,
  type WorkerOptions,
} from "./promise/Worker.ts"
export type { ConnectionOption } from "./redis/Client.ts"
