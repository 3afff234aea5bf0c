/**
 * The queue page's list of jobs by state, a page at a time: {@link readJobs} is the one
 * reader, through the engine's listing (the pages and cursors of `getJobs`, read by
 * `jobs-peek`, which cuts each payload, result and error inside Redis: a page costs Redis at most
 * {@link LIST_PEEK_LIMITS}.budget bytes of copying, and with hidePayloads it loads none). A
 * page holds at most {@link JOBS_PAGE} jobs and is polled like any view (one poller per page
 * shown, however many people look at it).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { runScript } from "../engine/calls/Commands.ts"
import { Scripts } from "../engine/calls/Scripts.ts"
import type { QueueKeys } from "../engine/model/Keys.ts"
import { ulidTimeOf } from "../engine/queue/JobCommands.ts"
import { checkCursor, checkListState } from "../engine/queue/OpsChecks.ts"
import type { ListState } from "../engine/scripts/OpsScripts.ts"
import type { Peeked, PeekedPage } from "../engine/scripts/PeekScripts.ts"
import type { RedisClient } from "../redis/Client.ts"
import { redisNow } from "./JobView.ts"

/** Jobs one page of the list shows. */
export const JOBS_PAGE = 50

/**
 * How much of the payloads a page loads in Redis: each cut to `cut` bytes; one longer than
 * `loadMax`, or past `budget` bytes for the page, is not loaded (its length only).
 */
export const LIST_PEEK_LIMITS = { cut: 200, loadMax: 64 * 1024, budget: 1024 * 1024 } as const

/** Which page of which state: `cursor` "" for the first page, else the `next` of the page before. */
export interface JobsQuery {
  readonly state: ListState
  readonly order: "asc" | "desc"
  readonly cursor: string
}

/** The query of a view's parts, checked as `getJobs` checks them, or what is wrong with it. */
export const checkJobsQuery = (
  state: string,
  order: string,
  cursor: string,
): JobsQuery | { readonly error: string } => {
  const s = checkListState(state)
  if (Result.isFailure(s)) return { error: s.failure.message }
  if (order !== "asc" && order !== "desc") return { error: `order must be asc or desc; got ${JSON.stringify(order)}` }
  const c = checkCursor(s.success, cursor)
  if (Result.isFailure(c)) return { error: c.failure.message }
  return { state: s.success, order, cursor: c.success }
}

/** A job of a page as the page shows it. */
export interface ListedRow {
  readonly id: string
  /** When it was added (ms): from its ULID id, or stored for a custom id or a tick's job. */
  readonly addedAt: number
  /** Due (delayed), lease deadline (active) or finished (completed, cancelled, dead), ms on the Redis clock. */
  readonly at?: number
  /** Its payload's start (null when hidden, not loaded or none), and its length in bytes. */
  readonly payload: { readonly text: string | null; readonly length: number }
  /** The job's name (absent: none, or its payload was not loaded). */
  readonly name?: string
  /** The attempt running (active), next (waiting, delayed) or last (completed, cancelled, dead), as `getJob` counts it. */
  readonly attempt: number
  readonly maxAttempts: number
  /** When the run of an active job, or the last run of a completed one, started (ms, Redis clock). */
  readonly startedAt?: number
  /** A completed job's result: its start (null when hidden or not loaded) and its length in bytes. */
  readonly result?: { readonly text: string | null; readonly length: number }
  /** Another job's last error, cut in Redis (`cut` null: over the page's load limits), and its stored length. */
  readonly error?: { readonly cut: RowError | null; readonly length: number }
}

/** A last error as a row shows it: what `jobs-peek` keeps of it. */
export interface RowError {
  readonly reason?: string
  readonly name?: string
  readonly tag?: string
  readonly message: string
}

/** The error a row carries, from jobs-peek's cut JSON text (a text that is not an object: an empty message). */
const rowError = (text: string | null): RowError | null => {
  if (text === null) return null
  try {
    const e = JSON.parse(text) as unknown
    if (e === null || typeof e !== "object") return { message: "" }
    const o = e as Record<string, unknown>
    const s = (k: string) => (typeof o[k] === "string" ? { [k]: o[k] as string } : {})
    return { ...s("reason"), ...s("name"), ...s("tag"), message: typeof o.message === "string" ? o.message : "" }
  } catch {
    return { message: "" }
  }
}

/** One page of the jobs in a state, and the Redis time it was read at. */
export interface JobsPage {
  readonly now: number
  readonly total: number
  readonly jobs: ReadonlyArray<ListedRow>
  /** The cursor of the next page; absent on the last. */
  readonly next?: string
}

/** A completed job's result, or another's last error, as its row carries it. */
const outcomeOf = (state: ListState, o: Peeked): Pick<ListedRow, "result" | "error"> => {
  if (o.length === 0) return {}
  return state === "completed" ? { result: o } : { error: { cut: rowError(o.text), length: o.length } }
}

/** A row of jobs-peek's page of jobs in `state`, as the page shows it. */
const listedRow = (state: ListState, r: PeekedPage["rows"][number]): ListedRow => {
  const at = r.score === "" ? undefined : Number(r.score)
  const used = r.failures + r.lostLeases
  return {
    id: r.id,
    addedAt: r.addedAt ?? ulidTimeOf(r.id),
    ...(at === undefined ? {} : { at }),
    payload: r.payload,
    ...(r.name === undefined ? {} : { name: r.name }),
    attempt: state === "dead" ? Math.max(used, 1) : used + 1,
    maxAttempts: r.maxAttempts,
    ...(r.startedAt === undefined ? {} : { startedAt: r.startedAt }),
    ...outcomeOf(state, r.outcome),
  }
}

/** One page of the jobs of the queue of `keys` in `q.state` (payloads cut, or none loaded with `hide`). */
export const readJobs = (client: RedisClient, keys: QueueKeys, q: JobsQuery, hide: boolean) =>
  Effect.all(
    [
      runScript(client, keys, Scripts.jobsPeek, { ...q, count: JOBS_PAGE, limits: { ...LIST_PEEK_LIMITS, hide } }),
      redisNow(client),
    ],
    { concurrency: "unbounded" },
  ).pipe(
    Effect.map(([page, now]): JobsPage => {
      const jobs = page.rows.map((r) => listedRow(q.state, r))
      return { now, total: page.total, jobs, ...(page.next === "" ? {} : { next: page.next }) }
    }),
  )
