/**
 * The descriptors of the operator's scripts over many jobs and on one job: `job-list`
 * (a page of the jobs in one state), `drain`, `clean`, `obliterate`, `promote`,
 * `reschedule`, `job-retry`, `update-payload`. Their own refusals (a job in another state,
 * active jobs) are mapped in calls/Replies.ts (`operationError`), so these decode the raw list.
 */
import type { CLEAN_STATES, LIST_STATES } from "../model/CallDefaults.ts"
import { splitPayload } from "../model/Carrier.ts"
import { KEY_NAMES, LAYOUT_VERSION, READY_KEYS } from "../model/Keys.ts"
import { type Argv, defineScript, list } from "./Script.ts"

export { CLEAN_STATES, LIST_STATES } from "../model/CallDefaults.ts"

/** A state {@link LIST_STATES} names. */
export type ListState = (typeof LIST_STATES)[number]

/** A state {@link CLEAN_STATES} names. */
export type CleanState = (typeof CLEAN_STATES)[number]

/** One page request of `job-list`. */
export interface ListInput {
  readonly state: ListState
  readonly order: "asc" | "desc"
  /** "" for the first page. */
  readonly cursor: string
  readonly count: number
}

/** One job of a `job-list` page, as the script answers it (see lua/job-list.lua). */
export interface RawRow {
  readonly id: string
  readonly score: string
  /** The payload without the carried context and name (null: none stored). */
  readonly payload: string | null
  /** The job's name, from the payload's prefix (model/Carrier.ts). */
  readonly name: string | undefined
  /** When the job was added (ms), for an id that carries no time; undefined for a ULID. */
  readonly addedAt: number | undefined
  readonly failures: number
  readonly lostLeases: number
  readonly maxAttempts: number
  /** The last error as a row carries it (JSON `{reason, name, message, tag}`), for a job not completed. */
  readonly error: string | undefined
  /** A completed job's result (JSON, at most 1 KiB), and its length in bytes. */
  readonly result: string | undefined
  readonly resultBytes: number
  /** An active job's start (ms, Redis clock). */
  readonly startedAt: number | undefined
}

/** A page as `job-list` answers it: the next cursor ("" at the end), the jobs in the state, and its rows. */
export interface RawPage {
  readonly next: string
  readonly total: number
  readonly rows: ReadonlyArray<RawRow>
}

/** Entries per job in a `job-list` reply. */
const ROW = 11

const rawPage = (reply: unknown): RawPage => {
  const r = list<string | number | null>(reply)
  const rows: Array<RawRow> = []
  const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined)
  for (let i = 2; i + ROW - 1 < r.length; i += ROW) {
    const carried = typeof r[i + 2] === "string" ? splitPayload(String(r[i + 2])) : undefined
    rows.push({
      id: String(r[i]),
      score: String(r[i + 1] ?? ""),
      payload: carried === undefined ? null : carried.payload,
      name: carried?.name,
      addedAt: typeof r[i + 3] === "number" ? Number(r[i + 3]) : undefined,
      failures: Number(r[i + 4]),
      lostLeases: Number(r[i + 5]),
      maxAttempts: Number(r[i + 6]),
      error: text(r[i + 7]),
      result: text(r[i + 8]),
      resultBytes: Number(r[i + 9] ?? 0),
      startedAt: typeof r[i + 10] === "number" ? Number(r[i + 10]) : undefined,
    })
  }
  return { next: String(r[0] ?? ""), total: Number(r[1]), rows }
}

/** `job-list`: one page of the jobs in one state (read-only). */
export const jobList = defineScript({
  name: "job-list",
  keys: [
    "active",
    "dead",
    "done",
    "cancelled",
    "data",
    "fails",
    "lost",
    "max",
    "err",
    "result",
    "holder",
    ...READY_KEYS,
  ],
  argv: ["layout", "state", "order", "cursor", "count"],
  args: (p: ListInput): Argv => [LAYOUT_VERSION, p.state, p.order, p.cursor, p.count],
  decode: rawPage,
})

/** The per-job hashes a removal clears (the same as lua/include/finish.lua's drop_jobs, with result). */
const JOB_FIELDS = [
  "data",
  "max",
  "fails",
  "lost",
  "err",
  "progress",
  "timeout",
  "dkey",
  "result",
  "backoff",
  "errors",
  "logs",
] as const

/** `drain`: {removed waiting, removed delayed, left to drain}. */
export const drain = defineScript({
  name: "drain",
  keys: ["meta", "events", "dedupe", "dedupeid", ...JOB_FIELDS, ...READY_KEYS],
  argv: ["layout", "delayed", "limit"],
  args: (p: { readonly delayed: boolean; readonly limit: number }): Argv => [
    LAYOUT_VERSION,
    p.delayed ? "1" : "0",
    p.limit,
  ],
  decode: (reply): { readonly waiting: number; readonly delayed: number; readonly left: number } => {
    const r = list<number>(reply)
    return { waiting: Number(r[0]), delayed: Number(r[1]), left: Number(r[2]) }
  },
})

/** `clean`: {deleted, left in the state}. */
export const clean = defineScript({
  name: "clean",
  keys: ["dead", "done", "cancelled", "meta", "events", ...JOB_FIELDS, "holder", ...READY_KEYS],
  argv: ["layout", "state", "olderThanMs", "limit"],
  args: (p: { readonly state: CleanState; readonly olderThanMs: number; readonly limit: number }): Argv => [
    LAYOUT_VERSION,
    p.state,
    p.olderThanMs,
    p.limit,
  ],
  decode: (reply): { readonly deleted: number; readonly left: number } => {
    const r = list<number>(reply)
    return { deleted: Number(r[0]), left: Number(r[1]) }
  },
})

/** `obliterate`: the raw reply ({1, active} or a refusal, see Replies.operationError). */
export const obliterate = defineScript({
  name: "obliterate",
  keys: ["active", "meta", ...KEY_NAMES],
  argv: ["layout", "force"],
  args: (force: boolean): Argv => [LAYOUT_VERSION, force ? "1" : "0"],
  decode: (reply): ReadonlyArray<unknown> => list<unknown>(reply),
})

/** The keys every call on one job takes first (lua/include/job-op.lua). */
const ONE_JOB_KEYS = [
  "meta",
  "events",
  "receipts",
  "receiptsAt",
  "active",
  "dead",
  "done",
  "cancelled",
  "lease",
  "holder",
  "data",
] as const

/** A call on one job: its request id (drawn once, so a re-send is known) and the job id. */
export interface OneJob {
  readonly requestId: string
  readonly id: string
}

const raw = (reply: unknown): ReadonlyArray<unknown> => list<unknown>(reply)

/** `promote`: a delayed job ready now. */
export const promote = defineScript({
  name: "promote",
  keys: [...ONE_JOB_KEYS, ...READY_KEYS],
  argv: ["layout", "requestId", "id"],
  args: (p: OneJob): Argv => [LAYOUT_VERSION, p.requestId, p.id],
  decode: raw,
})

/** `reschedule`: a waiting or delayed job due `delayMs` from now. */
export const reschedule = defineScript({
  name: "reschedule",
  keys: [...ONE_JOB_KEYS, ...READY_KEYS],
  argv: ["layout", "requestId", "id", "delayMs"],
  args: (p: OneJob & { readonly delayMs: number }): Argv => [LAYOUT_VERSION, p.requestId, p.id, p.delayMs],
  decode: raw,
})

/** `job-retry`: a completed, cancelled or dead job queued again with fresh attempts. */
export const jobRetry = defineScript({
  name: "job-retry",
  keys: [...ONE_JOB_KEYS, "fails", "lost", "err", "result", "progress", ...READY_KEYS],
  argv: ["layout", "requestId", "id"],
  args: (p: OneJob): Argv => [LAYOUT_VERSION, p.requestId, p.id],
  decode: raw,
})

/** `update-payload`: a waiting, delayed or dead job's payload replaced. */
export const updatePayload = defineScript({
  name: "update-payload",
  keys: [...ONE_JOB_KEYS, ...READY_KEYS],
  argv: ["layout", "requestId", "id", "payload"],
  args: (p: OneJob & { readonly payload: string }): Argv => [LAYOUT_VERSION, p.requestId, p.id, p.payload],
  decode: raw,
})
