/**
 * Retention: how long finished jobs stay (with their payload and result) so getJob and
 * waitFor can answer for them. A queue policy stored in its meta hash (fields keep, keepMs,
 * keepCancelled), read by the scripts that finish a job (complete, reserve's riders,
 * cancel) in the meta read they already do, and by the sweep, which trims completed jobs
 * by age. Cancelled jobs have a count bound only (no age bound yet); dead jobs none.
 */
import * as Effect from "effect/Effect"
import type { RedisClient } from "../../redis/Client.ts"
import { redisError } from "../calls/Replies.ts"
import type { InvalidOptions } from "../model/Errors.ts"
import type { QueueKeys } from "../model/Keys.ts"
import { integerOr, knownKeys, optionsObject } from "../model/Validate.ts"

/** The bound of cancelled jobs: at most `count` kept with their data. */
export interface CountBound {
  /** Most jobs kept (the oldest beyond it lose their data as jobs are cancelled). 0 – 1 000 000. Default 1000. */
  readonly count: number
}

/** The bounds of completed jobs: at most `count` kept, none older than `ageMs`. */
export interface RetentionBounds {
  /** Most jobs kept (the oldest beyond it are deleted as jobs finish). 0 – 1 000 000. Default 1000. */
  readonly count: number
  /** Longest a job is kept, in ms (deleted by the sweep past it). 0 – 1 year. Default 3 600 000 (1 hour). */
  readonly ageMs: number
}

/** A queue's retention policy (see {@link resolveRetention}). */
export interface Retention {
  readonly completed: RetentionBounds
  readonly cancelled: CountBound
}

/** Retention of a queue that never set one: 1 hour, at most 1,000 completed and 1,000 cancelled jobs. */
export const DEFAULT_RETENTION: Retention = {
  completed: { count: 1000, ageMs: 3_600_000 },
  cancelled: { count: 1000 },
}

const COUNT = { min: 0, max: 1_000_000 }
const AGE = { min: 0, max: 365 * 24 * 3_600_000 }

const bounds = (field: string, value: unknown, fallback: RetentionBounds): RetentionBounds => {
  if (value === undefined) return fallback
  const o = optionsObject(field, value)
  knownKeys(field, o, ["count", "ageMs"])
  return {
    count: integerOr(`${field}.count`, o.count, fallback.count, COUNT),
    ageMs: integerOr(`${field}.ageMs`, o.ageMs, fallback.ageMs, AGE),
  }
}

const countBound = (field: string, value: unknown, fallback: CountBound): CountBound => {
  if (value === undefined) return fallback
  const o = optionsObject(field, value)
  knownKeys(field, o, ["count"])
  return { count: integerOr(`${field}.count`, o.count, fallback.count, COUNT) }
}

/**
 * Validate a retention policy: `{ completed?: { count?, ageMs? }, cancelled?: { count? } }`; what is
 * not given takes the default. Throws InvalidOptions naming the field and value.
 */
export const resolveRetention = (value: unknown): Retention => {
  const o = optionsObject("retention", value)
  knownKeys("retention", o, ["completed", "cancelled"])
  return {
    completed: bounds("retention.completed", o.completed, DEFAULT_RETENTION.completed),
    cancelled: countBound("retention.cancelled", o.cancelled, DEFAULT_RETENTION.cancelled),
  }
}

/** The retention side of the queue whose (partition) keys are `queues`. */
export const makeRetention = (client: RedisClient, queues: ReadonlyArray<QueueKeys>) => {
  const command = (name: string, args: ReadonlyArray<string | number>) =>
    Effect.tryPromise({
      try: () => client.command(name, args),
      catch: (e) => redisError(name, e, client.describe, client.lastError?.()),
    })
  return {
    /** Store the policy on every partition (one HSET each). Validated first: bad input writes nothing. */
    setRetention: (value: unknown) =>
      Effect.try({ try: () => resolveRetention(value), catch: (e) => e as InvalidOptions }).pipe(
        Effect.flatMap((r) =>
          Effect.forEach(
            queues,
            (k) =>
              command("HSET", [
                k.meta,
                "keep",
                r.completed.count,
                "keepMs",
                r.completed.ageMs,
                "keepCancelled",
                r.cancelled.count,
              ]),
            { discard: true },
          ),
        ),
      ),

    /** The queue's retention (of its first partition); the default where unset. */
    retention: command("HMGET", [queues[0]!.meta, "keep", "keepMs", "keepCancelled"]).pipe(
      Effect.map((v): Retention => {
        const f = v as ReadonlyArray<string | null>
        const n = (i: number, d: number) => (f[i] === null || f[i] === undefined ? d : Number(f[i]))
        const d = DEFAULT_RETENTION
        return {
          completed: { count: n(0, d.completed.count), ageMs: n(1, d.completed.ageMs) },
          cancelled: { count: n(2, d.cancelled.count) },
        }
      }),
    ),
  }
}
