/**
 * Flow control of a whole queue: the queue-wide rate limit and concurrency cap (stored in
 * the queue's meta hash, enforced by the reserve script, lua/include/flow.lua), and the two
 * errors a handler throws to shape the flow: {@link RateLimited} and {@link Snooze}.
 */
import * as Data from "effect/Data"
import { InvalidOptions } from "./Errors.ts"

/** The longest `retryAfterMs` or `delayMs` accepted: 30 days in ms. */
export const MAX_FLOW_DELAY_MS = 30 * 24 * 3600 * 1000

/** The largest `max` of a rate limit and the largest concurrency cap. */
export const MAX_FLOW_LIMIT = 1_000_000_000

/** The longest `perMs` of a rate limit: 30 days in ms. */
export const MAX_RATE_PER_MS = MAX_FLOW_DELAY_MS

/** `value` when it is a whole number from `min` to `max`, else {@link InvalidOptions} naming `field`. */
const wholeIn = (field: string, value: unknown, min: number, max: number, what: string): number => {
  if (typeof value === "number" && Number.isInteger(value) && value >= min && value <= max) return value
  throw new InvalidOptions({ field, value, reason: `must be a whole number from ${min} to ${max} (${what})` })
}

/**
 * Thrown (or failed with) by a handler that met a downstream limit, such as an HTTP 429:
 * its job goes back to the front of the queue without spending an attempt, and the queue
 * leases nothing for `retryAfterMs` (on the Redis clock, for every worker). Throws
 * {@link InvalidOptions} when `retryAfterMs` is not a whole number of ms from 0 to 30 days.
 */
export class RateLimited extends Data.TaggedError("RateLimited")<{ readonly retryAfterMs: number }> {
  constructor(args: { readonly retryAfterMs: number }) {
    super({
      retryAfterMs: wholeIn("retryAfterMs", args?.retryAfterMs, 0, MAX_FLOW_DELAY_MS, "ms the queue leases nothing"),
    })
  }
  override get message() {
    return `rate limited downstream: the job goes back to the front and the queue leases nothing for ${this.retryAfterMs} ms`
  }
}

/**
 * Thrown (or failed with) by a handler to run its job again later: the job goes to delayed
 * for `delayMs` without spending an attempt (counted in the queue's `snoozed` counter, and a
 * `snoozed` event). Throws {@link InvalidOptions} when `delayMs` is not a whole number of ms
 * from 0 to 30 days.
 */
export class Snooze extends Data.TaggedError("Snooze")<{ readonly delayMs: number }> {
  constructor(args: { readonly delayMs: number }) {
    super({ delayMs: wholeIn("delayMs", args?.delayMs, 0, MAX_FLOW_DELAY_MS, "ms until the job runs again") })
  }
  override get message() {
    return `snoozed: the job runs again in ${this.delayMs} ms, without spending an attempt`
  }
}

/** A queue-wide rate limit: at most `max` jobs leased in any `perMs` ms of the Redis clock. */
export interface RateLimit {
  readonly max: number
  readonly perMs: number
}

/**
 * `limit` when it is null (clear) or `{ max, perMs }` with `max` a whole number from 1 to
 * {@link MAX_FLOW_LIMIT} and `perMs` one from 1 to {@link MAX_RATE_PER_MS}; else
 * {@link InvalidOptions} naming the field.
 */
export const validateRateLimit = (limit: unknown): RateLimit | null => {
  if (limit === null) return null
  if (typeof limit !== "object" || limit === undefined || Array.isArray(limit)) {
    throw new InvalidOptions({
      field: "rateLimit",
      value: limit,
      reason: "must be { max, perMs } (at most max jobs leased per perMs ms), or null to clear it",
    })
  }
  const { max, perMs, ...rest } = limit as Record<string, unknown>
  const extra = Object.keys(rest)[0]
  if (extra !== undefined) {
    throw new InvalidOptions({
      field: `rateLimit.${extra}`,
      value: rest[extra],
      reason: "is not an option (max, perMs)",
    })
  }
  return {
    max: wholeIn("max", max, 1, MAX_FLOW_LIMIT, "jobs leased per window"),
    perMs: wholeIn("perMs", perMs, 1, MAX_RATE_PER_MS, "the window in ms"),
  }
}

/** `n` when it is null (clear) or a whole number from 1 to {@link MAX_FLOW_LIMIT}, else {@link InvalidOptions} naming `concurrency`. */
export const validateConcurrency = (n: unknown): number | null =>
  n === null
    ? null
    : wholeIn("concurrency", n, 1, MAX_FLOW_LIMIT, "jobs active at once across all workers, or null to clear it")

/** The flow limits of a queue as its stats show them. */
export interface FlowLimits {
  /** The rate limit, or null when none is set. */
  readonly rateLimit: RateLimit | null
  /** The concurrency cap, or null when none is set. */
  readonly concurrency: number | null
  /** ms the queue still leases nothing for (a handler's RateLimited), 0 when it is not held. */
  readonly heldMs: number
}

/**
 * The flow limits from a queue's meta hash (fields as lua/include/flow.lua names them) at
 * `now` (Redis clock). A partition of a partitioned queue shows the whole queue's limit
 * (meta.rateTotal, meta.concurrencyTotal: lua/flow-share.lua), not its share.
 */
export const flowLimitsOf = (meta: Readonly<Record<string, number>>, now: number): FlowLimits => {
  const max = meta.rateMax
  const perMs = meta.ratePer
  return {
    rateLimit: max !== undefined && perMs !== undefined ? { max: meta.rateTotal ?? max, perMs } : null,
    concurrency: meta.concurrency === undefined ? null : (meta.concurrencyTotal ?? meta.concurrency),
    heldMs: Math.max(0, (meta.heldUntil ?? 0) - now),
  }
}
