/**
 * The events side of a queue, shared by both faces: follow its events, wait for a job to
 * finish, set how many events it retains. A partitioned queue passes every partition's
 * keys; its events are merged.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { RedisClient } from "../../redis/Client.ts"
import { redisError } from "../calls/Replies.ts"
import type { InvalidOptions, RedisError } from "../model/Errors.ts"
import type { QueueKeys } from "../model/Keys.ts"
import {
  DEFAULT_EVENTS_MAXLEN,
  type EventsFrom,
  eventStream,
  type JobEvent,
  latestIds,
  validateFrom,
  validateRetention,
} from "./Events.ts"
import { makeWaitFor } from "./WaitFor.ts"

/** The events side of the queue whose (partition) keys are `queues`; `client` is the queue's own. */
export const makeQueueEvents = (client: RedisClient, name: string, queues: ReadonlyArray<QueueKeys>) => {
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

    /** Wait until job `id` has ended (completed, dead or cancelled): see {@link makeWaitFor}. */
    waitFor: makeWaitFor(client, name, queues),

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

export { type FinishedJob, JobGone, type WaitForFailure, WaitForTimeout } from "./WaitFor.ts"
export type { EventsFrom, JobEvent }
