/**
 * The descriptors of the schedule scripts: `schedule` (create or replace), `unschedule`,
 * `schedules` (read them, or the due ones) and `tick` (make one due tick's jobs, once).
 */
import { LAYOUT_VERSION, READY_KEYS } from "../model/Keys.ts"
import { newRequestId } from "../model/RequestId.ts"
import type { StoredSchedule } from "../model/Schedule.ts"
import { type Argv, defineScript, list } from "./Script.ts"

/** What `schedule` did: created, replaced (a new next tick) or replaced keeping its next tick. */
export type ScheduleChange = "created" | "replaced" | "kept"

const CHANGES: Record<number, ScheduleChange> = { 1: "created", 2: "replaced", 3: "kept" }

/** One `schedule` call: the schedule as stored, its first tick, the most a queue holds. */
export interface ScheduleInput {
  readonly schedule: StoredSchedule
  readonly next: number
  readonly max: number
}

/** `schedule`: create or replace one schedule; what it did and its next tick. */
export const schedule = defineScript({
  name: "schedule",
  keys: ["meta", "schedules", "schedAt"],
  argv: ["layout", "name", "key", "schedule", "next", "max"],
  args: ({ schedule: s, next, max }: ScheduleInput): Argv => [
    LAYOUT_VERSION,
    s.name,
    s.key,
    JSON.stringify(s),
    next,
    max,
  ],
  decode: (reply): { readonly change: ScheduleChange; readonly next: number } => {
    const r = list(reply)
    return { change: CHANGES[Number(r[0])] ?? "created", next: Number(r[1]) }
  },
})

/** `unschedule`: true when the schedule existed. */
export const unschedule = defineScript({
  name: "unschedule",
  keys: ["meta", "schedules", "schedAt", "receipts", "receiptsAt"],
  argv: ["layout", "name", "requestId"],
  // the request id (default: drawn when the call's ARGV is built, so a re-send carries the same) is the call's receipt
  args: (i: string | { readonly name: string; readonly requestId: string }): Argv =>
    typeof i === "string" ? [LAYOUT_VERSION, i, newRequestId()] : [LAYOUT_VERSION, i.name, i.requestId],
  decode: (reply): boolean => list(reply)[0] === 1,
})

/** A schedule as read, with its next tick. */
export interface ReadSchedule {
  readonly schedule: StoredSchedule
  /** Its next tick (ms, Redis clock). */
  readonly next: number
}

/**
 * What `schedules` answers: the Redis time, the soonest next tick (-1: none; reading the
 * due ones, the soonest later than now), the schedules read, and whether more are left
 * after them (read on from the last one's name and next tick).
 */
export interface ScheduleRead {
  readonly now: number
  readonly soonest: number
  readonly schedules: ReadonlyArray<ReadSchedule>
  readonly more: boolean
  /** The cursor of the next page (the last schedule read), when `more`. */
  readonly cursor?: ScheduleCursor | undefined
}

/** Where a page of schedules goes on: after the schedule `name`, whose next tick was `next`. */
export interface ScheduleCursor {
  readonly next: number
  readonly name: string
}

const scheduleRead = (reply: unknown): ScheduleRead => {
  const r = list<string | number>(reply)
  const schedules: ReadSchedule[] = []
  let last: ScheduleCursor | undefined
  for (let i = 3; i + 2 < r.length; i += 3) {
    last = { name: String(r[i]), next: Number(r[i + 1]) }
    const text = String(r[i + 2])
    // a next tick without its schedule (not written by these scripts, which change both together)
    if (text === "") continue
    schedules.push({ schedule: JSON.parse(text) as StoredSchedule, next: Number(r[i + 1]) })
  }
  const more = Number(r[2]) === 1
  return { now: Number(r[0]), soonest: Number(r[1]), schedules, more, ...(more && last ? { cursor: last } : {}) }
}

/** What one `schedules` call reads: due ones or a page after `after`; at most `limit` and `maxBytes` (at least one). */
export interface ScheduleReadInput {
  readonly due: boolean
  readonly limit: number
  readonly maxBytes: number
  readonly after?: ScheduleCursor | undefined
}

/**
 * `schedules`: the due ones (`due`), or a page of every schedule after `after`; at most
 * `limit` and `maxBytes` bytes of schedule JSON (at least one schedule). Read-only.
 */
export const schedules = defineScript({
  name: "schedules",
  keys: ["schedules", "schedAt"],
  argv: ["layout", "due", "limit", "maxBytes", "afterScore", "afterName"],
  args: ({ due, limit, maxBytes, after }: ScheduleReadInput): Argv => [
    LAYOUT_VERSION,
    due ? 1 : 0,
    limit,
    maxBytes,
    after === undefined ? "" : after.next,
    after === undefined ? "" : after.name,
  ],
  decode: scheduleRead,
})

/** One tick: the schedule, the next tick it was read with, the next one after, the tick times to make jobs for. */
export interface TickInput {
  readonly name: string
  readonly due: number
  readonly next: number
  readonly at: ReadonlyArray<number>
}

/** What a tick did: `made` the ids of the jobs made, or why it made none. */
export type TickResult =
  | { readonly outcome: "ticked"; readonly made: ReadonlyArray<string> }
  | { readonly outcome: "stale"; readonly next: number }
  | { readonly outcome: "early"; readonly now: number }

const tickResult = (reply: unknown): TickResult => {
  const r = list(reply)
  const n = Number(r[0])
  if (n === -1) return { outcome: "stale", next: Number(r[1]) }
  if (n === -2) return { outcome: "early", now: Number(r[1]) }
  return { outcome: "ticked", made: r.slice(1).map(String) }
}

/** `tick`: make one due tick's jobs, once (see lua/tick.lua). */
export const tick = defineScript({
  name: "tick",
  keys: ["meta", "schedules", "schedAt", "data", "max", "timeout", "events", ...READY_KEYS],
  argv: ["layout", "name", "due", "next"],
  rest: ["at"],
  args: ({ name, due, next, at }: TickInput): Argv => [LAYOUT_VERSION, name, due, next, ...at],
  decode: tickResult,
})
