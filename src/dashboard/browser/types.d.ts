/**
 * The readings the dashboard's browser script receives (JSON from /api/stream and friends),
 * as far as the page uses them. Types only: nothing here is served or run. The server side
 * builds them in ../Read.ts; a field renamed there must be renamed here. The job page's,
 * the job lists' and the children pages' readings are in ./job-readings.d.ts.
 */
import type { ChildrenView, JobsView, JobView } from "./job-readings.js"

/** A reading that failed (Redis unreachable, a bad name…): the page shows `error` instead of figures. */
export interface Failed {
  readonly error: string
}

/** What one queue's counters say. */
export interface Counters {
  readonly completed: number
  readonly selfFenced: number
  readonly refused: number
  readonly lostLeases: number
  /** Reserve calls that leased fewer jobs than asked while jobs were ready, by the limit that held them back. */
  readonly limitedRate: number
  readonly limitedConcurrency: number
  readonly limitedHeld: number
  /** Jobs snoozed by their handler, and jobs whose handler threw RateLimited. */
  readonly snoozed: number
  readonly rateLimited: number
}

/** A queue's flow limits as its stats give them. */
export interface FlowLimits {
  readonly rateLimit: { readonly max: number; readonly perMs: number } | null
  readonly concurrency: number | null
  /** ms the queue still leases nothing for (a handler's RateLimited). */
  readonly heldMs: number
}

/** One queue's figures (overview row, or the queue page's pills). */
export interface Stats {
  readonly queue: string
  readonly paused: boolean
  readonly waiting: number
  readonly active: number
  readonly expired: number
  readonly delayed: number
  readonly dead: number
  /** Completed jobs retained. */
  readonly retained: number
  readonly workers: number
  readonly oldestWaitingAgeMs: number
  readonly counters: Counters
  readonly limits: FlowLimits
  /** Groups known (add's `group`); 0 without groups. */
  readonly groups?: number
  /** The (at most 5) groups with the most jobs waiting, the busiest first. */
  readonly busiestGroups?: ReadonlyArray<{ readonly group: string; readonly waiting: number }>
}

/** The overview: every queue under the prefix. */
export interface Overview {
  readonly kind: "overview"
  readonly prefix: string
  readonly queues: ReadonlyArray<Stats>
  readonly unreadable?: ReadonlyArray<{ readonly queue: string; readonly reason: string }>
  /** [time ms, completed/s, failed/s] per queue, oldest first. */
  readonly rates: Readonly<Record<string, { readonly points: ReadonlyArray<readonly [number, number, number]> }>>
}

/** A live worker as its registry entry says. */
export interface WorkerInfo {
  readonly id: string
  readonly host: string
  readonly pid: number
  readonly state: string
  readonly running: number
  readonly concurrency: number
  readonly lastSeenAt: number
  readonly startedAt: number
}

/** Every queue's live workers. */
export interface Workers {
  readonly kind: "workers"
  readonly prefix: string
  readonly queues: ReadonlyArray<{
    readonly queue: string
    readonly now: number
    readonly workers: ReadonlyArray<WorkerInfo>
  }>
}

/** A lease whose time left the page counts down (Redis clock). */
export interface Lease {
  readonly deadline: number
}

/** An active job's lease, on the queue page. */
export interface QueueLease extends Lease {
  readonly id: string
  readonly attempt: number
  readonly maxAttempts?: number
  readonly token: number
}

/** An entry of a queue's events stream (the feed, a job's timeline); fields by kind. */
export interface StreamEvent {
  readonly eventId: string
  readonly kind: string
  readonly at: number
  readonly jobId?: string
  readonly attempt?: number
  readonly reason?: string
  readonly willRetry?: boolean
  readonly was?: string
  readonly token?: number
  readonly workerId?: string
  readonly progress?: unknown
}

/** A value cut for display: `text` its start (null: none), `length` its full length. */
export interface Clipped {
  readonly text: string | null
  readonly length: number
}

/** A dead job of the queue page's list. */
export interface DeadJob {
  readonly id: string
  readonly diedAt: number
  readonly reason: string
  readonly message: string
  readonly payload: Clipped
}

/** How many finished jobs of a kind are kept, and how long (absent: no bound). */
export interface RetentionBounds {
  readonly count?: number
  readonly ageMs?: number
}

/** A schedule of the queue page (Settings.ts's ScheduleRow). */
export interface ScheduleRow {
  readonly name: string
  /** Its next run (ms, Redis clock). */
  readonly nextRunAt: number
  readonly every?: number
  readonly cron?: string
  readonly tz?: string
  readonly catchUp?: number
  readonly maxAttempts?: number
  readonly timeoutMs?: number
  /** The payload's start (null: hidden or not loaded) and its length in bytes. */
  readonly payload: Clipped
  /** Over the reading's limits: only its name, next run and length were read. */
  readonly notLoaded?: boolean
}

/** One queue: its figures, leases, workers, feed, dead letters, delayed jobs and settings. */
export interface QueueView {
  readonly kind: "queue"
  readonly queue: string
  readonly actions: boolean
  readonly stats: Stats
  readonly leases: { readonly now: number; readonly total: number; readonly leases: ReadonlyArray<QueueLease> }
  readonly workers: ReadonlyArray<WorkerInfo>
  readonly feed: ReadonlyArray<StreamEvent>
  readonly dead: {
    readonly total: number
    readonly shown: number
    readonly jobs: ReadonlyArray<DeadJob>
    /** By reason and message with ids, numbers, addresses, UUIDs and hex masked; the largest first, with its first ids. */
    readonly groups: ReadonlyArray<{
      readonly reason: string
      readonly message: string
      readonly count: number
      readonly ids: ReadonlyArray<string>
    }>
  }
  readonly delayed: {
    readonly now: number
    readonly total: number
    readonly jobs: ReadonlyArray<{ readonly id: string; readonly dueAt: number }>
  }
  /** The default limits of every group (`setGroupLimits`), null when none is set. */
  readonly groupDefaults: { readonly concurrency?: number; readonly max?: number; readonly perMs?: number } | null
  /** The queue's retention policy (`setRetention`): each bound absent when there is none. */
  readonly retention: {
    readonly completed: RetentionBounds
    readonly cancelled: RetentionBounds
    readonly dead: RetentionBounds
  }
  /** The first schedules by next run; `now` the Redis time they were read at. */
  readonly schedules: { readonly now: number; readonly total: number; readonly rows: ReadonlyArray<ScheduleRow> }
}

/** Any reading of /api/stream. */
export type Reading = Overview | Workers | QueueView | JobView | JobsView | ChildrenView | Failed
