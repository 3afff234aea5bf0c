/**
 * The wait of an idle worker: BZPOPMIN on the queue's marker (a ZSET whose one member an
 * add, a promotion or a resume sets), on the worker's own connection.
 *
 * {@link markerThenReserve} sends a reserve call right behind the wait, on the same
 * connection. Redis reads no command of a blocked client, so the reserve runs the moment
 * the wait ends — in the same turn of Redis' event loop as the add that set the marker, or
 * when the wait times out — and both replies come back together: a job added to an idle
 * queue is leased with no round trip between the wake-up and the reserve.
 */
import * as Effect from "effect/Effect"
import type { RedisClient } from "../../redis/Client.ts"
import type { RedisError } from "../model/Errors.ts"
import type { QueueKeys } from "../model/Keys.ts"
import type { Reserved, ReserveInput } from "../scripts/LeaseScripts.ts"
import { scriptKeys } from "../scripts/Script.ts"
import { decodeReply, type Refused, redisError } from "./Replies.ts"
import { Scripts } from "./Scripts.ts"

/** One wait for the marker. */
export interface MarkerWait {
  /** How long Redis blocks (BZPOPMIN's timeout), in ms. */
  readonly timeoutMs: number
  /**
   * When no reply came by then (ms from now), the connection is taken for silent
   * (half-open): it is replaced and the wait fails (see RedisClient.commandWithin).
   */
  readonly deadlineMs: number
}

/** BZPOPMIN's arguments for a wait of `timeoutMs` (in seconds, at least 10 ms: 0 would block for ever). */
export const markerArgs = (keys: QueueKeys, timeoutMs: number): ReadonlyArray<string> => [
  keys.marker,
  Math.max(0.01, timeoutMs / 1000).toFixed(3),
]

/** The BZPOPMIN of `wait` on `blocking`: the popped marker, or null when the wait timed out. */
export const waitForMarker = (
  blocking: RedisClient,
  keys: QueueKeys,
  wait: MarkerWait,
): Effect.Effect<unknown, RedisError> =>
  Effect.tryPromise({
    try: () => blocking.commandWithin("BZPOPMIN", markerArgs(keys, wait.timeoutMs), wait.deadlineMs),
    catch: (e) => redisError("BZPOPMIN", e, blocking.describe, blocking.lastError?.()),
  })

/** A call already sent: the Effect awaits its reply (a rejection is never left unhandled). */
const sent = <A, E>(reply: Promise<A>, onError: (e: unknown) => E): Effect.Effect<A, E> => {
  reply.catch(() => {})
  return Effect.tryPromise({ try: () => reply, catch: onError })
}

/** The two calls of {@link markerThenReserve}, both sent: await each. */
export interface MarkerThenReserve {
  /** The wait: the popped marker, or null when it timed out. */
  readonly woke: Effect.Effect<unknown, RedisError>
  /** The reserve call, run by Redis once the wait ended (whichever way). */
  readonly reserved: Effect.Effect<Reserved, RedisError | Refused>
}

/**
 * Send, on `blocking`, the wait for the marker and then a reserve call (`input`, as the
 * reserve command takes it), in this order, when the Effect runs (see the top of this
 * file). When the wait fails (its connection closed, or went silent and was replaced),
 * the reserve fails with it: Redis never runs the unread commands of a closed connection.
 * (A connection that went silent after Redis ran both loses the reserve's reply: its
 * leases expire and a sweep hands the jobs on, as for any reserve whose reply is lost.)
 */
export const markerThenReserve = (
  blocking: RedisClient,
  keys: QueueKeys,
  wait: MarkerWait,
  input: ReserveInput,
): Effect.Effect<MarkerThenReserve> =>
  Effect.sync(() => {
    const woke = sent(blocking.commandWithin("BZPOPMIN", markerArgs(keys, wait.timeoutMs), wait.deadlineMs), (e) =>
      redisError("BZPOPMIN", e, blocking.describe, blocking.lastError?.()),
    )
    const script = Scripts.reserve
    // every payload in the reply: the blocking connection is for the wait (see PayloadRefs.ts)
    const reply = blocking.script(script, scriptKeys(script, keys), script.args({ ...input, refAt: 0 }))
    const reserved = sent(reply, (e) =>
      redisError("reserve script", e, blocking.describe, blocking.lastError?.()),
    ).pipe(Effect.flatMap(decodeReply(keys, script.decode)))
    return { woke, reserved }
  })
