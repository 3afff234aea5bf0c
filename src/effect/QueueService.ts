/**
 * The queue service's type: what `yield* MyQueue` gives (see LeaseQueue.ts, which
 * builds it), the errors of its adds, and what a worker needs of it.
 */
import type { Effect, Stream } from "effect"
import type { SweepPassOptions, SweepTotals } from "../engine/admin/Sweeper.ts"
import type { ScriptFailure } from "../engine/calls/Commands.ts"
import type { VerifyOptions, VerifyResult } from "../engine/calls/Verify.ts"
import type { EventsFrom, JobEvent } from "../engine/events/Events.ts"
import type { FinishedJob, JobGone, WaitForTimeout } from "../engine/events/QueueEvents.ts"
import type { InvalidOptions, InvalidPayload, NotReplicated, QueueClosed, RedisError } from "../engine/model/Errors.ts"
import type { WorkerInfo } from "../engine/model/Registry.ts"
import type { AnyQueue, AnyQueueStats } from "../engine/partition/Queue.ts"
import type { GroupLimits, GroupPage } from "../engine/queue/Groups.ts"
import type { BulkJob, JobOptions } from "../engine/queue/Job.ts"
import type { ControlError } from "../engine/queue/JobControl.ts"
import type { FailOptions, LeaseRefused, ReservedJob, ReserveOptions } from "../engine/queue/Manual.ts"
import type { EffectFace, JobControlOf, ListedDeadJob } from "../engine/queue/QueueApi.ts"
import type {
  ScheduledJob,
  ScheduleInfo,
  SchedulePage,
  SchedulePageOptions,
  ScheduleSet,
  ScheduleWhen,
} from "../engine/queue/Schedules.ts"
import type { RedisClient } from "../redis/Client.ts"
import type { DependencyMembers } from "./Dependencies.ts"
import type { PayloadCodec } from "./Payload.ts"
import type { QueueOperations } from "./QueueOps.ts"

/**
 * Everything `add` and `addBulk` can fail with. Nothing is written when they fail, except
 * with `OutcomeUnknown`: the call was sent and no reply came within `callTimeoutMs`
 * (default 10 s), so the jobs (`jobIds`) may or may not be stored; and with
 * `NotReplicated` (only with `durability`): the jobs were written, not yet replicated.
 */
export type AddError = InvalidOptions | InvalidPayload | QueueClosed | ScriptFailure | NotReplicated

/** @internal What a worker needs from the queue it runs on. */
export interface Internals<A> {
  /** The queue, ordinary or partitioned, with its validated `partitions` and `durability`. */
  readonly queue: AnyQueue
  readonly client: RedisClient
  /** Told of each failed connection attempt of `client` (and of its duplicates), as a Redis error naming the server. */
  readonly connectionErrors: Set<(error: RedisError) => void>
  readonly codec: PayloadCodec<A>
  /** Workers running on this queue: closed before the queue's connection is. */
  readonly workers: Set<{ readonly close: Effect.Effect<void> }>
}

/** @internal The key of {@link Internals} on a service built by this module. */
export const InternalsKey: unique symbol = Symbol.for("leaseq/effect/QueueInternals")

/**
 * The queue service: what `yield* MyQueue` gives; `A` is the payload type, `Out` what its
 * handlers return (the `result` of `getJob` and `waitFor`; default unknown). Every method
 * validates first and writes nothing on bad input. Its job-control members (`getJob`, `cancel`,
 * `pause`, `setRateLimit`, …) are declared once, in the engine's `JobControlOf`; `getJob` decodes
 * the payload with the queue's schema (a stored payload that does not decode fails with `InvalidPayload`).
 */
export interface Service<A, Out = unknown>
  extends JobControlOf<EffectFace<A, Out, InvalidPayload>>,
    QueueOperations<A>,
    DependencyMembers<A> {
  /** The queue name. */
  readonly name: string
  /** The key prefix (default "leaseq"). */
  readonly prefix: string
  /** Add a job; succeeds with its id (a ULID, or `options.id`) — or, when `options.dedupeKey` or `options.id` matched a job, that job's id. */
  readonly add: (payload: A, options?: JobOptions) => Effect.Effect<string, AddError>
  /** Add up to 10 000 jobs in one Redis call, all validated and encoded first: all or nothing. */
  readonly addBulk: (jobs: ReadonlyArray<BulkJob<A>>) => Effect.Effect<ReadonlyArray<string>, AddError>
  /** Counts (waiting, active, expired-but-unswept, delayed, dead, …) and counters; for a partitioned queue, summed, with each partition's in `partitions`. */
  readonly stats: Effect.Effect<AnyQueueStats, QueueClosed | ScriptFailure>
  /**
   * The queue's live workers, each as its last heartbeat recorded it (see `Queue.workers`
   * of the Promise face). O(W) for W registered workers.
   */
  readonly workers: Effect.Effect<ReadonlyArray<WorkerInfo>, QueueClosed | ScriptFailure>
  /** One bounded sweep pass: reclaim expired leases, promote due delayed jobs. Default limit 500 per call. */
  readonly sweep: (
    options?: SweepPassOptions,
  ) => Effect.Effect<SweepTotals, InvalidOptions | QueueClosed | ScriptFailure>
  /** A page of dead jobs, oldest death first (partitioned: over every partition, each job naming its own in `queue`). Defaults: offset 0, count 100 (at most 10 000). */
  readonly deadJobs: (options?: {
    readonly offset?: number
    readonly count?: number
  }) => Effect.Effect<
    { readonly total: number; readonly jobs: ReadonlyArray<ListedDeadJob> },
    InvalidOptions | QueueClosed | RedisError
  >
  /** Give dead jobs (by id) a fresh set of attempts; succeeds with how many were retried (unknown ids are skipped). */
  readonly retryDead: (
    ids: ReadonlyArray<string>,
  ) => Effect.Effect<number, InvalidOptions | QueueClosed | ScriptFailure>
  /** Delete dead jobs (by id) for good; succeeds with how many were purged (unknown ids are skipped). */
  readonly purgeDead: (
    ids: ReadonlyArray<string>,
  ) => Effect.Effect<number, InvalidOptions | QueueClosed | ScriptFailure>
  /**
   * Check the queue's invariants page by page (see `Queue.verify` of the Promise face):
   * O(jobs) in short read-only calls of `pageSize` entries (default 100, 1 .. 10 000);
   * lists at most `maxLines` violations (default 100; the count is always complete).
   * Exact on a queue nobody changes meanwhile, approximate under concurrent change.
   */
  readonly verify: (
    options?: VerifyOptions,
  ) => Effect.Effect<VerifyResult, InvalidOptions | QueueClosed | ScriptFailure>
  /**
   * The queue's events from `from` ("now" by default, "start", or an event's `eventId`):
   * a Stream that never ends by itself, on a connection of its own (closed when the
   * Stream ends); after a lost connection it reads on from the last event it passed on.
   * Fails with {@link InvalidOptions} for a bad `from`.
   */
  readonly events: (options?: {
    readonly from?: EventsFrom | undefined
  }) => Stream.Stream<JobEvent, InvalidOptions | RedisError | QueueClosed>
  /**
   * Succeeds once job `id` has ended (completed, dead or cancelled), with what the queue
   * knows of it; fails with {@link WaitForTimeout} when the job is still pending after
   * `timeoutMs` (default 60 000), with {@link JobGone} when the queue no longer has it and
   * no retained event says how it ended.
   */
  readonly waitFor: (
    id: string,
    options?: { readonly timeoutMs?: number | undefined },
  ) => Effect.Effect<FinishedJob<Out>, InvalidOptions | WaitForTimeout | JobGone | ScriptFailure | QueueClosed>
  /** Keep about `maxLen` stream entries (0: no events; whole number 0 … 10 000 000; default until set 10 000). O(1). */
  readonly setEventRetention: (maxLen: number) => Effect.Effect<void, InvalidOptions | RedisError | QueueClosed>
  /** The queue's event retention. */
  readonly eventRetention: Effect.Effect<number, RedisError | QueueClosed>
  /**
   * Create or replace schedule `name`: each tick of `when` (`{ every: ms }` or `{ cron, tz }`)
   * makes one job, once, however many sweepers run (see docs/schedules.md). A replace with
   * the same timing keeps the next run. Bad input fails before anything is written.
   */
  readonly schedule: (
    name: string,
    when: ScheduleWhen,
    job: ScheduledJob<A>,
  ) => Effect.Effect<ScheduleSet, ControlError | InvalidPayload>
  /** Remove schedule `name` (jobs it made stay); false when there was none. */
  readonly unschedule: (name: string) => Effect.Effect<boolean, ControlError>
  /** The schedules, soonest next run first, each with `nextRunAt` (ms, Redis clock). */
  readonly schedules: Effect.Effect<ReadonlyArray<ScheduleInfo<A>>, ControlError | InvalidPayload>
  /** One page of the schedules: at most `count` (1–100, default 100) and 1 MiB of schedule JSON; `cursor` goes on. */
  readonly schedulePage: (
    options?: SchedulePageOptions,
  ) => Effect.Effect<SchedulePage<A>, ControlError | InvalidPayload>
  /** `(limits)`: the default of every group; `(group, limits)`: one group's own (replaces the default); null clears. */
  readonly setGroupLimits: (
    group: string | GroupLimits | null,
    limits?: GroupLimits | null,
  ) => Effect.Effect<void, ControlError>
  /** Lease none of `group`'s jobs until resumed (its running jobs go on); false when paused already. O(log N). */
  readonly pauseGroup: (group: string) => Effect.Effect<boolean, ControlError>
  /** Serve `group` again, waking idle workers; false when it was not paused. O(log N). */
  readonly resumeGroup: (group: string) => Effect.Effect<boolean, ControlError>
  /** A page of the groups in name order (waiting, active, paused, own limits), from `cursor`; `count` default 100. */
  readonly groups: (options?: {
    readonly cursor?: string
    readonly count?: number
  }) => Effect.Effect<GroupPage, ControlError>
  /**
   * Manual processing (see `Queue.reserve` of the Promise face): lease up to `count` ready
   * jobs (default 1, at most 500) for `leaseMs` (default 30 000), payloads decoded with the
   * queue's schema (a job that does not decode goes to dead, "invalid-payload"). The Effect
   * is numbered when built: running the same Effect again is a re-send and answers the same
   * leases. A partitioned queue leases from one partition a call (the next in turn with jobs).
   */
  readonly reserve: (options?: ReserveOptions) => Effect.Effect<ReadonlyArray<ReservedJob<A>>, ControlError>
  /** Complete a leased job by id and token (`result` kept, as JSON, while completed jobs are retained). A stale token fails with `LeaseLost` (`JobCancelled` after a cancel) and changes nothing. */
  readonly complete: (id: string, token: number, result?: unknown) => Effect.Effect<void, ControlError | LeaseRefused>
  /** Fail a leased job: an attempt counted, retried after its backoff or dead (`retry: false`, or attempts used up). */
  readonly fail: (
    id: string,
    token: number,
    error: unknown,
    options?: FailOptions,
  ) => Effect.Effect<"retry" | "dead", ControlError | LeaseRefused>
  /** Extend a lease to `leaseMs` from now; succeeds with the new deadline (ms, Redis clock). */
  readonly extend: (id: string, token: number, leaseMs: number) => Effect.Effect<number, ControlError | LeaseRefused>
  /** Give a leased job back (it runs next, no attempt spent). */
  readonly release: (id: string, token: number) => Effect.Effect<void, ControlError | LeaseRefused>
  /** @internal Present on services built by {@link make}; a worker needs it. Absent on test doubles. */
  readonly [InternalsKey]?: Internals<A>
}
