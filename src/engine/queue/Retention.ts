/**
 * Retention: how long finished jobs stay (with their payload, result, last error and
 * progress) so `getJob` and `waitFor` can answer for them. A queue policy stored in the
 * queue's meta hash (lua/set-retention.lua), read by the scripts that finish a job in the
 * meta read they already do (complete and reserve's riders: the count of completed jobs;
 * cancel: the count of cancelled jobs; fail, on its rare path to dead: the count of dead
 * jobs), and by the sweep, which trims every kind by age (and dead jobs by count), in
 * bounded calls.
 */
import { InvalidOptions } from "../model/Errors.ts"
import { integer, knownKeys, optionsObject } from "../model/Validate.ts"

/** The bounds of one kind of finished job: at most `count` kept, none older than `ageMs`. */
export interface RetentionBounds {
  /**
   * Most jobs kept; the oldest beyond it are deleted. 0 – 1 000 000. Completed jobs are
   * trimmed in batches: at most `count + min(floor(count / 16), 256)` are kept, and a
   * completion that finds more trims back to `count` (1,000: at most 1,062 kept). Cancelled
   * and dead jobs: at most `count`.
   */
  readonly count: number
  /** Longest a job is kept after it finished, in ms (deleted by the sweep past it). 0 – 1 year. */
  readonly ageMs: number
}

/** A queue's retention policy, as {@link Retention} reads it. */
export interface Retention {
  /** Completed jobs (with their results). Default: the newest 1,000, for 1 hour. */
  readonly completed: RetentionBounds
  /** Cancelled jobs (with their payloads). Default: the newest 1,000, for 1 hour. */
  readonly cancelled: RetentionBounds
  /** Dead jobs (with their last errors). Default: no bound — kept until retried or purged. */
  readonly dead: Partial<RetentionBounds>
}

/** What `setRetention` takes: each kind optional, each bound optional (not given: its default). */
export interface RetentionInput {
  readonly completed?: Partial<RetentionBounds> | undefined
  readonly cancelled?: Partial<RetentionBounds> | undefined
  readonly dead?: Partial<RetentionBounds> | undefined
}

/** Retention of a queue that never set one: completed and cancelled jobs 1 hour, at most 1,000 each; dead jobs unbounded. */
export const DEFAULT_RETENTION: Retention = {
  completed: { count: 1000, ageMs: 3_600_000 },
  cancelled: { count: 1000, ageMs: 3_600_000 },
  dead: {},
}

/** The meta fields the policy is stored in, in {@link Retention} order (the scripts read them by these names). */
export const RETENTION_FIELDS = [
  "keep",
  "keepMs",
  "keepCancelled",
  "keepCancelledMs",
  "keepDead",
  "keepDeadMs",
] as const

const COUNT = { min: 0, max: 1_000_000 }
const AGE = { min: 0, max: 31_536_000_000 }
const KINDS = ["completed", "cancelled", "dead"] as const

const boundsOf = (kind: (typeof KINDS)[number], value: unknown): Partial<RetentionBounds> => {
  const field = `retention.${kind}`
  const fallback = DEFAULT_RETENTION[kind]
  if (value === undefined) return fallback
  const o = optionsObject(field, value)
  knownKeys(field, o, ["count", "ageMs"])
  const count = o.count === undefined ? fallback.count : integer(`${field}.count`, o.count, COUNT)
  const ageMs = o.ageMs === undefined ? fallback.ageMs : integer(`${field}.ageMs`, o.ageMs, AGE)
  return { ...(count !== undefined ? { count } : {}), ...(ageMs !== undefined ? { ageMs } : {}) }
}

/**
 * Validate a policy (`{ completed?, cancelled?, dead? }`, each `{ count?, ageMs? }`): what is
 * not given takes its default ({@link DEFAULT_RETENTION}). Throws {@link InvalidOptions}
 * naming the field and the value.
 */
export const resolveRetention = (value: unknown): Retention => {
  if (value === undefined || value === null) {
    throw new InvalidOptions({
      field: "retention",
      value,
      reason: "must be an object such as { completed: { count: 1000, ageMs: 3600000 } }",
    })
  }
  const o = optionsObject("retention", value)
  knownKeys("retention", o, KINDS)
  return {
    completed: boundsOf("completed", o.completed) as RetentionBounds,
    cancelled: boundsOf("cancelled", o.cancelled) as RetentionBounds,
    dead: boundsOf("dead", o.dead),
  }
}

/** The policy as the values of {@link RETENTION_FIELDS} ("" for no bound: the field is deleted). */
export const retentionArgs = (r: Retention): ReadonlyArray<string | number> =>
  [r.completed.count, r.completed.ageMs, r.cancelled.count, r.cancelled.ageMs, r.dead.count, r.dead.ageMs].map(
    (v) => v ?? "",
  )

/** The policy from the values of {@link RETENTION_FIELDS} as HMGET answers them; the default where unset. */
export const decodeRetention = (reply: unknown): Retention => {
  const f = (Array.isArray(reply) ? reply : []) as ReadonlyArray<string | null | undefined>
  const n = (i: number, d: number | undefined) => (typeof f[i] === "string" && f[i] !== "" ? Number(f[i]) : d)
  const d = DEFAULT_RETENTION
  const dead = { count: n(4, undefined), ageMs: n(5, undefined) }
  return {
    completed: { count: n(0, d.completed.count)!, ageMs: n(1, d.completed.ageMs)! },
    cancelled: { count: n(2, d.cancelled.count)!, ageMs: n(3, d.cancelled.ageMs)! },
    dead: {
      ...(dead.count !== undefined ? { count: dead.count } : {}),
      ...(dead.ageMs !== undefined ? { ageMs: dead.ageMs } : {}),
    },
  }
}
