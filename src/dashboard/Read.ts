/**
 * What the dashboard reads from Redis, view by view, every read bounded: the overview
 * (one `stats` call per queue), and one queue (its stats, the first leases by deadline,
 * the first delayed jobs, the first dead jobs grouped by reason and error). A queue with a
 * million jobs costs what one with ten does.
 */
import * as Effect from "effect/Effect"
import { type QueueStats, runScript } from "../engine/calls/Commands.ts"
import { redisError } from "../engine/calls/Replies.ts"
import { Scripts } from "../engine/calls/Scripts.ts"
import { decodeEntry } from "../engine/events/EventDecode.ts"
import { makeJobCommands } from "../engine/queue/JobCommands.ts"
import type { DeadPeekJob, Peeked } from "../engine/scripts/PeekScripts.ts"
import { type FleetReader, makeOpener } from "../metrics/Fleet.ts"
import type { RedisClient } from "../redis/Client.ts"
import { groupDead } from "./DeadGroups.ts"
import { childrenOf, encodeChildrenCursor, FLOW_LIMITS } from "./JobFlow.ts"
import { type JobsQuery, readJobs } from "./JobList.ts"
import { makeJobReaders } from "./JobView.ts"
import { readSchedules } from "./Settings.ts"

/** Rows each table shows (the totals are always exact); `feed`: newest stream entries read for the feed. */
export const DASHBOARD_LIMITS = { leases: 300, delayed: 100, dead: 200, feed: 200 } as const

/** The event kinds the feed shows: what went wrong with a lease or a job. */
const FEED_KINDS = new Set(["lease-lost", "failed", "dead", "cancelled", "released", "paused", "resumed"])

/** The newest entries of the queue's events stream (one XREVRANGE, bounded), as the feed's events. */
const feedOf = (client: RedisClient, queue: string, eventsKey: string) =>
  Effect.tryPromise({
    try: () => client.command("XREVRANGE", [eventsKey, "+", "-", "COUNT", DASHBOARD_LIMITS.feed]),
    catch: (e) => redisError("XREVRANGE", e, client.describe),
  }).pipe(
    Effect.map((reply) =>
      (reply as ReadonlyArray<[string, ReadonlyArray<string>]>)
        .flatMap(([id, fields]) => decodeEntry(queue, id, fields))
        .filter((e) => FEED_KINDS.has(e.kind))
        .slice(0, 50),
    ),
  )

/** Payloads, results and errors longer than this are cut (with their full length given). */
export const TEXT_LIMIT = 4096

/** One queue's completed and failed per second, kept by the dashboard process. */
export interface Rates {
  /** [time ms, completed/s, failed/s], oldest first, at most one hour. */
  readonly points: ReadonlyArray<readonly [number, number, number]>
}

/**
 * How much of each value a reading loads in Redis: a value up to {@link PEEK_LIMITS.loadMax}
 * bytes is copied into Lua and cut there; a longer one, or one past the reading's
 * {@link PEEK_LIMITS.budget}, is not loaded (the page shows its length). One reading of a
 * queue's dead list copies at most `budget` bytes inside Redis and sends at most
 * `cut` bytes per value.
 */
export const PEEK_LIMITS = { cut: TEXT_LIMIT, loadMax: 64 * 1024, budget: 1024 * 1024 } as const

/** A peeked value as the page shows it: hidden, not loaded (its length), or its start (cut at TEXT_LIMIT). */
const clip = (v: Peeked, hide: boolean): { text: string | null; length: number } => {
  if (v.length === 0 && v.text === null) return { text: null, length: 0 }
  if (hide) return { text: "(hidden: --hide-payloads)", length: v.length }
  if (v.text === null) return { text: `(not loaded: ${v.length} bytes; too long to preview here)`, length: v.length }
  return { text: v.text.length > TEXT_LIMIT ? v.text.slice(0, TEXT_LIMIT) : v.text, length: v.length }
}

/** The error of a dead job as recorded (JSON), or what its cut start says (`"name"` and `"message"` found in it). */
const errorOf = (v: Peeked): unknown => {
  if (v.text === null) return v.length > 0 ? { message: `(not loaded: ${v.length} bytes)` } : null
  try {
    return JSON.parse(v.text)
  } catch {
    const field = (name: string) => new RegExp(`"${name}":"((?:[^"\\\\]|\\\\.)*)`).exec(v.text as string)?.[1]
    return { name: field("name"), reason: field("reason"), message: field("message") ?? v.text }
  }
}

const errorKey = (error: unknown): { reason: string; message: string } => {
  const e = (typeof error === "object" && error !== null ? error : {}) as Record<string, unknown>
  return {
    reason: typeof e.reason === "string" ? e.reason : typeof e.name === "string" ? e.name : "error",
    message: typeof e.message === "string" ? e.message.slice(0, 300) : "",
  }
}

/** The dead letters as the page shows them: grouped by reason and masked error (DeadGroups.ts), values cut. */
const deadView = (dead: { readonly total: number; readonly jobs: ReadonlyArray<DeadPeekJob> }, hide: boolean) => {
  const jobs = dead.jobs.map((j) => ({
    ...j,
    ...errorKey(errorOf(j.error)),
    payload: clip(j.payload, hide),
    error: clip(j.error, false),
  }))
  return { total: dead.total, shown: jobs.length, groups: groupDead(jobs), jobs }
}

/** Forget the entries of `map` whose queue is not in `queues`. */
const keepOnly = (map: Map<string, unknown>, queues: ReadonlyArray<QueueStats>) => {
  const names = new Set(queues.map((q) => q.queue))
  for (const name of [...map.keys()]) if (!names.has(name)) map.delete(name)
}

/**
 * The rate series' bounds: a point per queue at most every `intervalMs` (10 s) however many
 * readings are made (each averages the interval since the point before), `keepMs` (1 h) of
 * them kept (at most 360 per queue), and at most `sentPoints` (60) per queue in an overview
 * reading (consecutive points averaged), so a reading's bytes do not grow with its readers.
 */
export const RATE_LIMITS = { intervalMs: 10_000, keepMs: 3_600_000, sentPoints: 60 } as const

type Point = readonly [number, number, number]

/** A rate rounded to 3 decimals (a point's bytes bounded). */
const round = (x: number): number => Math.round(x * 1000) / 1000

/** `points` averaged down to at most `n`, each the average of consecutive ones, at the last one's time. */
const downsample = (points: ReadonlyArray<Point>, n: number): ReadonlyArray<Point> => {
  if (points.length <= n) return points
  const out: Point[] = []
  for (let i = 0; i < n; i++) {
    const part = points.slice(Math.floor((i * points.length) / n), Math.floor(((i + 1) * points.length) / n))
    const avg = (k: 1 | 2) => round(part.reduce((a, p) => a + p[k], 0) / part.length)
    out.push([(part[part.length - 1] as Point)[0], avg(1), avg(2)])
  }
  return out
}

/** Rates of every queue, from successive overview readings (see {@link RATE_LIMITS}). */
export const makeRates = () => {
  // the counters at the last point (or the first reading): a point averages the time since
  const last = new Map<string, { at: number; completed: number; failed: number }>()
  const series = new Map<string, Array<Point>>()
  return {
    record: (now: number, queues: ReadonlyArray<QueueStats>) => {
      for (const q of queues) {
        const prev = last.get(q.queue)
        if (prev !== undefined && now - prev.at < RATE_LIMITS.intervalMs) continue
        last.set(q.queue, { at: now, completed: q.counters.completed, failed: q.counters.failed })
        if (prev === undefined) continue
        const s = (now - prev.at) / 1000
        const points = series.get(q.queue) ?? []
        points.push([
          now,
          round((q.counters.completed - prev.completed) / s),
          round((q.counters.failed - prev.failed) / s),
        ])
        while (points.length > 0 && (points[0] as Point)[0] < now - RATE_LIMITS.keepMs) points.shift()
        series.set(q.queue, points)
      }
      // only the queues of this reading are kept: a queue gone from the overview leaves nothing behind
      keepOnly(last, queues)
      keepOnly(series, queues)
    },
    /** Every point kept of `queue` (the queue page: at most one hour's). */
    of: (queue: string): Rates => ({ points: series.get(queue) ?? [] }),
    /** The points of `queue` an overview reading carries: at most {@link RATE_LIMITS}.sentPoints. */
    sent: (queue: string): Rates => ({ points: downsample(series.get(queue) ?? [], RATE_LIMITS.sentPoints) }),
  }
}

/** The reading of one queue: its stats, first leases, delayed and dead jobs, workers, feed, schedules and retention. */
const queueReader =
  (
    client: RedisClient,
    commandsOf: ReturnType<typeof makeOpener>,
    rates: ReturnType<typeof makeRates>,
    hide: boolean,
  ) =>
  (name: string) =>
    Effect.gen(function* () {
      const c = yield* commandsOf(name)
      const [stats, leases, delayed, dead, workers, feed, schedules, retention, groupDefaults] = yield* Effect.all(
        [
          c.stats,
          runScript(client, c.keys, Scripts.leases, DASHBOARD_LIMITS.leases),
          runScript(client, c.keys, Scripts.delayedList, DASHBOARD_LIMITS.delayed),
          runScript(client, c.keys, Scripts.deadPeek, {
            offset: 0,
            count: DASHBOARD_LIMITS.dead,
            limits: { ...PEEK_LIMITS, hide },
          }),
          c.workers,
          feedOf(client, name, c.keys.events),
          readSchedules(client, c.keys, hide),
          makeJobCommands(client, c.keys).retention,
          // the default limits of every group come with a page of one group (O(log G))
          runScript(client, c.keys, Scripts.groupList, { after: "", count: 1 }).pipe(
            Effect.map((p) => p.defaults ?? null),
          ),
        ],
        { concurrency: "unbounded" },
      )
      return {
        kind: "queue",
        queue: name,
        at: Date.now(),
        stats,
        leases,
        delayed,
        dead: deadView(dead, hide),
        rates: rates.of(name),
        workers: workers.workers,
        feed,
        schedules,
        retention,
        groupDefaults,
      }
    })

/** The readers of the two kinds of view. */
export const makeReaders = (
  client: RedisClient,
  fleet: FleetReader,
  prefix: string,
  options: { readonly hidePayloads: boolean },
) => {
  const rates = makeRates()
  const commandsOf = makeOpener(client, prefix)

  const overview = fleet.read.pipe(
    Effect.map((snap) => {
      const now = Date.now()
      rates.record(now, snap.queues)
      return {
        kind: "overview",
        prefix,
        at: now,
        queues: snap.queues,
        unreadable: snap.unreadable,
        rates: Object.fromEntries(snap.queues.map((q) => [q.queue, rates.sent(q.queue)])),
      }
    }),
  )

  const queue = queueReader(client, commandsOf, rates, options.hidePayloads)

  /** Every queue's live workers: one registry read per queue under the prefix. */
  const workers = fleet.read.pipe(
    Effect.flatMap((snap) =>
      Effect.forEach(
        snap.queues,
        (q) => Effect.flatMap(commandsOf(q.queue), (c) => Effect.map(c.workers, (r) => ({ queue: q.queue, ...r }))),
        { concurrency: "unbounded" },
      ),
    ),
    Effect.map((queues) => ({ kind: "workers", prefix, at: Date.now(), queues })),
  )

  /** A page of the jobs of queue `name` in one state, with the Redis time. */
  const jobs = (name: string, q: JobsQuery) =>
    Effect.flatMap(commandsOf(name), (c) => readJobs(client, c.keys, q, options.hidePayloads)).pipe(
      Effect.map((page) => ({ kind: "jobs", queue: name, at: Date.now(), ...q, page })),
    )

  /** A page of the children of job `id` of queue `name` after `cursor` (the engine's, "" for the first page). */
  const children = (name: string, id: string, cursor: string) =>
    Effect.flatMap(commandsOf(name), (c) => childrenOf(client, c.keys, id, cursor)).pipe(
      Effect.map((page) => {
        const own = encodeChildrenCursor(cursor) ?? ""
        return { kind: "children", queue: name, id, cursor: own, at: Date.now(), limit: FLOW_LIMITS.children, ...page }
      }),
    )

  /** The client and keys of queue `name` (opened once), for the engine's scripts on one job. */
  const scriptsOf = (name: string) => Effect.map(commandsOf(name), (c) => ({ client, keys: c.keys }))

  return {
    overview,
    queue,
    workers,
    jobs,
    children,
    commandsOf,
    scriptsOf,
    ...makeJobReaders(client, commandsOf, fleet.names, options),
  }
}

/** The readers. */
export type Readers = ReturnType<typeof makeReaders>
