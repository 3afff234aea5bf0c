/**
 * The job readings of the dashboard's browser script: what the job page, a queue's job
 * lists and a parent's children pages receive (JSON from /api/stream), as far as the page
 * uses them. Types only: nothing here is served or run. The server side builds them in
 * ../JobView.ts, ../JobList.ts and ../JobFlow.ts; a field renamed there must be renamed here.
 * The queue-level readings, and the union of all of them, are in ./types.d.ts.
 */
import type { Clipped, Lease, StreamEvent } from "./types.js"

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
