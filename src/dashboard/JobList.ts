/**
 * The queue page's list of jobs by state, a page at a time: {@link readJobs} is the one
 * reader, through the engine's listing. A page holds at most {@link JOBS_PAGE} jobs, each
 * payload cut, and is polled like any view (one poller per page shown, however many
 * people look at it).
 */
import * as Effect from "effect/Effect"
import { InvalidOptions } from "../engine/model/Errors.ts"
import type { QueueKeys } from "../engine/model/Keys.ts"
import type { RedisClient } from "../redis/Client.ts"

/** Jobs one page of the list shows. */
export const JOBS_PAGE = 50

/** Characters of a payload a listed job shows. */
export const LISTED_PAYLOAD_CHARS = 200

/** The states the list pages through. */
export const JOB_STATES = ["waiting", "delayed", "active", "completed", "cancelled", "dead"] as const

/** A state of {@link JOB_STATES}. */
export type JobState = (typeof JOB_STATES)[number]

/** Which page of which state: `cursor` "" for the first page, else the `next` of the page before. */
export interface JobsQuery {
  readonly state: JobState
  readonly order: "asc" | "desc"
  readonly cursor: string
}

/** A cursor as the listing gives them: a count (waiting) or `<score>:<id>` (the others), at most 200 characters. */
const CURSOR = /^[0-9A-Za-z._:@-]{0,200}$/

/** The query of a view's parts, checked, or what is wrong with it. */
export const checkJobsQuery = (
  state: string,
  order: string,
  cursor: string,
): JobsQuery | { readonly error: string } => {
  if (!(JOB_STATES as ReadonlyArray<string>).includes(state))
    return { error: `state must be one of ${JOB_STATES.join(", ")}; got ${JSON.stringify(state)}` }
  if (order !== "asc" && order !== "desc") return { error: `order must be asc or desc; got ${JSON.stringify(order)}` }
  if (!CURSOR.test(cursor)) return { error: "cursor must be the next cursor of a page before (omit it for the first)" }
  return { state: state as JobState, order, cursor }
}

/** A job of a page as the page shows it. */
export interface ListedRow {
  readonly id: string
  /** When it was added (ms; 0 when its id tells nothing: a custom id). */
  readonly addedAt: number
  /** Due (delayed), lease deadline (active) or finished (completed, cancelled, dead), ms on the Redis clock. */
  readonly at?: number
  /** Its payload's start (null when hidden or none), and its length in characters. */
  readonly payload: { readonly text: string | null; readonly length: number }
}

/** One page of the jobs in a state. */
export interface JobsPage {
  readonly total: number
  readonly jobs: ReadonlyArray<ListedRow>
  /** The cursor of the next page; absent on the last. */
  readonly next?: string
}

/** One page of the jobs of the queue of `keys` in `q.state` (payloads cut, or none with `hide`). */
export const readJobs = (
  _client: RedisClient,
  _keys: QueueKeys,
  q: JobsQuery,
  _hide: boolean,
): Effect.Effect<JobsPage, InvalidOptions> =>
  Effect.fail(
    new InvalidOptions({
      field: "state",
      value: q.state,
      reason: "listing jobs needs the engine's getJobs, which this version does not have",
    }),
  )
