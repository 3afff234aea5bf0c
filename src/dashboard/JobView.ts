/**
 * The dashboard's job page reading: one job by id (`getJob`: O(1) hash reads and a few
 * ZSCOREs), the Redis clock, and the job's timeline from the queue's events stream. The
 * timeline is bounded: the first {@link TIMELINE_LIMITS.fromStart} entries from the job's
 * ULID time (its start: added, first active) and the newest {@link TIMELINE_LIMITS.newest}
 * entries (its end), each O(log N + count); a job whose life spans more entries than that
 * shows a gap, marked. Also the finder behind "Find": a job id asked of the queue in view,
 * else of each queue under the prefix (one `getJob` per queue, bounded by their number).
 */
import * as Effect from "effect/Effect"
import { runScript, type ScriptFailure } from "../engine/calls/Commands.ts"
import { redisError } from "../engine/calls/Replies.ts"
import { Scripts } from "../engine/calls/Scripts.ts"
import type { JobEvent } from "../engine/events/EventDecode.ts"
import { decodeEntry } from "../engine/events/EventDecode.ts"
import type { InvalidOptions, RedisError } from "../engine/model/Errors.ts"
import type { QueueKeys } from "../engine/model/Keys.ts"
import { type JobInfo, jobInfoOf, makeJobCommands, ulidTimeOf } from "../engine/queue/JobCommands.ts"
import type { RedisClient } from "../redis/Client.ts"
import { FLOW_LIMITS, flowOf } from "./JobFlow.ts"

/** Stream entries read for a job's timeline: from its start, and the newest. */
export const TIMELINE_LIMITS = { fromStart: 500, newest: 500 } as const

/** How far before a job's ULID time the timeline starts reading (the producer's clock may run ahead of Redis'). */
const CLOCK_SLACK_MS = 60_000

/** Values (payload, result, error) longer than this many characters are cut on the job page. */
export const JOB_TEXT_LIMIT = 4096

type Entries = ReadonlyArray<[string, ReadonlyArray<string>]>

const streamRead = (client: RedisClient, args: ReadonlyArray<string | number>, command: "XRANGE" | "XREVRANGE") =>
  Effect.tryPromise({
    try: () => client.command(command, args),
    catch: (e) => redisError(command, e, client.describe),
  }).pipe(Effect.map((r) => r as Entries))

/** Order of two event ids `<ms>-<seq>[.<i>]`, numerically part by part. */
const byEventId = (a: string, b: string): number => {
  const pa = a.split(/[-.]/).map(Number)
  const pb = b.split(/[-.]/).map(Number)
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? -1) - (pb[i] ?? -1)
    if (d !== 0) return d
  }
  return 0
}

/** The job's events among the stream's entries from its ULID time and the newest ones, oldest first. */
const timelineOf = (client: RedisClient, queue: string, eventsKey: string, id: string) =>
  Effect.gen(function* () {
    const since = ulidTimeOf(id)
    const start = since > 0 ? `${Math.max(0, since - CLOCK_SLACK_MS)}-0` : "-"
    const [first, last] = yield* Effect.all(
      [
        streamRead(client, [eventsKey, start, "+", "COUNT", TIMELINE_LIMITS.fromStart], "XRANGE"),
        streamRead(client, [eventsKey, "+", "-", "COUNT", TIMELINE_LIMITS.newest], "XREVRANGE"),
      ],
      { concurrency: "unbounded" },
    )
    const fromStart = new Set(first.map(([entryId]) => entryId))
    const events: JobEvent[] = []
    const seen = new Set<string>()
    for (const [entryId, fields] of [...first, ...[...last].reverse()]) {
      if (seen.has(entryId)) continue
      seen.add(entryId)
      for (const e of decodeEntry(queue, entryId, fields)) if (e.jobId === id) events.push(e)
    }
    events.sort((a, b) => byEventId(a.eventId, b.eventId))
    // a gap: both reads came back full and did not meet, so entries between them went unread
    const gap =
      first.length === TIMELINE_LIMITS.fromStart &&
      last.length === TIMELINE_LIMITS.newest &&
      !last.some(([entryId]) => fromStart.has(entryId))
    return { events, gap }
  })

/** A `completed` event without the result it carries (hidePayloads hides results as it hides payloads). */
const withoutResult = (e: JobEvent): JobEvent => {
  if (e.kind !== "completed") return e
  const { result: _result, resultBytes: _bytes, ...rest } = e
  return rest
}

/** The Redis time (ms), read with TIME. */
export const redisNow = (client: RedisClient) =>
  Effect.tryPromise({
    try: () => client.command("TIME", []),
    catch: (e) => redisError("TIME", e, client.describe),
  }).pipe(
    Effect.map((r) => {
      const [s, us] = r as [string, string]
      return Number(s) * 1000 + Math.floor(Number(us) / 1000)
    }),
  )

/** A value as the page shows it: pretty JSON, cut at {@link JOB_TEXT_LIMIT} (its full length given). */
const shown = (value: unknown, hide: boolean) => {
  if (value === undefined) return undefined
  if (hide) return { text: "(hidden: --hide-payloads)", length: 0, hidden: true }
  const text = typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? String(value))
  return { text: text.length > JOB_TEXT_LIMIT ? text.slice(0, JOB_TEXT_LIMIT) : text, length: text.length }
}

/** The last error: its fields as pretty JSON, and its stack (if any) apart, with its line breaks. */
const errorShown = (error: unknown) => {
  if (typeof error !== "object" || error === null || !("stack" in error)) return shown(error, false)
  const { stack, ...rest } = error as { stack: unknown }
  return { ...shown(rest, false), stack: String(stack).slice(0, JOB_TEXT_LIMIT) }
}

const pretty = (payload: string): unknown => {
  try {
    return JSON.parse(payload)
  } catch {
    return payload
  }
}

/** The job as the page shows it: payload and result pretty and cut (or hidden), the error and stack cut. */
const present = (j: JobInfo<string>, hide: boolean) => {
  const { payload, result, error, ...rest } = j
  return {
    ...rest,
    payload: shown(pretty(payload), hide),
    result: "result" in j ? shown(result, hide) : undefined,
    error: errorShown(error),
  }
}

/**
 * What the polled job page loads in Redis: a value (payload, result, error, progress) up to
 * 64 KiB comes whole (shown pretty, cut at {@link JOB_TEXT_LIMIT}); a longer one is not
 * loaded, only its length (its "show all" reads it once, on request).
 */
export const JOB_PEEK_LIMITS = { cut: 64 * 1024, loadMax: 64 * 1024, budget: 1024 * 1024 } as const

/** The longest value "show all" loads (bytes): a longer one is answered 413, pointing to `leaseq job`. */
export const FULL_VALUE_LIMIT = 4 * 1024 * 1024

const notLoaded = (length: number) => `(not loaded: ${length} bytes, too long to preview here; "show all" reads it)`

/** The job of a `job-peek` reply, each value not loaded replaced by a line saying so (undefined: no such job). */
const peekedJob = (id: string, r: ReadonlyArray<unknown>): JobInfo<string> | undefined => {
  const info = jobInfoOf(id, r, 18, { errors: 20, logs: 22 })
  if (info === undefined) return undefined
  const [payload, result, error] = [Number(r[14]), Number(r[15]), Number(r[16])]
  return {
    ...info,
    ...(typeof r[2] === "string" ? {} : { payload: JSON.stringify(notLoaded(payload)) }),
    ...(result > 0 && typeof r[7] !== "string" ? { result: notLoaded(result) } : {}),
    ...(error > 0 && typeof r[6] !== "string" ? { error: { message: notLoaded(error) } } : {}),
  }
}

/** A job's payload or result as the page's "show all" gives it (pretty JSON), or undefined. */
const textOf = (j: JobInfo<string> | undefined, field: "payload" | "result"): string | undefined => {
  if (j === undefined) return undefined
  const v = field === "payload" ? pretty(j.payload) : j.result
  return v === undefined ? undefined : typeof v === "string" ? v : JSON.stringify(v, null, 2)
}

/** The readers behind the job page, the "show all" of a cut value, and Find. */
export const makeJobReader = (client: RedisClient, options: { readonly hidePayloads: boolean }) => {
  const limits = { ...JOB_PEEK_LIMITS, hide: options.hidePayloads }
  const one = (queue: string, keys: QueueKeys, id: string) =>
    Effect.gen(function* () {
      const [job, now, timeline, flow] = yield* Effect.all(
        [
          runScript(client, keys, Scripts.jobPeek, { id, limits }).pipe(Effect.map((r) => peekedJob(id, r))),
          redisNow(client),
          timelineOf(client, queue, keys.events, id),
          flowOf(client, keys, id),
        ],
        { concurrency: "unbounded" },
      )
      return {
        kind: "job",
        queue,
        id,
        at: Date.now(),
        now,
        job: job === undefined ? null : present(job, options.hidePayloads),
        timeline: options.hidePayloads ? timeline.events.map(withoutResult) : timeline.events,
        timelineGap: timeline.gap,
        limits: TIMELINE_LIMITS,
        flow,
        flowLimits: FLOW_LIMITS,
      }
    })

  /**
   * The full text of a job's payload or result (undefined when the job is gone or payloads
   * are hidden, nothing read then), or `{ tooLong }` for one over {@link FULL_VALUE_LIMIT}
   * bytes: its length is read first (HSTRLEN), and a longer value is never loaded.
   */
  const full = (keys: QueueKeys, id: string, field: "payload" | "result") =>
    Effect.gen(function* () {
      if (options.hidePayloads) return undefined
      const sizes = { cut: 0, loadMax: 0, budget: 0, hide: true }
      const r = yield* runScript(client, keys, Scripts.jobPeek, { id, limits: sizes })
      const length = Number(field === "payload" ? r[14] : r[15])
      if (length > FULL_VALUE_LIMIT) return { tooLong: length }
      return textOf(yield* makeJobCommands(client, keys).getJob(id), field)
    })

  /** The first queue in `queues` (in order) holding job `id`, asked one after another. */
  const find = (queues: ReadonlyArray<{ name: string; keys: QueueKeys }>, id: string) =>
    Effect.gen(function* () {
      // lengths only: a look-up loads no value, whatever its size
      const limits = { cut: 0, loadMax: 0, budget: 0, hide: true }
      for (const q of queues) {
        const r = yield* runScript(client, q.keys, Scripts.jobPeek, { id, limits })
        if (r[0] === 1) return { queue: q.name, id, state: String(r[1]) }
      }
      return undefined
    })

  return { one, full, find }
}

/** The job reader. */
export type JobReader = ReturnType<typeof makeJobReader>

/** Opens a queue by name (layout checked once), as the dashboard's other readers do. */
type Opener = (
  queue: string,
) => Effect.Effect<{ readonly keys: QueueKeys }, RedisError | ScriptFailure | InvalidOptions>

/** The job page's readers and the job-control commands, over queues opened by `commandsOf`. */
export const makeJobReaders = (
  client: RedisClient,
  commandsOf: Opener,
  names: Effect.Effect<ReadonlyArray<string>, RedisError | InvalidOptions>,
  options: { readonly hidePayloads: boolean },
) => {
  const jobs = makeJobReader(client, options)
  const findIn = (queues: ReadonlyArray<string>, id: string) =>
    Effect.forEach(queues, (q) => Effect.map(commandsOf(q), (c) => ({ name: q, keys: c.keys }))).pipe(
      Effect.flatMap((qs) => jobs.find(qs, id)),
    )
  return {
    /** The job page's reading of job `id` of `queue`. */
    job: (name: string, id: string) => Effect.flatMap(commandsOf(name), (c) => jobs.one(name, c.keys, id)),
    /** The full text of a cut payload or result. */
    fullValue: (name: string, id: string, field: "payload" | "result") =>
      Effect.flatMap(commandsOf(name), (c) => jobs.full(c.keys, id, field)),
    /**
     * The first of `queues` holding job `id`, asked in order (one getJob each); on a miss, the
     * queues of the overview's discovery not asked yet are asked. A miss never scans the
     * keyspace itself: the discovery is the overview's, redone at most every
     * `discoverEveryMs`, so a queue made since is found once that has passed.
     */
    find: (queues: ReadonlyArray<string>, id: string) =>
      findIn(queues, id).pipe(
        Effect.flatMap((hit) =>
          hit !== undefined
            ? Effect.succeed(hit)
            : names.pipe(
                Effect.flatMap((all) =>
                  findIn(
                    all.filter((q) => !queues.includes(q)),
                    id,
                  ),
                ),
              ),
        ),
      ),
    /** The job-control commands (cancel, pause, resume) of a queue. */
    controlOf: (name: string) => Effect.map(commandsOf(name), (c) => makeJobCommands(client, c.keys)),
  }
}
