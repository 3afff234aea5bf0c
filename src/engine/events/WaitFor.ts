/**
 * `waitFor`: wait until a job has ended, for both faces. The job's state answers first
 * (getJob on each partition); then its events, from a position taken before that look-up;
 * and where the events cannot tell (event retention 0, the end trimmed away) the state is
 * looked at again now and then, and once more at the timeout. A job no longer in the
 * queue is answered from the retained events, or refused with {@link JobGone}: waitFor
 * never says "did not finish" about a job that finished.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { RedisClient } from "../../redis/Client.ts"
import type { ScriptFailure } from "../calls/Commands.ts"
import { redisError } from "../calls/Replies.ts"
import { InvalidOptions, type RedisError } from "../model/Errors.ts"
import type { QueueKeys } from "../model/Keys.ts"
import { type JobCommands, type JobInfo, makeJobCommands, ulidTimeOf } from "../queue/JobCommands.ts"
import { decodeEntry, eventStream, type JobEvent, latestIds } from "./Events.ts"

/** `waitFor` saw no end of the job within its `timeoutMs`: it is still waiting, delayed or active. The job is not changed. */
export class WaitForTimeout extends Data.TaggedError("WaitForTimeout")<{
  readonly queue: string
  readonly jobId: string
  readonly timeoutMs: number
}> {
  override get message() {
    return `job ${this.jobId} of queue ${this.queue} did not finish (completed, dead or cancelled) within ${this.timeoutMs} ms; it was not changed — call waitFor again, or look it up`
  }
}

/**
 * `waitFor`'s job is not in the queue, and no retained event says how it ended: it
 * finished and was no longer retained (past the queue's retention, `setRetention`; a
 * purged dead job is gone too), or it was never added.
 */
export class JobGone extends Data.TaggedError("JobGone")<{
  readonly queue: string
  readonly jobId: string
}> {
  override get message() {
    return `job ${this.jobId} of queue ${this.queue} is not in the queue and no retained event says how it ended: it finished and is no longer kept (past the queue's retention, see setRetention; a purged dead job is gone), or it was never added — keep finished jobs longer (setRetention) or more events (setEventRetention) to learn how jobs end`
  }
}

/** How `waitFor` fails (besides the face's QueueClosed). */
export type WaitForFailure = InvalidOptions | WaitForTimeout | JobGone | ScriptFailure

/** A job that has ended, as `waitFor` answers. */
export interface FinishedJob<R = unknown> {
  readonly id: string
  readonly state: "completed" | "dead" | "cancelled"
  /** When it ended (ms since the epoch, Redis clock), when known. */
  readonly finishedAt?: number
  /** A completed job's result (JSON text decoded; `R` as the queue declares it), while the job is retained (or its `completed` event carries it). */
  readonly result?: R
  /** A dead job's last error (decoded JSON), when it is still in dead. */
  readonly error?: unknown
}

/** What a look-up says of a job: it ended (how), it has not ("pending"), or the queue does not have it ("gone"). */
type Found = FinishedJob | "pending" | "gone"

const ENDED: ReadonlySet<string> = new Set(["completed", "dead", "cancelled"])

/** How often the state is looked at while waiting: often when no events are recorded, rarely when only a trim could hide the end. */
export const STATE_CHECK_MS = { withoutEvents: 1_000, withEvents: 10_000 } as const

/** The job the first partition that has it says (a job is in one partition): pending or ended; "gone" when none has it. */
const lookupJob = (client: RedisClient, queues: ReadonlyArray<QueueKeys>) => {
  const parts = queues.map((k) => ({ k, cmds: makeJobCommands(client, k) }))
  return (id: string): Effect.Effect<Found, ScriptFailure> =>
    Effect.forEach(parts, (p) => lookupIn(client, p.k, p.cmds, id), { concurrency: "unbounded" }).pipe(
      Effect.map((found) => found.find((f) => f !== "gone") ?? "gone"),
    )
}

/** What a looked-up job says of its end. */
const finishedOf = (info: JobInfo<string>): Found => {
  if (!ENDED.has(info.state)) return "pending"
  return {
    id: info.id,
    state: info.state as FinishedJob["state"],
    ...(info.finishedAt !== undefined ? { finishedAt: info.finishedAt } : {}),
    ...(info.state === "completed" && info.result !== undefined ? { result: info.result } : {}),
    ...(info.state === "dead" && info.error !== undefined ? { error: info.error } : {}),
  }
}

/**
 * Job `id` in one queue (partition), by getJob (O(1) hash reads and a few O(log N)
 * lookups); a cancelled job whose data was not kept is still found by its id among the
 * cancels (one ZSCORE).
 */
const lookupIn = (client: RedisClient, k: QueueKeys, cmds: JobCommands, id: string) =>
  cmds.getJob(id).pipe(
    Effect.flatMap((info): Effect.Effect<Found, ScriptFailure> => {
      if (info !== undefined) return Effect.succeed(finishedOf(info))
      return command(client, "ZSCORE", [k.cancelled, id]).pipe(
        Effect.map((at): Found => (at === null ? "gone" : { id, state: "cancelled", finishedAt: Number(at) })),
      )
    }),
  )

const command = (client: RedisClient, name: string, args: ReadonlyArray<string | number>) =>
  Effect.tryPromise({
    try: () => client.command(name, args),
    catch: (e): RedisError => redisError(name, e, client.describe, client.lastError?.()),
  })

/** The end of job `id` among the events retained after `from` (an entry id), or undefined: XRANGE pages of 1,000. */
const retainedEnd = (client: RedisClient, k: QueueKeys, id: string, from: string) =>
  Effect.gen(function* () {
    let after = from
    while (true) {
      const page = (yield* command(client, "XRANGE", [k.events, `(${after}`, "+", "COUNT", 1_000])) as ReadonlyArray<
        readonly [string, ReadonlyArray<string>]
      >
      for (const [entry, fields] of page) {
        const end = decodeEntry(k.queue, entry, fields).find((e) => e.jobId === id && ENDED.has(e.kind))
        if (end) return end
        after = entry
      }
      if (page.length < 1_000) return undefined
    }
  })

const fromEvent = (id: string, e: JobEvent): FinishedJob => ({
  id,
  state: e.kind as FinishedJob["state"],
  finishedAt: e.at,
  ...(e.kind === "completed" && e.result !== undefined ? { result: e.result } : {}),
})

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

/** The longest wait for the last look-up at the timeout. */
const LAST_LOOK_MS = 2_000

/** How long a producer's clock may be behind Redis's: a gone job's events are looked for from its add time less this. */
const CLOCK_SKEW_MS = 60_000

/** `waitFor` of the queue whose (partition) keys are `queues`; `client` is the queue's own. */
export const makeWaitFor = (client: RedisClient, name: string, queues: ReadonlyArray<QueueKeys>) => {
  const lookup = lookupJob(client, queues)
  const streams = queues.map((k) => k.events)
  /** Per stream, the position just before the job was added (its ULID's time, less {@link CLOCK_SKEW_MS}). */
  const sinceAdded = (jobId: string) => {
    const since = Math.max(0, ulidTimeOf(jobId) - CLOCK_SKEW_MS)
    return queues.map(() => `${since}-0`)
  }

  /** A job not in the queue: its end from the events retained after `from` (per stream), else JobGone. */
  const gone = (jobId: string, from: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      for (const [i, k] of queues.entries()) {
        const end = yield* retainedEnd(client, k, jobId, from[i]!)
        if (end) return fromEvent(jobId, end)
      }
      return yield* Effect.fail(new JobGone({ queue: name, jobId }))
    })

  /** The answer a look-up gives: ended, or gone (from the events after `from`), or undefined while pending. */
  const answer = (jobId: string, found: Found, from: ReadonlyArray<string>) =>
    found === "pending" ? Effect.succeed(undefined) : found === "gone" ? gone(jobId, from) : Effect.succeed(found)

  /** The state looked at every `everyMs` until it tells an end. */
  const byState = (jobId: string, everyMs: number, from: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      while (true) {
        yield* Effect.sleep(everyMs)
        const found = yield* answer(jobId, yield* lookup(jobId), from)
        if (found) return found
      }
    })

  /** The first end of the job among its events after `at`, with what a look-up then says. */
  const byEvents = (jobId: string, at: ReadonlyArray<string>) =>
    eventStream(client, queues, new Map(streams.map((k, i) => [k, at[i]!]))).pipe(
      Stream.filter((e) => e.jobId === jobId && ENDED.has(e.kind)),
      Stream.take(1),
      Stream.runCollect,
      Effect.flatMap((ended) =>
        Effect.map(lookup(jobId), (found) => (typeof found === "object" ? found : fromEvent(jobId, ended[0]!))),
      ),
    )

  const wait = (jobId: string) =>
    Effect.gen(function* () {
      const at = yield* latestIds(client, streams)
      const now = yield* lookup(jobId)
      // it ended before the call (or never was): its end may still be among the events
      if (now === "gone") return yield* gone(jobId, sinceAdded(jobId))
      if (now !== "pending") return now
      const retention = yield* command(client, "HGET", [queues[0]!.meta, "eventsMaxLen"])
      const everyMs =
        Number(retention) === 0 && retention !== null ? STATE_CHECK_MS.withoutEvents : STATE_CHECK_MS.withEvents
      return yield* Effect.raceFirst(byEvents(jobId, at), byState(jobId, everyMs, at))
    })

  /**
   * Wait until job `id` has ended (completed, dead or cancelled). Fails with
   * {@link WaitForTimeout} when, after `timeoutMs`, a last look-up still finds it
   * pending; with {@link JobGone} when it is not in the queue and no event says how it ended.
   * The result is the handler's return value decoded from JSON: `R` is what the queue declares.
   */
  return <R = unknown>(id: unknown, options: { readonly timeoutMs?: number | undefined } = {}) =>
    Effect.gen(function* () {
      const jobId = yield* Effect.try({ try: () => validateJobId(id), catch: (e) => e as InvalidOptions })
      const timeoutMs = yield* Effect.try({
        try: () => validateTimeout(options.timeoutMs ?? 60_000),
        catch: (e) => e as InvalidOptions,
      })
      const timedOut = () => Effect.fail(new WaitForTimeout({ queue: name, jobId, timeoutMs }))
      // one last look at the state, itself bounded: a Redis that does not answer leaves the timeout standing
      const atTimeout = Effect.gen(function* () {
        const found = yield* answer(jobId, yield* lookup(jobId), sinceAdded(jobId))
        return found ?? (yield* timedOut())
      }).pipe(Effect.timeoutOrElse({ duration: LAST_LOOK_MS, orElse: timedOut }))
      return yield* wait(jobId).pipe(Effect.timeoutOrElse({ duration: timeoutMs, orElse: () => atTimeout }))
    }) as Effect.Effect<FinishedJob<R>, WaitForFailure>
}
