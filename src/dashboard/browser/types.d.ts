/**
 * The readings the dashboard's browser script receives (JSON from /api/stream and friends),
 * as far as the page uses them. Types only: nothing here is served or run. The server side
 * builds them in ../Read.ts and ../JobView.ts; a field renamed there must be renamed here.
 */

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

/** A payload, result or error as the job page gets it. */
export interface Shown {
  readonly text: string
  readonly length: number
  readonly hidden?: boolean
  readonly stack?: string
}

/** A job as the job page shows it. */
export interface JobShown {
  readonly id: string
  readonly state: string
  readonly attempt: number
  readonly maxAttempts: number
  readonly failures: number
  readonly lostLeases: number
  /** 0 (the default, runs first) to 1,000,000; absent from a server of an earlier version. */
  readonly priority?: number
  readonly lease?: Lease & { readonly token: number; readonly workerId?: string }
  readonly addedAt?: number
  readonly dueAt?: number
  readonly finishedAt?: number
  readonly dedupeKey?: string
  readonly timeoutMs?: number
  readonly progress?: unknown
  readonly error?: Shown
  readonly payload?: Shown
  readonly result?: Shown
  /** The job's name (add's `name` option). */
  readonly name?: string
  /** Each failed attempt's error, oldest first (the newest 10). */
  readonly errors?: ReadonlyArray<AttemptErrorShown>
  /** Its log lines (`job.log`), oldest first (the newest 100). */
  readonly logs?: ReadonlyArray<string>
}

/** One failed attempt's error, as getJob's `errors` lists it. */
export interface AttemptErrorShown {
  readonly attempt: number
  readonly at: number
  readonly reason?: string
  readonly name?: string
  readonly message?: string
  readonly tag?: string
  readonly fields?: Record<string, unknown>
}

/** One job: its facts, lease, values and timeline (`job` null: no such job). */
export interface JobView {
  readonly kind: "job"
  readonly queue: string
  readonly id: string
  readonly actions: boolean
  readonly now: number
  readonly job: JobShown | null
  readonly timeline: ReadonlyArray<StreamEvent>
  readonly timelineGap: boolean
  readonly limits: { readonly fromStart: number; readonly newest: number }
  /** Its parents and the first page of its children (../JobFlow.ts), and their bounds. */
  readonly flow?: import("./flow.js").JobFlow | undefined
  readonly flowLimits: { readonly parents: number; readonly children: number }
}

/** A job of a page of the list (JobList.ts's ListedRow). */
export interface ListedRow {
  readonly id: string
  /** When it was added (ms; 0 for a custom id). */
  readonly addedAt: number
  /** Due (delayed), lease deadline (active) or finished (completed, cancelled, dead), ms on the Redis clock. */
  readonly at?: number
  /** Its payload's start (null: hidden, not loaded or none) and its length in bytes. */
  readonly payload: Clipped
  /** The job's name (absent: none, or the payload was not loaded). */
  readonly name?: string
  /** Its attempt (running, next or last) of maxAttempts; when an active or completed job's run started (ms, Redis clock). */
  readonly attempt: number
  readonly maxAttempts: number
  readonly startedAt?: number
  /** A completed job's result (text null: hidden or not loaded); another's last error (cut null: not loaded). */
  readonly result?: Clipped
  readonly error?: { readonly cut: RowError | null; readonly length: number }
}

/** A last error as a row carries it, cut in Redis. */
type RowError = { readonly reason?: string; readonly name?: string; readonly tag?: string; readonly message: string }

/** The states the list pages through. */
export type JobState = "waiting" | "delayed" | "active" | "completed" | "cancelled" | "dead"

/** One page of a queue's jobs in one state (`cursor` the page's own, "" for the first). */
export interface JobsView {
  readonly kind: "jobs"
  readonly queue: string
  readonly actions: boolean
  readonly state: JobState
  readonly order: "asc" | "desc"
  readonly cursor: string
  readonly page: {
    /** The Redis time of the reading. */
    readonly now: number
    readonly total: number
    readonly jobs: ReadonlyArray<ListedRow>
    /** The next page's cursor; absent on the last page. */
    readonly next?: string
  }
}

/** A page of a parent's children (../JobFlow.ts's childrenOf): `cursor` the page's own ("" the first), `next` null at the end. */
export interface ChildrenView {
  readonly kind: "children"
  readonly queue: string
  readonly id: string
  readonly actions: boolean
  readonly cursor: string
  /** The most children a page lists (50). */
  readonly limit: number
  readonly children: ReadonlyArray<import("./flow.js").FlowNodeShown & { readonly counted: string }>
  readonly next: string | null
  readonly pending: number
  readonly open: boolean
  readonly waiting: boolean
}

/** Any reading of /api/stream. */
export type Reading = Overview | Workers | QueueView | JobView | JobsView | ChildrenView | Failed
