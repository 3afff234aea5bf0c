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
import type { CancelChildren, CancelledFrom, JobInfo, JobState } from "./JobCommands.ts"
import type { ManualProcessing } from "./Manual.ts"
import type { QueueOps } from "./OpsApi.ts"
import type { Retention, RetentionInput } from "./Retention.ts"
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

/**
 * What a face makes of an engine call (the Effect face: an `Effect`; the Promise face: a
 * Promise), so a capability is declared once for every face (see {@link JobControlOf}):
 * `call` is the result of a call with arguments, `value` a member without (an Effect, or a
 * method returning a Promise); `A` and `E` are the call's success and error; `payload` and
 * `result` the job's payload and result types, `decodeError` what decoding a payload fails with.
 */
export interface Face {
  readonly A: unknown
  readonly E: unknown
  readonly call: unknown
  readonly value: unknown
  readonly payload: unknown
  readonly result: unknown
  readonly decodeError: unknown
}

/** What a call of face `F` succeeding with `A`, failing with `E`, returns. */
export type Call<F extends Face, A, E> = (F & { readonly A: A; readonly E: E })["call"]

/** What a member of face `F` without arguments is (succeeding with `A`, failing with `E`). */
export type Value<F extends Face, A, E> = (F & { readonly A: A; readonly E: E })["value"]

/** The engine's and the Effect face's form: each call an `Effect`; payloads as `P` (the engine: JSON text). */
export interface EffectFace<P = string, R = unknown, D = never> extends Face {
  readonly call: Effect.Effect<this["A"], this["E"]>
  readonly value: Effect.Effect<this["A"], this["E"]>
  readonly payload: P
  readonly result: R
  readonly decodeError: D
}

/** The Promise face's form: each call a Promise (rejecting with the error object as it is). */
export interface PromiseFace<P = unknown, R = unknown> extends Face {
  readonly call: Promise<this["A"]>
  readonly value: () => Promise<this["A"]>
  readonly payload: P
  readonly result: R
  readonly decodeError: never
}

/**
 * The job-control calls of a queue (one or partitioned), declared once for every face `F`:
 * the engine's {@link JobControl} (Effects, payloads as stored JSON text), the Effect
 * `LeaseQueue.Service` (Effects, payloads decoded) and the Promise `Queue` (Promises) each
 * extend it. Every call validates first (bad input fails with {@link InvalidOptions}, nothing
 * sent) and fails with {@link QueueClosed} once the queue is closed.
 */
export interface JobControlOf<F extends Face> {
  /**
   * What the queue knows about job `id` — state, payload, attempts, lease, result, last
   * error, dedupe key, progress — or undefined when it is unknown (never added, or finished
   * and not retained: see `setRetention`). O(1) hash reads and at most five O(log N)
   * lookups, in every state. Partitioned: every partition is asked at once.
   */
  readonly getJob: (
    id: string,
  ) => Call<F, JobInfo<F["payload"], F["result"]> | undefined, ControlError | F["decodeError"]>
  /**
   * The state job `id` is in (`waiting`, `waiting-children`, `delayed`, `active`, `completed`,
   * `dead` or `cancelled`), or undefined when it is unknown (never added, or finished and not
   * retained). BullMQ's `getJobState` (which answers "unknown" there). Read-only, one round
   * trip, as `getJob` (partitioned: every partition asked at once).
   */
  readonly getJobState: (id: string) => Call<F, JobState | undefined, ControlError>
  /**
   * Cancel job `id` for good: the state it was in, or undefined when unknown or finished. An
   * active job's lease is revoked at once (its late complete is refused, no retry; its worker
   * learns it at its next heartbeat). A parent's pending children no other parent waits on are
   * cancelled too, by the sweep in bounded pages, unless `{ children: "keep" }` (docs/flows.md).
   * O(log N); O(N) in the jobs waiting at priority 0 for such a job.
   */
  readonly cancel: (id: string, options?: CancelOptions) => Call<F, CancelledFrom | undefined, ControlError>
  /**
   * Give job `id` a new `priority` (0 .. 1 000 000, lower runs first): a waiting job moves to
   * the back of it (`{ lifo: true }`: to its front), a delayed one has it when due. Succeeds
   * with its state; fails with {@link JobNotWaiting} when it is active, finished or unknown.
   * See docs/flow-control.md.
   */
  readonly changePriority: (
    id: string,
    priority: number,
    options?: PriorityOptions,
  ) => Call<F, "waiting" | "delayed", ControlError | JobNotWaiting>
  /** Stop handing out jobs until `resume` (running jobs go on, adds still come in); false when paused already. O(1). */
  readonly pause: Value<F, boolean, ControlError>
  /** Hand out jobs again, waking idle workers; false when it was not paused. O(1). */
  readonly resume: Value<F, boolean, ControlError>
  /** True while the queue is paused (partitioned: any partition). O(1). */
  readonly isPaused: Value<F, boolean, ControlError>
  /** Free dedupe key `key` now (TTL or until finished), so the next add with it is accepted; true when it was held. O(log N). */
  readonly clearDedupe: (key: string) => Call<F, boolean, ControlError>
  /**
   * The id of the job holding dedupe key `key` (until its `dedupeTtlMs` runs out on the Redis
   * clock, or until it finishes with `dedupeUntil: "finished"`), or undefined when the key is
   * free: an add with it now would be accepted. BullMQ's `getDeduplicationJobId`. Read-only,
   * O(log N), one round trip (partitioned: to the key's partition).
   */
  readonly dedupeHolder: (key: string) => Call<F, string | undefined, ControlError | RedisError>
  /**
   * At most `max` jobs leased per `perMs` ms of the Redis clock (in any such window), by all
   * workers together; `null` clears the limit and lifts a RateLimited hold (see `clearHold`).
   * Stored in the queue (partitioned: in each partition, holding per partition). Fails with
   * InvalidOptions naming the field (`max`, `perMs`: whole numbers from 1), nothing written. O(1).
   */
  readonly setRateLimit: (limit: RateLimit | null) => Call<F, void, ControlError>
  /** The queue's rate limit, or null when none is set. O(1). */
  readonly rateLimit: Value<F, RateLimit | null, ControlError>
  /**
   * Lift a RateLimited hold (a handler's `RateLimited` holds the whole queue for its
   * `retryAfterMs`, up to 30 days; `stats().limits.heldMs` shows what is left): the queue
   * leases again at once, idle workers are woken (one waiting out the hold sees the lift within
   * its `blockTimeoutMs`, default 5 s). The rate limit and concurrency cap stay. True when a
   * hold was in force (partitioned: lifts every partition's, true when any was). O(1).
   */
  readonly clearHold: Value<F, boolean, ControlError>
  /**
   * At most `n` jobs active at once across all workers (a lease holds a slot until it leaves
   * active: completed, failed, released, snoozed, cancelled, dead, or reclaimed by the sweep);
   * `null` clears the cap. Stored in the queue (partitioned: in each partition, holding per
   * partition). Fails with InvalidOptions for anything but a whole number from 1, nothing written. O(1).
   */
  readonly setConcurrency: (n: number | null) => Call<F, void, ControlError>
  /** The queue's concurrency cap, or null when none is set. O(1). */
  readonly concurrency: Value<F, number | null, ControlError>
  /**
   * Set how long finished jobs stay, so getJob and waitFor answer for them: `{ completed,
   * cancelled, dead }`, each `{ count, ageMs }` (at most `count` kept, none longer than `ageMs`
   * after it finished). What is not given takes its default: completed and cancelled jobs
   * 1,000 for 1 hour, dead jobs no bound (kept until retried or purged). Stored in Redis (every
   * partition): the next finish follows it, the sweep trims by age. Fails with InvalidOptions
   * naming the field, nothing written. O(1).
   */
  readonly setRetention: (policy: RetentionInput) => Call<F, void, ControlError>
  /** The queue's retention policy (see `setRetention`): the defaults where none was set. O(1). */
  readonly retention: Value<F, Retention, ControlError | RedisError>
}

/** The engine's job control: Effects, payloads as stored (JSON text). See {@link JobControlOf}. */
export interface JobControl extends JobControlOf<EffectFace> {}

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
