/**
 * The plain reads of one queue: look-ups no script needs to make atomic, each a single O(1)
 * or O(log N) command (the scripts' calls are in Commands.ts).
 */
import * as Effect from "effect/Effect"
import type { RedisClient } from "../../redis/Client.ts"
import type { RedisError } from "../model/Errors.ts"
import type { QueueKeys } from "../model/Keys.ts"
import { redisError } from "./Replies.ts"

/** A dead job's place in the dead set: its id and time of death (no payload). */
export interface DeadHead {
  readonly id: string
  readonly diedAt: number
}

/** `[member, score, …]`, or `[[member, score], …]` when the connection speaks RESP3. */
const scored = (reply: unknown): Array<DeadHead> => {
  const flat = (Array.isArray(reply) ? reply.flat() : []) as Array<string | number>
  const out: DeadHead[] = []
  for (let i = 0; i + 1 < flat.length; i += 2) out.push({ id: String(flat[i]), diedAt: Number(flat[i + 1]) })
  return out
}

/**
 * Plain read-only commands on one queue's keys, for look-ups no script needs to make
 * atomic (each a single O(1) or O(log N) read). Each fails with a typed
 * {@link RedisError} (see `Replies.ts`); none writes.
 */
export const lookups = (client: RedisClient, keys: QueueKeys) => {
  const read = (name: string, args: ReadonlyArray<string | number>): Effect.Effect<unknown, RedisError> =>
    Effect.tryPromise({
      try: () => client.command(name, args),
      catch: (e) => redisError(name, e, client.describe, client.lastError?.()),
    })
  const present = (reply: unknown) => reply !== null && reply !== undefined
  return {
    /** The `count` oldest deaths, from rank `from`: ids and times of death (ZRANGE … WITHSCORES), no payloads. */
    deadHeads: (from: number, count: number) =>
      read("ZRANGE", [keys.dead, from, from + count - 1, "WITHSCORES"]).pipe(Effect.map(scored)),
    /** How many jobs are dead (ZCARD). */
    deadCount: read("ZCARD", [keys.dead]).pipe(Effect.map(Number)),
    /** True when job `id` is retained as completed (in `done`). */
    isRetained: (id: string) => read("ZSCORE", [keys.done, id]).pipe(Effect.map(present)),
    /**
     * The fencing token of job `id`'s current lease (as stored), or undefined when it has none:
     * from its holder entry (key layout 2), else from `lease` (an entry of layout 1's form).
     * Both read at once: one round trip.
     */
    leaseToken: (id: string) =>
      Effect.all([read("HGET", [keys.holder, id]), read("HGET", [keys.lease, id])], { concurrency: 2 }).pipe(
        Effect.map(([h, t]) => {
          const token = present(h) ? /^[^|]*\|(\d+)\|\d+\|\d+$/.exec(String(h))?.[1] : undefined
          return token ?? (present(t) ? String(t) : undefined)
        }),
      ),
    /** True when the queue's meta has a layout (add writes it; an obliterated queue has none). */
    hasLayout: read("HEXISTS", [keys.meta, "layout"]).pipe(Effect.map((n) => Number(n) === 1)),
    /** True when job `id` was cancelled (in `cancelled`: the newest max(keep, 1000) cancels). */
    isCancelled: (id: string) => read("ZSCORE", [keys.cancelled, id]).pipe(Effect.map(present)),
    /** True when job `id` is dead (in `dead`). */
    isDead: (id: string) => read("ZSCORE", [keys.dead, id]).pipe(Effect.map(present)),
    /** True when job `id` still has its payload (in `data`). */
    hasPayload: (id: string) => read("HEXISTS", [keys.data, id]).pipe(Effect.map((n) => Number(n) === 1)),
    /**
     * The id of the job holding dedupe key `key`, or undefined when the key is free (never
     * held, cleared, or its TTL ran out on the Redis clock: an entry the sweep has not dropped
     * yet is free, as add and clear-dedupe take it). Its entry and the clock in one round trip.
     */
    dedupeHolder: (key: string) =>
      Effect.all([read("ZSCORE", [keys.dedupe, key]), read("HGET", [keys.dedupeid, key]), read("TIME", [])], {
        concurrency: 3,
      }).pipe(
        Effect.map(([expiry, id, time]) => {
          if (!present(expiry) || !present(id)) return undefined
          const [s, us] = (time as ReadonlyArray<unknown>).map(Number) as [number, number]
          const until = String(expiry)
          // "until finished" is held at +inf (RESP2 "inf", RESP3 Infinity)
          const held = until === "inf" || until === "Infinity" || Number(until) > s * 1000 + Math.floor(us / 1000)
          return held ? String(id) : undefined
        }),
      ),
    /** Job `id`'s last error as stored (JSON text), or undefined. */
    lastError: (id: string) =>
      read("HGET", [keys.err, id]).pipe(Effect.map((e) => (present(e) ? String(e) : undefined))),
  }
}

/** The look-ups of one queue. */
export type Lookups = ReturnType<typeof lookups>
