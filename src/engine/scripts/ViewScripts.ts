/**
 * The descriptors of the read-only views a person looks at (the dashboard): `leases`
 * (the first live leases by deadline) and `delayed-list` (the first delayed jobs by due
 * time), each with Redis' clock, each O(log N + limit).
 */
import { LAYOUT_VERSION, READY_KEYS } from "../model/Keys.ts"
import { type Argv, defineScript, list } from "./Script.ts"

/** One live lease. */
export interface LeaseView {
  readonly id: string
  /** Lease deadline, ms on Redis' clock. */
  readonly deadline: number
  readonly token: number | null
  /** 1 + failures + lost leases so far: the attempt this lease is running. */
  readonly attempt: number
  readonly maxAttempts: number | null
}

/** The first leases of a queue, soonest deadline first. */
export interface LeasesView {
  /** Redis' clock when read (ms). */
  readonly now: number
  readonly total: number
  /** Leases past their deadline that no sweep has reclaimed yet. */
  readonly expired: number
  readonly leases: ReadonlyArray<LeaseView>
}

/** The first delayed jobs, soonest first. */
export interface DelayedView {
  readonly now: number
  readonly total: number
  readonly jobs: ReadonlyArray<{ readonly id: string; readonly dueAt: number }>
}

/** The most rows one view call returns. */
export const VIEW_LIMIT_MAX = 1000

const limitArgs = (limit: number): Argv => [LAYOUT_VERSION, Math.max(1, Math.min(VIEW_LIMIT_MAX, Math.floor(limit)))]
const num = (v: unknown): number | null => (v === null || v === undefined || v === false ? null : Number(v))

/** `leases`: the first `limit` leases by deadline, with the total and the expired count. */
export const leases = defineScript({
  name: "leases",
  keys: ["active", "lease", "fails", "lost", "max", "holder"],
  argv: ["layout", "limit"],
  args: limitArgs,
  decode: (reply): LeasesView => {
    const r = list<unknown>(reply)
    const rows: LeaseView[] = []
    for (let i = 3; i + 5 < r.length; i += 6) {
      rows.push({
        id: String(r[i]),
        deadline: Number(r[i + 1]),
        token: num(r[i + 2]),
        attempt: 1 + (num(r[i + 3]) ?? 0) + (num(r[i + 4]) ?? 0),
        maxAttempts: num(r[i + 5]),
      })
    }
    return { now: Number(r[0]), total: Number(r[1]), expired: Number(r[2]), leases: rows }
  },
})

/** `delayed-list`: the first `limit` delayed jobs by due time, with the total. */
export const delayedList = defineScript({
  name: "delayed-list",
  keys: READY_KEYS,
  argv: ["layout", "limit"],
  args: limitArgs,
  decode: (reply): DelayedView => {
    const r = list<unknown>(reply)
    const jobs: Array<{ id: string; dueAt: number }> = []
    for (let i = 2; i + 1 < r.length; i += 2) jobs.push({ id: String(r[i]), dueAt: Number(r[i + 1]) })
    return { now: Number(r[0]), total: Number(r[1]), jobs }
  },
})
