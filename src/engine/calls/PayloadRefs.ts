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
import type { Reserved } from "../scripts/LeaseScripts.ts"
import { redisError } from "./Replies.ts"

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
      const found = reply as ReadonlyArray<string | null>
      const byId = new Map<string, string | null>()
      for (let i = 0; i < ids.length; i++) byId.set(ids[i]!, found[i] ?? null)
      const jobs = []
      for (const j of reserved.jobs) {
        if (j.payload !== "") jobs.push(j)
        else {
          const payload = byId.get(j.id)
          if (payload !== null && payload !== undefined) jobs.push({ ...j, payload: String(payload) })
        }
      }
      return { ...reserved, jobs }
    }),
  )
}
