/**
 * The descriptors of the dashboard's reads that cut values inside Redis: `dead-peek` (a
 * page of dead jobs) and `job-peek` (one job), each value's first `cut` bytes and its
 * length; a value longer than `loadMax`, or than what is left of `budget` bytes for the
 * call, is not loaded at all (`lua/include/peek.lua`). A reading then costs Redis at most
 * `budget` bytes of copying, however large the payloads are. Also `schedules-peek` (the
 * first schedules) and `jobs-peek` (a page of the jobs in one state), payloads cut.
 */

import { splitPayload } from "../model/Carrier.ts"
import { LAYOUT_VERSION, READY_KEYS } from "../model/Keys.ts"
import type { StoredSchedule } from "../model/Schedule.ts"
import { JOB_LOOKUP_KEYS } from "./JobScripts.ts"
import type { ListInput } from "./OpsScripts.ts"
import { type Argv, defineScript, list } from "./Script.ts"

/** How much of each value a peek returns and loads. */
export interface PeekLimits {
  /** The most bytes of one value returned. */
  readonly cut: number
  /** The longest value loaded; a longer one comes back as its length only. */
  readonly loadMax: number
  /** The most bytes of values one call loads in all. */
  readonly budget: number
  /** No payload (nor result) loaded at all. */
  readonly hide: boolean
}

/**
 * A peeked stored payload as the user's payload: the creation context and name in front split
 * off, and its length without them (else every named or traced payload would read as cut).
 */
const peekedPayload = (
  stored: string | null,
  storedLength: number,
): { readonly value: Peeked; readonly name?: string | undefined } => {
  if (stored === null) return { value: { text: null, length: storedLength } }
  const carried = splitPayload(stored)
  const front = Buffer.byteLength(stored.slice(0, stored.length - carried.payload.length), "utf8")
  return { value: { text: carried.payload, length: storedLength - front }, name: carried.name }
}

/** A value as peeked: its first bytes (null when missing or not loaded) and its whole length in bytes. */
export interface Peeked {
  readonly text: string | null
  readonly length: number
}

/** One dead job as peeked. */
export interface DeadPeekJob {
  readonly id: string
  readonly diedAt: number
  readonly error: Peeked
  readonly payload: Peeked
  readonly failures: number
  readonly lostLeases: number
}

const limitArgs = (l: PeekLimits): Argv => [l.cut, l.loadMax, l.budget, l.hide ? 1 : 0]
const text = (v: unknown): string | null => (typeof v === "string" ? v : null)

/** `dead-peek`: a page of dead jobs, oldest death first, values cut in Redis, and how many there are. */
export const deadPeek = defineScript({
  name: "dead-peek",
  keys: ["dead", "err", "data", "fails", "lost"],
  argv: ["offset", "count", "cut", "loadMax", "budget", "hide"],
  args: (a: { readonly offset: number; readonly count: number; readonly limits: PeekLimits }): Argv => [
    a.offset,
    a.count,
    ...limitArgs(a.limits),
  ],
  decode: (reply): { readonly total: number; readonly jobs: ReadonlyArray<DeadPeekJob> } => {
    const r = list<unknown>(reply)
    const jobs: DeadPeekJob[] = []
    for (let i = 1; i + 7 < r.length; i += 8) {
      const payload = text(r[i + 4])
      jobs.push({
        id: String(r[i]),
        diedAt: Number(r[i + 1]),
        error: { text: text(r[i + 2]), length: Number(r[i + 3]) },
        payload: peekedPayload(payload, Number(r[i + 5])).value,
        failures: Number(r[i + 6]),
        lostLeases: Number(r[i + 7]),
      })
    }
    return { total: Number(r[0]), jobs }
  },
})

/** `job-peek`: get-job's reply with values cut in Redis (its first 14 entries), then the lengths of payload, result, error and progress. */
export const jobPeek = defineScript({
  name: "job-peek",
  keys: JOB_LOOKUP_KEYS,
  argv: ["layout", "id", "cut", "loadMax", "budget", "hide"],
  args: (a: { readonly id: string; readonly limits: PeekLimits }): Argv => [
    LAYOUT_VERSION,
    a.id,
    ...limitArgs(a.limits),
  ],
  decode: (reply): ReadonlyArray<unknown> => list<unknown>(reply),
})

/** One schedule as peeked: its next tick, and the schedule (payload cut; null when not loaded). */
export interface PeekedSchedule {
  readonly name: string
  /** Its next tick (ms, Redis clock). */
  readonly next: number
  /** The stored schedule with its payload cut (empty when hidden); null when it was not loaded. */
  readonly schedule: StoredSchedule | null
  /** The payload's length in bytes; the whole schedule's when it was not loaded. */
  readonly length: number
}

/** `schedules-peek`: the first schedules by next tick, payloads cut in Redis, how many there are, the Redis time. */
export const schedulesPeek = defineScript({
  name: "schedules-peek",
  keys: ["schedules", "schedAt"],
  argv: ["layout", "count", "cut", "loadMax", "budget", "hide"],
  args: (a: { readonly count: number; readonly limits: PeekLimits }): Argv => [
    LAYOUT_VERSION,
    a.count,
    ...limitArgs(a.limits),
  ],
  decode: (
    reply,
  ): { readonly now: number; readonly total: number; readonly schedules: ReadonlyArray<PeekedSchedule> } => {
    const r = list<unknown>(reply)
    const schedules: PeekedSchedule[] = []
    for (let i = 2; i + 3 < r.length; i += 4) {
      const s = text(r[i + 2])
      schedules.push({
        name: String(r[i]),
        next: Number(r[i + 1]),
        schedule: s === null ? null : (JSON.parse(s) as StoredSchedule),
        length: Number(r[i + 3]),
      })
    }
    return { now: Number(r[0]), total: Number(r[1]), schedules }
  },
})

/** One page of `jobs-peek`: the next cursor ("" at the end), the jobs in the state, and per job its id, score ("" waiting) and payload peeked. */
export interface PeekedPage {
  readonly next: string
  readonly total: number
  readonly rows: ReadonlyArray<{
    readonly id: string
    readonly score: string
    readonly payload: Peeked
    /** The job's name, from the payload's prefix (none when the payload was not loaded). */
    readonly name?: string | undefined
    /** When the job was added (ms), for an id that carries no time; undefined for a ULID. */
    readonly addedAt: number | undefined
    readonly failures: number
    readonly lostLeases: number
    readonly maxAttempts: number
    /** When an active job's run, or a completed job's last run, started (ms, Redis clock). */
    readonly startedAt: number | undefined
    /**
     * A completed job's result (its start, as a payload is peeked), or another job's last
     * error as JSON `{reason, name, tag, message}` cut in Redis; `text` null: none or not loaded.
     */
    readonly outcome: Peeked
  }>
}

/** `jobs-peek`: a page of the jobs in one state (job-list's pages and cursors), payloads cut in Redis. */
export const jobsPeek = defineScript({
  name: "jobs-peek",
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
  argv: ["layout", "state", "order", "cursor", "count", "cut", "loadMax", "budget", "hide"],
  args: (a: ListInput & { readonly limits: PeekLimits }): Argv => [
    LAYOUT_VERSION,
    a.state,
    a.order,
    a.cursor,
    a.count,
    ...limitArgs(a.limits),
  ],
  decode: (reply): PeekedPage => {
    const r = list<unknown>(reply)
    const rows: Array<PeekedPage["rows"][number]> = []
    for (let i = 2; i + 10 < r.length; i += 11) {
      const { value, name } = peekedPayload(text(r[i + 2]), Number(r[i + 3]))
      rows.push({
        id: String(r[i]),
        score: String(r[i + 1] ?? ""),
        payload: value,
        ...(name === undefined ? {} : { name }),
        addedAt: typeof r[i + 4] === "number" ? Number(r[i + 4]) : undefined,
        failures: Number(r[i + 5]),
        lostLeases: Number(r[i + 6]),
        maxAttempts: Number(r[i + 7]),
        startedAt: typeof r[i + 8] === "number" ? Number(r[i + 8]) : undefined,
        outcome: { text: text(r[i + 9]), length: Number(r[i + 10]) },
      })
    }
    return { next: String(r[0] ?? ""), total: Number(r[1]), rows }
  },
})
