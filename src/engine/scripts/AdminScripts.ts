/**
 * The descriptors of the operator's scripts: `open` (check a queue's keys and layout
 * once), `stats`, and the dead-job ones (`dead-list`, `dead-retry`, `dead-purge`).
 */

import { storedPayload } from "../model/Carrier.ts"
import { type FlowLimits, flowLimitsOf } from "../model/Flow.ts"
import { KEY_NAMES, KEY_TYPES, LAYOUT_VERSION, READY_KEYS } from "../model/Keys.ts"
import { type Argv, defineScript, list } from "./Script.ts"

/** Counts and counters of one queue. */
export interface QueueStats {
  readonly queue: string
  readonly waiting: number
  readonly active: number
  /** Active leases past their deadline that no sweep has reclaimed yet. */
  readonly expired: number
  readonly delayed: number
  /** Parents waiting for their children (`waiting-children`: docs/flows.md). */
  readonly waitingChildren: number
  readonly dead: number
  /** Completed jobs retained (the queue's retention, `setRetention`). */
  readonly retained: number
  /** Live workers: registered, and heartbeating within their lease (for a partitioned queue: the most of any partition). */
  readonly workers: number
  /** Age in ms of the job that will run next (from its ULID), or 0 when none waits. */
  readonly oldestWaitingAgeMs: number
  readonly layout: string | null
  /** True while the queue is paused (`pause()`): workers lease nothing until `resume()`. */
  readonly paused: boolean
  /** Groups known (add's `group`: with jobs waiting or active, own limits, paused, or a rate window still open); 0 without groups. */
  readonly groups: number
  /** The (at most 5) groups with the most jobs waiting, the busiest first (for a partitioned queue: over every partition). */
  readonly busiestGroups: ReadonlyArray<{ readonly group: string; readonly waiting: number }>
  /** The queue-wide rate limit and concurrency cap (`setRateLimit`, `setConcurrency`) and a RateLimited hold. */
  readonly limits: FlowLimits
  /** Totals since the queue was created. */
  readonly counters: {
    readonly added: number
    readonly completed: number
    readonly failed: number
    readonly lostLeases: number
    readonly dead: number
    readonly released: number
    readonly retried: number
    readonly purged: number
    readonly tokens: number
    /** Jobs cancelled (0 on a queue no cancel reached). */
    readonly cancelled: number
    /** Waiting and delayed jobs removed by `drain`. */
    readonly removed: number
    /** Late acknowledgements refused: a complete or fail whose lease token was no longer current (fencing at work). */
    readonly refused: number
    /** Self-fences workers reported: handlers aborted because the worker could not reach Redis to extend their lease. */
    readonly selfFenced: number
    /** Jobs snoozed by their handler (`Snooze`): sent to delayed without spending an attempt. */
    readonly snoozed: number
    /** Jobs whose handler threw `RateLimited`: back to the front, the queue held for its retryAfterMs. */
    readonly rateLimited: number
    /** Reserve calls that leased fewer jobs than asked while jobs were ready, by the limit that held them back. */
    readonly limitedRate: number
    readonly limitedConcurrency: number
    readonly limitedHeld: number
  }
}

/** A dead job with its last error. */
export interface DeadJob {
  readonly id: string
  readonly diedAt: number
  readonly error: unknown
  readonly payload: string | null
  readonly failures: number
  readonly lostLeases: number
}

/** Which dead jobs `dead-retry` / `dead-purge` act on: these ids, or the oldest `all` of them. */
export type DeadTarget = { readonly ids: ReadonlyArray<string> } | { readonly all: number }

/** What `dead-retry` / `dead-purge` did: how many, how many dead remain, the ids not found dead. */
export interface DeadChange {
  readonly count: number
  readonly remaining: number
  readonly missing: ReadonlyArray<string>
}

/** The ARGV of every `open` call: the layout, then the type each key must have (or be missing). */
const OPEN_ARGS: Argv = [LAYOUT_VERSION, ...KEY_NAMES.map((n) => KEY_TYPES[n])]

/** `open`: every key of the queue is missing or of its type, and the layout is known (else a refusal). */
export const open = defineScript({
  name: "open",
  keys: KEY_NAMES,
  argv: ["layout"],
  rest: ["type"],
  args: (_: undefined): Argv => OPEN_ARGS,
  decode: (): void => undefined,
})

/** The reply of `stats.lua` (all but the queue's name, which the caller knows). */
const queueStats = (reply: unknown): Omit<QueueStats, "queue"> => {
  const r = list<number | string | null>(reply)
  const meta: Record<string, number> = {}
  for (let i = 13; i + 1 < r.length; i += 2) meta[String(r[i])] = Number(r[i + 1])
  const busiest = list<string>(r[11])
  const busiestGroups: Array<{ group: string; waiting: number }> = []
  for (let i = 0; i + 1 < busiest.length; i += 2)
    busiestGroups.push({ group: busiest[i]!, waiting: Number(busiest[i + 1]) })
  const oldest = typeof r[6] === "number" ? r[6] : undefined
  const now = Number(r[7])
  return {
    waiting: Number(r[0]),
    active: Number(r[1]),
    expired: Number(r[2]),
    delayed: Number(r[3]),
    waitingChildren: Number(r[12]),
    dead: Number(r[4]),
    retained: Number(r[5]),
    workers: Number(r[9]),
    oldestWaitingAgeMs: oldest === undefined ? 0 : Math.max(0, now - oldest),
    layout: typeof r[8] === "string" ? r[8] : null,
    paused: meta.paused === 1,
    groups: Number(r[10]),
    busiestGroups,
    limits: flowLimitsOf(meta, now),
    counters: counters(meta),
  }
}

/** The queue's lifetime counters from its meta hash (0 for one never written). */
const counters = (meta: Readonly<Record<string, number>>): QueueStats["counters"] => {
  const n = (field: string) => meta[field] ?? 0
  return {
    added: n("added"),
    completed: n("completed"),
    failed: n("failed"),
    lostLeases: n("lost"),
    dead: n("dead"),
    released: n("released"),
    retried: n("retried"),
    purged: n("purged"),
    tokens: n("token"),
    cancelled: n("cancelled"),
    removed: n("removed"),
    refused: n("refused"),
    selfFenced: n("selfFenced"),
    snoozed: n("snoozed"),
    rateLimited: n("rateLimited"),
    limitedRate: n("limitedRate"),
    limitedConcurrency: n("limitedConcurrency"),
    limitedHeld: n("limitedHeld"),
  }
}

/** `stats`: counts and counters of the queue. */
export const stats = defineScript({
  name: "stats",
  keys: ["active", "dead", "done", "meta", "workersAt", ...READY_KEYS],
  argv: ["layout"],
  args: (_: undefined): Argv => [LAYOUT_VERSION],
  decode: queueStats,
})

/** The reply of `dead-list.lua`. */
const deadPage = (reply: unknown): { total: number; jobs: DeadJob[] } => {
  const r = list<string | number | null>(reply)
  const jobs: DeadJob[] = []
  for (let i = 1; i + 5 < r.length; i += 6) {
    let error: unknown = r[i + 2]
    try {
      error = typeof error === "string" ? JSON.parse(error) : null
    } catch {}
    jobs.push({
      id: String(r[i]),
      diedAt: Number(r[i + 1]),
      error,
      payload: typeof r[i + 3] === "string" ? storedPayload(r[i + 3] as string) : null,
      failures: Number(r[i + 4]),
      lostLeases: Number(r[i + 5]),
    })
  }
  return { total: Number(r[0]), jobs }
}

/** `dead-list`: a page of dead jobs, oldest death first, and how many there are. */
export const deadList = defineScript({
  name: "dead-list",
  keys: ["dead", "err", "data", "fails", "lost"],
  argv: ["offset", "count"],
  args: ({ offset, count }: { readonly offset: number; readonly count: number }): Argv => [offset, count],
  decode: deadPage,
})

const deadTargetArgs = (target: DeadTarget): Argv =>
  "ids" in target ? [LAYOUT_VERSION, "ids", 0, ...target.ids] : [LAYOUT_VERSION, "all", target.all]

const deadChange = (reply: unknown): DeadChange => {
  const r = list(reply)
  return { count: Number(r[0]), remaining: Number(r[1]), missing: r.slice(2).map(String) }
}

/** `dead-retry`: dead jobs back to wait (with a payload; the others are reported missing). */
export const deadRetry = defineScript({
  name: "dead-retry",
  keys: ["dead", "meta", "fails", "lost", "err", "data", ...READY_KEYS],
  argv: ["layout", "mode", "limit"],
  rest: ["id"],
  args: deadTargetArgs,
  decode: deadChange,
})

/** `dead-purge`: dead jobs deleted with everything kept about them. */
export const deadPurge = defineScript({
  name: "dead-purge",
  keys: [
    "dead",
    "meta",
    "data",
    "max",
    "fails",
    "lost",
    "err",
    "progress",
    "timeout",
    "dkey",
    "backoff",
    "errors",
    "logs",
    ...READY_KEYS,
  ],
  argv: ["layout", "mode", "limit"],
  rest: ["id"],
  args: deadTargetArgs,
  decode: deadChange,
})
