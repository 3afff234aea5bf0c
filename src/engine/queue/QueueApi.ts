/**
 * The one contract of a queue's producer and admin side. The ordinary core
 * (`QueueCore.ts`) and the partitioned one (`partition/Producer.ts`) each implement it;
 * `makeQueue` (`partition/Queue.ts`) picks one, and both faces and the CLI are built on
 * it, so an operation over partitions (the merged dead list, say) is written once.
 * Payloads are JSON text here: a face encodes and decodes them.
 */
import type * as Effect from "effect/Effect"
import type { SweepPassOptions, SweepTotals } from "../admin/Sweeper.ts"
import type { DeadJob, QueueStats, ScriptFailure } from "../calls/Commands.ts"
import type { VerifyResult } from "../calls/Verify.ts"
import type {
  InvalidOptions,
  JobNotWaiting,
  NotReplicated,
  QueueClosed,
  RedisError,
  RedisUnavailable,
} from "../model/Errors.ts"
import type { RateLimit } from "../model/Flow.ts"
import type { QueueKeys } from "../model/Keys.ts"
import type { WorkerInfo } from "../model/Registry.ts"
import type { DeadChange, DeadTarget } from "../scripts/AdminScripts.ts"
import type { GroupLimits, GroupPage } from "../scripts/GroupScripts.ts"
import type { EncodedJob } from "./Adding.ts"
import type { DependencyControl } from "./Dependencies.ts"
import type { CancelChildren, CancelledFrom, JobInfo } from "./JobCommands.ts"
import type { ManualProcessing } from "./Manual.ts"
import type { QueueOps } from "./OpsApi.ts"
import type { Retention } from "./Retention.ts"
import type { ScheduleControl } from "./Schedules.ts"

export type { DeadChange, DeadTarget } from "../scripts/AdminScripts.ts"

/** What job control can fail with. */
export type ControlError = InvalidOptions | QueueClosed | ScriptFailure | RedisUnavailable

/** Options of `changePriority`. */
export interface PriorityOptions {
  /** To the front of its priority (runs next among it) instead of the back; for a waiting job (a delayed one goes to the back when due). Default false. */
  readonly lifo?: boolean | undefined
}

/** Options of `cancel`. */
export interface CancelOptions {
  /**
   * A parent waiting for its children (flows, docs/flows.md): `"cancel"` its pending children
   * too, those no other parent waits on, recursively, by the sweep a bounded page a call;
   * `"keep"` them. Default `"cancel"`.
   */
  readonly children?: CancelChildren | undefined
}

/** The job-control calls of a queue (one or partitioned), as Effects; payloads as stored (JSON text). */
export interface JobControl {
  readonly getJob: (id: string) => Effect.Effect<JobInfo<string> | undefined, ControlError>
  readonly cancel: (id: string, options?: CancelOptions) => Effect.Effect<CancelledFrom | undefined, ControlError>
  /** Give a waiting or delayed job a new priority (`lifo`: at its front): the state it is in; {@link JobNotWaiting} for any other. */
  readonly changePriority: (
    id: string,
    priority: number,
    options?: PriorityOptions,
  ) => Effect.Effect<"waiting" | "delayed", ControlError | JobNotWaiting>
  readonly pause: Effect.Effect<boolean, ControlError>
  readonly resume: Effect.Effect<boolean, ControlError>
  readonly isPaused: Effect.Effect<boolean, ControlError>
  readonly clearDedupe: (key: string) => Effect.Effect<boolean, ControlError>
  /** The id of the job holding dedupe key `key`, or undefined when it is free; partitioned: the key's partition. */
  readonly dedupeHolder: (key: string) => Effect.Effect<string | undefined, ControlError | RedisError>
  /** Set (`{ max, perMs }`) or clear (null: lifting a RateLimited hold too) the queue-wide rate limit; partitioned: each partition's. */
  readonly setRateLimit: (limit: unknown) => Effect.Effect<void, ControlError>
  /** The rate limit, or null when none is set. */
  readonly rateLimit: Effect.Effect<RateLimit | null, ControlError>
  /** Lift a RateLimited hold (`meta.heldUntil`): true when one was in force; partitioned: every partition's, true when any was. */
  readonly clearHold: Effect.Effect<boolean, ControlError>
  /** Set (a whole number) or clear (null) the cap of jobs active at once across all workers; partitioned: each partition's. */
  readonly setConcurrency: (n: unknown) => Effect.Effect<void, ControlError>
  /** The concurrency cap, or null when none is set. */
  readonly concurrency: Effect.Effect<number | null, ControlError>
  /** Store the retention policy (validated first: bad input fails InvalidOptions, nothing written). */
  readonly setRetention: (policy: unknown) => Effect.Effect<void, ControlError>
  /** The retention policy (of the first partition: every partition gets the same). */
  readonly retention: Effect.Effect<Retention, ControlError | RedisError>
}

/** The group calls of a queue (one or partitioned), as Effects. */
export interface GroupControl {
  /** Set (`limits`) or clear (null) the own limits of `group`, or the default of every group (`group` undefined). */
  readonly setGroupLimits: (group: string | undefined, limits: GroupLimits | null) => Effect.Effect<void, ControlError>
  /** Pause a group: none of its jobs is leased until resumed. True when it was not paused. */
  readonly pauseGroup: (group: string) => Effect.Effect<boolean, ControlError>
  /** Resume a paused group. True when it was paused. */
  readonly resumeGroup: (group: string) => Effect.Effect<boolean, ControlError>
  /** A page of the groups in name order, from `cursor` (a page's `cursor`; default the first), `count` (1–1000, default 100). */
  readonly groups: (options?: {
    readonly cursor?: string
    readonly count?: number
  }) => Effect.Effect<GroupPage, ControlError>
}

/** Stats of a queue: for a partitioned one, the sums, with each partition's own in `partitions` (index order). */
export type AnyQueueStats = QueueStats & { readonly partitions?: ReadonlyArray<QueueStats> }

/** A dead job; `queue` names the partition it is in (`<name>~<i>`) when the queue is partitioned, else is absent. */
export type ListedDeadJob = DeadJob & { readonly queue?: string }

/** A page of dead jobs, oldest death first, and how many are dead in all. */
export interface DeadPage {
  readonly total: number
  readonly jobs: Array<ListedDeadJob>
}

/** What `add` and `addBulk` can fail with (`NotReplicated` only with `durability`, see `makeQueue`). */
export type AddFailure = InvalidOptions | QueueClosed | ScriptFailure | NotReplicated

/**
 * A queue's producer and admin side. Every call fails with {@link QueueClosed} once
 * `markClosed` was called (checked when it runs); bad input fails with
 * {@link InvalidOptions} before anything is sent.
 */
export interface QueueApi {
  /** The queue name (a partitioned queue's own name, not a partition's). */
  readonly name: string
  /** How many partitions: 1 for an ordinary queue. */
  readonly partitions: number
  /** The keys of every (sub-)queue, in partition order: one entry for an ordinary queue. */
  readonly keysByPartition: ReadonlyArray<QueueKeys>
  /** Check the key types and layout of every (sub-)queue, once; fails with QueueClosed once closed. */
  readonly ensureOpen: Effect.Effect<void, QueueClosed | ScriptFailure>
  /** Add one job; its id (a partitioned queue picks the partition by dedupe key, else round robin). */
  readonly add: (job: EncodedJob) => Effect.Effect<string, AddFailure>
  /** Add many jobs, all validated first; their ids in order (partitioned: one call per partition touched). */
  readonly addBulk: (jobs: ReadonlyArray<EncodedJob>) => Effect.Effect<Array<string>, AddFailure>
  /** Counts and counters (partitioned: summed, each partition's in `partitions`). */
  readonly stats: Effect.Effect<AnyQueueStats, QueueClosed | ScriptFailure>
  /** The live workers (partitioned: of every partition, a worker once per partition it serves). */
  readonly workers: Effect.Effect<ReadonlyArray<WorkerInfo>, QueueClosed | ScriptFailure>
  /** One bounded sweep pass (partitioned: of every partition, the totals summed). */
  readonly sweep: (
    options?: SweepPassOptions,
  ) => Effect.Effect<SweepTotals, InvalidOptions | QueueClosed | ScriptFailure>
  /** A page of dead jobs from `offset` (0 = the oldest death), merged by time of death over partitions. Read-only. */
  readonly deadList: (offset: number, count: number) => Effect.Effect<DeadPage, RedisError | QueueClosed>
  /**
   * Dead jobs back to wait: these ids (looked for in every partition; `missing` are those no
   * partition had dead), or `all: n`, the oldest n of each partition.
   */
  readonly deadRetry: (target: DeadTarget) => Effect.Effect<DeadChange, ScriptFailure | QueueClosed>
  /** Dead jobs deleted for good, chosen as for {@link QueueApi.deadRetry}. */
  readonly deadPurge: (target: DeadTarget) => Effect.Effect<DeadChange, ScriptFailure | QueueClosed>
  /** Every (sub-)queue's invariants, page by page (partitioned: lines prefixed `[<name>~<i>]`). Read-only. */
  readonly verify: (maxLines: number, pageSize?: number) => Effect.Effect<VerifyResult, ScriptFailure | QueueClosed>
  /** Look up and cancel jobs, pause and resume, free dedupe keys (see `JobControl.ts`). */
  readonly control: JobControl
  /** Recurring jobs: create, replace, remove and list schedules (see `Schedules.ts`; partitioned: in partition 0). */
  readonly schedules: ScheduleControl
  /** List jobs by state; drain, clean, obliterate; promote, reschedule, retry, update one job (see `OpsApi.ts`). */
  readonly ops: QueueOps
  /** Fair groups: limits, pause and resume a group, the list of groups (see `Groups.ts`). */
  readonly groupControl: GroupControl
  /** Lease jobs and settle them by id and token, for a consumer that is not a Worker (see `Manual.ts`). */
  readonly manual: ManualProcessing
  /** Flows: jobs that wait for other jobs (see `Dependencies.ts`; partitioned: refused). */
  readonly dependencies: DependencyControl
  /** Refuse every later call with {@link QueueClosed} (the face closes the connection). */
  readonly markClosed: () => void
  readonly isClosed: () => boolean
}
