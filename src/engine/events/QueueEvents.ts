/**
 * The events side of a queue, shared by both faces: follow its events, wait for a job to
 * finish, set how many events it retains. A partitioned queue passes every partition's
 * keys; its events are merged.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { RedisClient } from "../../redis/Client.ts"
import type { ScriptFailure } from "../calls/Commands.ts"
import { redisError } from "../calls/Replies.ts"
import { InvalidOptions, type RedisError } from "../model/Errors.ts"
import type { QueueKeys } from "../model/Keys.ts"
import { type JobCommands, type JobInfo, makeJobCommands } from "../queue/JobCommands.ts"
import {
  DEFAULT_EVENTS_MAXLEN,
  type EventsFrom,
  eventStream,
  type JobEvent,
  latestIds,
  validateFrom,
  validateRetention,
} from "./Events.ts"

/** `waitFor` saw no end of the job within its `timeoutMs`. The job is not changed. */
export class WaitForTimeout extends Data.TaggedError("WaitForTimeout")<{
  readonly queue: string
  readonly jobId: string
  readonly timeoutMs: number
}> {
  override get message() {
    return `job ${this.jobId} of queue ${this.queue} did not finish (completed, dead or cancelled) within ${this.timeoutMs} ms; it was not changed — call waitFor again, or look it up`
  }
}

/** A job that has ended, as `waitFor` answers. */
export interface FinishedJob<R = unknown> {
  readonly id: string
  readonly state: "completed" | "dead" | "cancelled"
  /** When it ended (ms since the epoch, Redis clock), when known. */
  readonly finishedAt?: number
  /** A completed job's result (JSON text decoded; `R` as the queue declares it), when the queue retains completed jobs. */
  readonly result?: R
  /** A dead job's last error (decoded JSON), when it is still in dead. */
  readonly error?: unknown
}

/** Looks a job up; undefined while it has not ended (or is unknown). */
export type FinishedLookup = (id: string) => Effect.Effect<FinishedJob | undefined, ScriptFailure>

const ENDED = new Set(["completed", "dead", "cancelled"])

/**
 * Whether job `id` has ended, by `getJob` on each partition (O(1) hash reads and at most
 * five O(log N) lookups each): completed (while retained by keepCompleted), dead, or
 * cancelled — a cancelled job whose data was not retained is still found by its id in
 * `cancelled` (one ZSCORE). A job that completed unretained leaves nothing to find here:
 * waitFor then learns of it only from an event recorded after the call began.
 */
const lookupEnded = (client: RedisClient, queues: ReadonlyArray<QueueKeys>): FinishedLookup => {
  const parts = queues.map((k) => ({ k, cmds: makeJobCommands(client, k) }))
  return (id) =>
    Effect.forEach(parts, (p) => lookupIn(client, p.k, p.cmds, id), { concurrency: "unbounded" }).pipe(
      Effect.map((found) => found.find((f) => f !== undefined)),
    )
}

/** What a looked-up job says of its end: undefined while it has not ended. */
const finishedOf = (info: JobInfo<string>): FinishedJob | undefined => {
  if (!ENDED.has(info.state)) return undefined
  return {
    id: info.id,
    state: info.state as FinishedJob["state"],
    ...(info.finishedAt !== undefined ? { finishedAt: info.finishedAt } : {}),
    ...(info.state === "completed" && info.result !== undefined ? { result: info.result } : {}),
    ...(info.state === "dead" && info.error !== undefined ? { error: info.error } : {}),
  }
}

/** Job `id` ended in one queue (partition): its state, when, and its result or last error. */
const lookupIn = (
  client: RedisClient,
  k: QueueKeys,
  cmds: JobCommands,
  id: string,
): Effect.Effect<FinishedJob | undefined, ScriptFailure> =>
  cmds.getJob(id).pipe(
    Effect.flatMap((info): Effect.Effect<FinishedJob | undefined, ScriptFailure> => {
      if (info !== undefined) return Effect.succeed(finishedOf(info))
      // a cancelled job whose data was not retained: its id is still remembered
      return Effect.tryPromise({
        try: () => client.command("ZSCORE", [k.cancelled, id]),
        catch: (e) => redisError("ZSCORE", e, client.describe, client.lastError?.()),
      }).pipe(
        Effect.map((at) =>
          at === null ? undefined : ({ id, state: "cancelled", finishedAt: Number(at) } satisfies FinishedJob),
        ),
      )
    }),
  )

const validateJobId = (id: unknown): string => {
  if (typeof id !== "string" || id.length === 0 || id.length > 1_000) {
    throw new InvalidOptions({ field: "id", value: id, reason: "must be a job id: the non-empty string add returned" })
  }
  return id
}

const validateTimeout = (timeoutMs: unknown): number => {
  if (typeof timeoutMs !== "number" || !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 2_147_483_647) {
    throw new InvalidOptions({
      field: "timeoutMs",
      value: timeoutMs,
      reason: "must be a whole number of ms from 1 to 2147483647 (about 24.8 days)",
    })
  }
  return timeoutMs
}

const TERMINAL: ReadonlySet<JobEvent["kind"]> = new Set(["completed", "dead", "cancelled"])

/** The events side of the queue whose (partition) keys are `queues`; `client` is the queue's own. */
export const makeQueueEvents = (client: RedisClient, name: string, queues: ReadonlyArray<QueueKeys>) => {
  const lookup = lookupEnded(client, queues)
  const attempt = <A>(f: () => A) => Effect.try({ try: f, catch: (e) => e as InvalidOptions })
  const command = (name: string, args: ReadonlyArray<string | number>) =>
    Effect.tryPromise({
      try: () => client.command(name, args),
      catch: (e) => redisError(name, e, client.describe, client.lastError?.()),
    })
  return {
    /** The queue's events from `from` on (default "now"), for ever; see {@link eventStream}. Throws InvalidOptions for a bad `from`. */
    events: (from: unknown): Stream.Stream<JobEvent, RedisError> => {
      const start = validateFrom(from)
      if (start !== "now") return eventStream(client, queues, start)
      // "now" is taken at once, on the queue's own connection: an add sent after this call
      // on the same queue is recorded after the position, so its events are passed on
      const streams = queues.map((k) => k.events)
      const at = Effect.runPromiseExit(latestIds(client, streams))
      return Stream.unwrap(
        Effect.promise(() => at).pipe(
          Effect.flatten,
          Effect.map((ids) => eventStream(client, queues, new Map(streams.map((k, i) => [k, ids[i]!])))),
        ),
      )
    },

    /**
     * Wait until job `id` has ended (completed, dead or cancelled): first where it would
     * be found now, then by its events from the moment of the call (the position is taken
     * before the look-up, so an end between the two is not missed). Fails with
     * {@link WaitForTimeout} after `timeoutMs`.
     */
    waitFor: (id: unknown, options: { readonly timeoutMs?: number | undefined } = {}) =>
      Effect.gen(function* () {
        const jobId = yield* attempt(() => validateJobId(id))
        const timeoutMs = yield* attempt(() => validateTimeout(options.timeoutMs ?? 60_000))
        const wait = Effect.gen(function* () {
          const streams = queues.map((k) => k.events)
          const at = yield* latestIds(client, streams)
          const now = yield* lookup(jobId)
          if (now) return now
          const positions = new Map(streams.map((k, i) => [k, at[i]!]))
          const ended = yield* eventStream(client, queues, positions).pipe(
            Stream.filter((e) => e.jobId === jobId && TERMINAL.has(e.kind)),
            Stream.take(1),
            Stream.runCollect,
          )
          const event = ended[0]!
          const found = yield* lookup(jobId)
          if (found) return found
          const state = event.kind as FinishedJob["state"]
          return { id: jobId, state, finishedAt: event.at } satisfies FinishedJob
        })
        return yield* wait.pipe(
          Effect.timeoutOrElse({
            duration: timeoutMs,
            orElse: () => Effect.fail(new WaitForTimeout({ queue: name, jobId, timeoutMs })),
          }),
        )
      }),

    /** Keep about `maxLen` stream entries (0: record no events) on every partition: HSET meta eventsMaxLen. O(1). */
    setEventRetention: (maxLen: unknown) =>
      attempt(() => validateRetention(maxLen)).pipe(
        Effect.flatMap((n) =>
          Effect.forEach(queues, (k) => command("HSET", [k.meta, "eventsMaxLen", n]), { discard: true }),
        ),
      ),

    /** The queue's event retention (of its first partition): meta eventsMaxLen, else the default. */
    eventRetention: command("HGET", [queues[0]!.meta, "eventsMaxLen"]).pipe(
      Effect.map((v) => (v === null ? DEFAULT_EVENTS_MAXLEN : Number(v))),
    ),
  }
}

/** The events side of a queue. */
export type QueueEvents = ReturnType<typeof makeQueueEvents>

export type { EventsFrom, JobEvent }
