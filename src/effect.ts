/**
 * leaseq — the Effect face: queues as services and layers, workers as scoped Effects
 * and layers, payloads typed by an Effect `Schema`. The same engine as the Promise API.
 *
 * ```ts
 * import { Context, Effect, Layer, Schema } from "effect"
 * import { LeaseQueue, LeaseWorker } from "leaseq/effect"
 *
 * const Email = Schema.Struct({ to: Schema.String })
 * class Emails extends Context.Service<Emails, LeaseQueue.Service<typeof Email.Type>>()("app/Emails") {}
 * const EmailsLive = LeaseQueue.layerConfig(Emails, { name: "emails", schema: Email })
 *
 * const WorkerLive = LeaseWorker.layer(Emails, (job) => Effect.log(`to ${job.payload.to}`), { concurrency: 10 })
 * Layer.launch(WorkerLive.pipe(Layer.provide(EmailsLive)))
 * ```
 *
 * Errors are the same tagged classes as the Promise API's; use `Effect.catchTag`.
 * @module
 */

export { byName, type NamedJob, UnknownJobName } from "./effect/ByName.ts"
export * as LeaseQueue from "./effect/LeaseQueue.ts"
export type { Job } from "./effect/LeaseWorker.ts"
export * as LeaseWorker from "./effect/LeaseWorker.ts"
export type { PayloadSchema, ValidationError } from "./effect/Payload.ts"
export type { SweepPassOptions, SweepTotals } from "./engine/admin/Sweeper.ts"
export type { DeadJob, QueueStats, ScriptFailure, SweepResult } from "./engine/calls/Commands.ts"
export type { EventsFrom, JobEvent, JobEventKind } from "./engine/events/Events.ts"
export {
  type FinishedJob,
  JobGone,
  WaitForTimeout,
} from "./engine/events/QueueEvents.ts"
export { HandlerCrashed, HandlerModuleFailed } from "./engine/isolation/IsolationErrors.ts"
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
  type RedisError,
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
export type { WorkerInfo } from "./engine/model/Registry.ts"
export { Limits } from "./engine/model/Validate.ts"
export type { Durability } from "./engine/partition/Durability.ts"
export type { PartitionedStats } from "./engine/partition/Producer.ts"
export type { JobOptions } from "./engine/queue/Job.ts"
export type { CancelChildren, CancelledFrom, JobInfo, JobState } from "./engine/queue/JobCommands.ts"
export type { ControlError } from "./engine/queue/JobControl.ts"
export type { FailOptions, LeaseRefused, ReservedJob, ReserveOptions } from "./engine/queue/Manual.ts"
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
export type { ConnectionOption } from "./redis/Client.ts"
