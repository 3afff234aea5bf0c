/**
 * Retry delays after a handler failure: fixed, exponential with jitter, or a
 * function of the attempt.
 */
import { InvalidOptions } from "./Errors.ts"
import { Limits } from "./Validate.ts"

/**
 * How long to wait before retrying a failed job.
 * - `{ type: "fixed", delayMs }` — always `delayMs`.
 * - `{ type: "exponential", delayMs, maxDelayMs?, jitter? }` — `delayMs * 2^(attempt-1)`, capped at
 *   `maxDelayMs` (default 1 h), with full jitter (a random delay between half and all of it) unless `jitter: false`.
 * - `(attempt, error) => ms` — your own; must return a whole number of ms from 0 to 365 days.
 *
 * Default: `{ type: "exponential", delayMs: 1000, maxDelayMs: 3_600_000, jitter: true }`.
 */
export type Backoff =
  | { readonly type: "fixed"; readonly delayMs: number }
  | { readonly type: "exponential"; readonly delayMs: number; readonly maxDelayMs?: number; readonly jitter?: boolean }
  | ((attempt: number, error: unknown) => number)

/** The default backoff. */
export const DEFAULT_BACKOFF: Backoff = { type: "exponential", delayMs: 1000, maxDelayMs: 3_600_000, jitter: true }

const ms = (field: string, value: unknown, min = 0): number => {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > Limits.delayMs.max) {
    throw new InvalidOptions({
      field,
      value,
      reason: `must be a whole number of ms from ${min} to ${Limits.delayMs.max}`,
    })
  }
  return value
}

/** Check a backoff option; throws {@link InvalidOptions} naming the bad field. */
export const validateBackoff = (field: string, value: unknown): Backoff => {
  if (value === undefined) return DEFAULT_BACKOFF
  if (typeof value === "function") return value as Backoff
  if (typeof value !== "object" || value === null) {
    throw new InvalidOptions({
      field,
      value,
      reason: 'must be { type: "fixed" | "exponential", delayMs } or a function (attempt, error) => ms',
    })
  }
  const b = value as Record<string, unknown>
  if (b.type === "fixed") return { type: "fixed", delayMs: ms(`${field}.delayMs`, b.delayMs) }
  if (b.type === "exponential") {
    const delayMs = ms(`${field}.delayMs`, b.delayMs, 1)
    const maxDelayMs = b.maxDelayMs === undefined ? 3_600_000 : ms(`${field}.maxDelayMs`, b.maxDelayMs, delayMs)
    if (b.jitter !== undefined && typeof b.jitter !== "boolean") {
      throw new InvalidOptions({ field: `${field}.jitter`, value: b.jitter, reason: "must be true or false" })
    }
    return { type: "exponential", delayMs, maxDelayMs, jitter: b.jitter !== false }
  }
  throw new InvalidOptions({ field: `${field}.type`, value: b.type, reason: 'must be "fixed" or "exponential"' })
}

/** The delay before retrying after failed attempt number `attempt` (1-based). */
export const retryDelay = (backoff: Backoff, attempt: number, error: unknown): number => {
  if (typeof backoff === "function") {
    const d = backoff(attempt, error)
    return Number.isInteger(d) && d >= 0 ? Math.min(d, Limits.delayMs.max) : 0
  }
  if (backoff.type === "fixed") return backoff.delayMs
  const raw = Math.min(backoff.delayMs * 2 ** Math.min(attempt - 1, 40), backoff.maxDelayMs ?? 3_600_000)
  return backoff.jitter === false ? raw : Math.round(raw / 2 + (Math.random() * raw) / 2)
}
