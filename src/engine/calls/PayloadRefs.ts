/**
 * Payloads answered by reference. A reserve call sent with `refAt` leaves out of its reply
 * every payload of that many bytes or more (lua/reserve.lua, ARGV[8]): such a job comes
 * back with payload "" and is read here with one plain HMGET of the call's jobs. Redis
 * copies a payload into Lua and out again at ~2.6 µs a KB; a plain HMGET writes it to the
 * socket once. The jobs are leased to this worker when the HMGET runs, so their data is
 * there (a job cancelled meanwhile keeps its data for a while too); a job whose payload is
 * gone by then (the queue obliterated, or the job cancelled or its lease lost and the job
 * trimmed since) is left out: it is not this worker's to run, and a lease left held runs out.
 */
import * as Effect from "effect/Effect"
import type { RedisClient } from "../../redis/Client.ts"
import type { RedisError } from "../model/Errors.ts"
import type { QueueKeys } from "../model/Keys.ts"
import type { Reservation, Reserved } from "../scripts/LeaseScripts.ts"
import { redisError } from "./Replies.ts"

/**
 * Payload size (bytes) from which a reserve call is asked to answer such payloads by
 * reference, once its caller leased one: 4 KiB. A payload read into Lua and out again costs
 * Redis ~2.6 µs a KB (Lua copies and interns every string), a plain HMGET a fraction of
 * that; the reference costs one HSTRLEN a job and a second round trip a call.
 */
export const LARGE_PAYLOAD_BYTES = 4096

/** When a caller's next reserve call reads large payloads by reference (its `refAt`). */
export interface PayloadSizes {
  /** The next call's `refAt`: {@link LARGE_PAYLOAD_BYTES} after a call that leased a large payload, else 0. */
  readonly refAt: () => number
  /** A call answered these jobs (one that leased none says nothing of the payloads). */
  readonly leased: (jobs: ReadonlyArray<Reservation>) => void
}

/**
 * What one caller (a worker, a manual consumer) learnt of the payloads it leases: after a
 * call whose jobs include a payload of {@link LARGE_PAYLOAD_BYTES} or more (counted in UTF-16
 * units: as many bytes or fewer), the next call reads such payloads by reference; after one
 * with none, not. A queue of small jobs never does.
 */
export const payloadSizes = (): PayloadSizes => {
  let large = false
  return {
    refAt: () => (large ? LARGE_PAYLOAD_BYTES : 0),
    leased: (jobs) => {
      if (jobs.length > 0) large = jobs.some((j) => j.payload.length >= LARGE_PAYLOAD_BYTES)
    },
  }
}

/**
 * `reserved` with the payloads left out by reference read from data (one HMGET; none when
 * the reply has none left out). Fails with a {@link RedisError} when the HMGET does: the
 * call then counts as one whose reply was lost (its leases run out, or a re-send answers them).
 */
export const fillPayloads = (
  client: RedisClient,
  keys: QueueKeys,
  reserved: Reserved,
): Effect.Effect<Reserved, RedisError> => {
  const ids: string[] = []
  for (const j of reserved.jobs) if (j.payload === "") ids.push(j.id)
  if (ids.length === 0) return Effect.succeed(reserved)
  return Effect.tryPromise({
    try: () => client.command("HMGET", [keys.data, ...ids]),
    catch: (e) => redisError("HMGET", e, client.describe, client.lastError?.()),
  }).pipe(
    Effect.map((reply) => {
      // the HMGET's values in the order of `ids`, which is the order of those jobs in `jobs`
      const found = reply as ReadonlyArray<string | null>
      const jobs: Reservation[] = []
      let k = 0
      for (const j of reserved.jobs) {
        if (j.payload !== "") jobs.push(j)
        else {
          const payload = found[k++]
          if (payload !== null && payload !== undefined) jobs.push({ ...j, payload })
        }
      }
      return { ...reserved, jobs }
    }),
  )
}
