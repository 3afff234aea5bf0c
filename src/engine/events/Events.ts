/**
 * Reading a queue's job events: the `events` STREAM that the scripts write in the same
 * call as each state change (lua/include/events.lua). A reader keeps its own connection
 * (XREAD BLOCK would hold a shared one), remembers the id of the last entry it passed on
 * for each stream, and after a failed read (a cut connection, a restart) reads again from
 * there: no retained event is missed or passed on twice.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { RedisClient } from "../../redis/Client.ts"
import { redisError } from "../calls/Replies.ts"
import type { RedisError } from "../model/Errors.ts"
import type { QueueKeys } from "../model/Keys.ts"
import { decodeEntry, type EventsFrom, type JobEvent, type Start, skipDone, startOf } from "./EventDecode.ts"

export {
  DEFAULT_EVENTS_MAXLEN,
  decodeEntry,
  type EventsFrom,
  type JobEvent,
  type JobEventKind,
  validateFrom,
  validateRetention,
} from "./EventDecode.ts"

/** How long one XREAD blocks, in ms; the connection is taken for silent when no reply came 5 s after. */
export const EVENTS_BLOCK_MS = 2_000
const REPLY_SLACK_MS = 5_000
/** Most entries one XREAD returns per stream. */
const READ_COUNT = 1_000
/** Pauses between reads after a failed one (the last repeats). */
const RETRY_PAUSE_MS = [50, 200, 500, 1_000] as const

type Entries = ReadonlyArray<readonly [string, ReadonlyArray<string>]>
type XreadReply = ReadonlyArray<unknown> | null

/**
 * XREAD's reply as [stream key, entries] pairs. Redis answers [[key, entries], …]; some
 * ioredis versions flatten that to [key, entries, key, entries, …]: both are read.
 */
const streamsOf = (reply: XreadReply): Array<readonly [string, Entries]> => {
  if (!reply || reply.length === 0) return []
  if (typeof reply[0] !== "string") return reply as Array<readonly [string, Entries]>
  const out: Array<readonly [string, Entries]> = []
  for (let i = 0; i + 1 < reply.length; i += 2) out.push([reply[i] as string, reply[i + 1] as Entries])
  return out
}

/**
 * The id of the newest entry of each stream ("0-0" for an empty one): reading after
 * these gives exactly the events recorded from now on. One XREVRANGE per stream.
 */
export const latestIds = (client: RedisClient, streams: ReadonlyArray<string>) =>
  Effect.forEach(streams, (key) =>
    Effect.tryPromise({
      try: async () => {
        const last = (await client.command("XREVRANGE", [key, "+", "-", "COUNT", 1])) as Entries | null
        return last?.[0]?.[0] ?? "0-0"
      },
      catch: (e): RedisError => redisError("XREVRANGE", e, client.describe, client.lastError?.()),
    }),
  )

/** Where each stream starts, for `from` (or the position of each, as {@link latestIds} gave). */
const startIds = (
  client: RedisClient,
  streams: ReadonlyArray<string>,
  from: EventsFrom | ReadonlyMap<string, string>,
): Effect.Effect<Array<Start>, RedisError> =>
  typeof from !== "string"
    ? Effect.succeed(streams.map((k) => ({ after: from.get(k) ?? "0-0" })))
    : from === "now"
      ? Effect.map(latestIds(client, streams), (ids) => ids.map((after) => ({ after })))
      : Effect.succeed(streams.map(() => (from === "start" ? { after: "0-0" } : startOf(from))))

/**
 * Read `streams` (keys of queues on one connection `conn`) from `ids` on, for ever.
 * A failed read is tried again after a pause, from the last entry passed on.
 */
const follow = (conn: RedisClient, streams: ReadonlyArray<QueueKeys>, starts: ReadonlyArray<Start>) => {
  const ids = starts.map((s) => s.after)
  const skips = starts.map((s) => s.skip)
  const keys = streams.map((k) => k.events)
  const queueOf = new Map(streams.map((k) => [k.events, k.queue]))
  let failures = 0
  const read = Effect.tryPromise({
    try: () =>
      conn.commandWithin(
        "XREAD",
        ["COUNT", READ_COUNT, "BLOCK", EVENTS_BLOCK_MS, "STREAMS", ...keys, ...ids],
        EVENTS_BLOCK_MS + REPLY_SLACK_MS,
      ) as Promise<XreadReply>,
    catch: (e) => e,
  }).pipe(
    Effect.map((reply) => {
      failures = 0
      const out: JobEvent[] = []
      for (const [key, entries] of streamsOf(reply)) {
        const i = keys.indexOf(key)
        for (const [id, fields] of entries) {
          out.push(...skipDone(decodeEntry(queueOf.get(key) ?? key, id, fields), id, skips[i]))
          skips[i] = undefined
          ids[i] = id
        }
      }
      // several streams in one reply: pass them on in the order Redis recorded them
      if (keys.length > 1) out.sort((a, b) => a.at - b.at)
      return out
    }),
    Effect.catch((e) => {
      const failure = redisError("XREAD", e, conn.describe, conn.lastError?.())
      // a refusal (NOPERM, WRONGTYPE…) does not go away by reading again, nor does a lost
      // connection made without reconnects (the CLI's): those end the Stream
      if (failure._tag === "RedisCommandError" || conn.status() === "end") return Effect.fail(failure)
      return Effect.sleep(RETRY_PAUSE_MS[Math.min(failures++, RETRY_PAUSE_MS.length - 1)]!).pipe(
        Effect.as([] as JobEvent[]),
      )
    }),
  )
  return Stream.fromEffectRepeat(read).pipe(Stream.flattenIterable)
}

/**
 * The events of `queues` (one queue, or every partition of a partitioned one) as a
 * Stream that never ends by itself. It opens its own connection (one per partition on
 * a cluster, where one XREAD cannot span slots), closed when the Stream ends.
 * `from` is validated by the caller ({@link validateFrom}), or a position per events key.
 */
export const eventStream = (
  client: RedisClient,
  queues: ReadonlyArray<QueueKeys>,
  from: EventsFrom | ReadonlyMap<string, string>,
): Stream.Stream<JobEvent, RedisError> => {
  const groups = client.isCluster ? queues.map((q) => [q]) : [queues]
  const one = (group: ReadonlyArray<QueueKeys>) =>
    Stream.unwrap(
      Effect.gen(function* () {
        const conn = yield* Effect.acquireRelease(
          Effect.sync(() => client.duplicate()),
          (c) => Effect.sync(() => c.disconnect()),
        )
        const starts = yield* startIds(
          conn,
          group.map((k) => k.events),
          from,
        )
        return follow(conn, group, starts)
      }),
    )
  return groups.length === 1 ? one(groups[0]!) : Stream.mergeAll(groups.map(one), { concurrency: "unbounded" })
}

/** Where the read of one stream stands: its events read but not passed on yet, and whether more remain. */
interface Cursor {
  readonly k: QueueKeys
  readonly end: string
  after: string
  skip: Start["skip"]
  more: boolean
  buffer: JobEvent[]
}

/** Read the next XRANGE pages of 1,000 of `c` (up to `c.end`) until it holds an event or has no more. */
const refill = (client: RedisClient, c: Cursor) =>
  Effect.gen(function* () {
    while (c.buffer.length === 0 && c.more) {
      const page = yield* Effect.tryPromise({
        try: () =>
          client.command("XRANGE", [c.k.events, `(${c.after}`, c.end, "COUNT", READ_COUNT]) as Promise<Entries>,
        catch: (e): RedisError => redisError("XRANGE", e, client.describe, client.lastError?.()),
      })
      for (const [id, fields] of page) {
        c.buffer.push(...skipDone(decodeEntry(c.k.queue, id, fields), id, c.skip))
        c.skip = undefined
        c.after = id
      }
      c.more = page.length === READ_COUNT
    }
  })

/**
 * Take events off the cursors' buffers, oldest first (ties: the first queue's), until a
 * cursor that has more to read runs empty (it must be read before anything newer is
 * passed on) or every buffer is empty.
 */
const takeMerged = (cursors: ReadonlyArray<Cursor>): JobEvent[] => {
  const out: JobEvent[] = []
  if (cursors.length === 1) return cursors[0]!.buffer.splice(0)
  while (!cursors.some((c) => c.buffer.length === 0 && c.more)) {
    let next: Cursor | undefined
    for (const c of cursors) if (c.buffer.length > 0 && (!next || c.buffer[0]!.at < next.buffer[0]!.at)) next = c
    if (!next) break
    out.push(next.buffer.shift()!)
  }
  return out
}

/**
 * The events retained now after `from` ("now" gives none), oldest first, handed to
 * `onPage` a page at a time: each stream is read in XRANGE pages of 1,000 up to its
 * newest entry at the start (so it ends), and a page is passed on before the next is
 * read. Memory: a page per stream, whatever the stream's length. Several queues
 * (partitions) are merged by time. `onPage` answering false stops the reading (a
 * closed output).
 */
export const forEachRetainedPage = <E>(
  client: RedisClient,
  queues: ReadonlyArray<QueueKeys>,
  from: EventsFrom,
  onPage: (events: ReadonlyArray<JobEvent>) => Effect.Effect<boolean, E>,
): Effect.Effect<void, RedisError | E> =>
  Effect.gen(function* () {
    const ends = yield* latestIds(
      client,
      queues.map((k) => k.events),
    )
    const cursors = queues.map((k, i): Cursor => {
      const end = ends[i]!
      const start = from === "now" ? { after: end } : from === "start" ? { after: "0-0" } : startOf(from)
      return { k, end, after: start.after, skip: start.skip, more: end !== "0-0", buffer: [] }
    })
    while (true) {
      yield* Effect.forEach(cursors, (c) => refill(client, c), { discard: true })
      const page = takeMerged(cursors)
      if (page.length === 0 || !(yield* onPage(page))) return
    }
  })
