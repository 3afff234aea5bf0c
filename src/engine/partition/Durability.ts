/**
 * The opt-in `durability` option: after a write the caller must not lose (an `add`, a
 * worker's `complete`), send Redis `WAIT <replicas> <timeoutMs>` on the same connection
 * of the node that took the write, and resolve only once enough replicas have it.
 *
 * Redis replication is asynchronous: without this, an acknowledged write can vanish
 * when its master fails over before the write reached a replica.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { RedisClient } from "../../redis/Client.ts"
import { NotReplicated, RedisUnavailable } from "../model/Errors.ts"
import { type Checked, checkIntegerOr, checkKnownKeys, checkObject } from "../model/Validate.ts"

/** The `durability` option: how many replicas must have a write, and how long to wait for them. */
export interface Durability {
  /** Replicas that must acknowledge each write. Default 1. Range 1–64. */
  readonly replicas?: number | undefined
  /** Longest wait for them, in ms (the WAIT timeout). Default 1000. Range 1 ms – 60 s (0, "forever", is refused). */
  readonly timeoutMs?: number | undefined
}

/** Validated durability settings. */
export interface DurabilitySettings {
  readonly replicas: number
  readonly timeoutMs: number
}

/** Check `durability` (undefined or false: off; true: the defaults), answering `InvalidOptions` naming the field. */
export const checkDurability = (value: unknown): Checked<DurabilitySettings | undefined> => {
  if (value === undefined || value === false) return Result.succeed(undefined)
  if (value === true) return Result.succeed({ replicas: 1, timeoutMs: 1000 })
  const o = checkObject("durability", value)
  if (Result.isFailure(o)) return Result.fail(o.failure)
  const known = checkKnownKeys("durability", o.success, ["replicas", "timeoutMs"])
  if (Result.isFailure(known)) return Result.fail(known.failure)
  const replicas = checkIntegerOr("durability.replicas", o.success.replicas, 1, { min: 1, max: 64 })
  if (Result.isFailure(replicas)) return Result.fail(replicas.failure)
  const timeoutMs = checkIntegerOr("durability.timeoutMs", o.success.timeoutMs, 1000, { min: 1, max: 60_000 })
  if (Result.isFailure(timeoutMs)) return Result.fail(timeoutMs.failure)
  return Result.succeed({ replicas: replicas.success, timeoutMs: timeoutMs.success })
}

/**
 * `base`, except that the scripts named in `scripts` run through `via` (default `base`)
 * followed by `WAIT` on the same connection of the same node. Fewer acknowledgements
 * than asked throws {@link NotReplicated}: the write stays on the master, not yet replicated.
 */
export const withDurability = (
  base: RedisClient,
  durability: DurabilitySettings,
  scripts: ReadonlyArray<string>,
  via: RedisClient = base,
): RedisClient => ({
  ...base,
  script: async (script, keys, args) => {
    if (!scripts.includes(script.name)) return base.script(script, keys, args)
    const r = await via.scriptThenWait(script, keys, args, durability.replicas, durability.timeoutMs)
    if (r.acknowledged >= durability.replicas) return r.reply
    throw new NotReplicated({
      operation: script.name,
      node: r.node,
      replicas: durability.replicas,
      acknowledged: r.acknowledged,
      timeoutMs: durability.timeoutMs,
      reason: r.waitError,
      jobIds: script.name === "add" && Array.isArray(r.reply) ? r.reply.slice(1).map(String) : undefined,
    })
  },
})

/** The command layer wraps what a client throws in RedisUnavailable; give a NotReplicated back as itself. */
export const unwrapNotReplicated = (error: unknown): unknown =>
  error instanceof RedisUnavailable && error.cause instanceof NotReplicated ? error.cause : error

/** {@link unwrapNotReplicated} on an Effect's error channel. */
export const surfaceNotReplicated = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | NotReplicated, R> =>
  Effect.mapError(effect, (e) => unwrapNotReplicated(e) as E | NotReplicated)
