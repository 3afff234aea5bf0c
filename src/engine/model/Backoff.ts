/**
 * Retry delays after a handler failure: fixed, exponential with jitter, or a
 * function of the attempt.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { CallbackFailed, InvalidOptions } from "./Errors.ts"
import { type Checked, checkKnownKeys, Limits, orThrow } from "./Validate.ts"

/**
 * How long to wait before retrying a failed job.
 * - `{ type: "fixed", delayMs }` — always `delayMs`.
 * - `{ type: "exponential", delayMs, maxDelayMs?, jitter? }` — `delayMs * 2^(attempt-1)`, capped at
 *   `maxDelayMs` (default 1 h), with full jitter (a random delay between half and all of it) unless `jitter: false`.
 * - `(attempt, error) => ms` — your own. It may return a number of ms (rounded, capped at
 *   365 days), a negative number for "do not retry" (the job goes to dead with the handler's
 *   error), or a Promise of either (awaited up to 10 s). A throw, a rejection, a timeout or
 *   anything else (NaN, Infinity, a string) is reported as an `error` event
 *   ({@link CallbackFailed} or {@link InvalidOptions}) and the default backoff applies.
 *
 * Default: `{ type: "exponential", delayMs: 1000, maxDelayMs: 3_600_000, jitter: true }`.
 */
export type Backoff =
  | { readonly type: "fixed"; readonly delayMs: number }
  | { readonly type: "exponential"; readonly delayMs: number; readonly maxDelayMs?: number; readonly jitter?: boolean }
  | ((attempt: number, error: unknown) => number | Promise<number>)

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
  // BullMQ's { type, delay } gets "did you mean delayMs?"
  const known = b.type === "fixed" ? ["type", "delayMs"] : ["type", "delayMs", "maxDelayMs", "jitter"]
  orThrow(checkKnownKeys(field, b, known))
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

/** The delay before retrying after failed attempt number `attempt` (1-based), for the built-in backoffs. */
export const retryDelay = (
  backoff: Exclude<Backoff, (attempt: number, error: unknown) => unknown>,
  attempt: number,
): number => {
  if (backoff.type === "fixed") return backoff.delayMs
  const raw = Math.min(backoff.delayMs * 2 ** Math.min(attempt - 1, 40), backoff.maxDelayMs ?? 3_600_000)
  return backoff.jitter === false ? raw : Math.round(raw / 2 + (Math.random() * raw) / 2)
}

/** What to do after a failed attempt: retry after `delayMs`, or not at all (dead at once). */
export interface RetryPlan {
  readonly retry: boolean
  readonly delayMs: number
}

/** How long a backoff function's Promise is awaited. */
export const BACKOFF_TIMEOUT_MS = 10_000

const defaultPlan = (attempt: number): RetryPlan => ({
  retry: true,
  delayMs: retryDelay(DEFAULT_BACKOFF as Exclude<Backoff, (a: number, e: unknown) => unknown>, attempt),
})

/**
 * The retry plan after failed attempt `attempt` (1-based) with `error`. Never fails: a
 * backoff function that throws, rejects, hangs or returns something that is not a number
 * of ms is reported through `report` and the default backoff applies.
 */
export const planRetry = (
  backoff: Backoff,
  attempt: number,
  error: unknown,
  report: (problem: unknown) => void,
): Effect.Effect<RetryPlan> => {
  if (typeof backoff !== "function") return Effect.succeed({ retry: true, delayMs: retryDelay(backoff, attempt) })
  return Effect.tryPromise({
    try: async () => backoff(attempt, error),
    catch: (cause) => new CallbackFailed({ callback: "the backoff function", cause }),
  }).pipe(
    Effect.timeoutOrElse({
      duration: BACKOFF_TIMEOUT_MS,
      orElse: () =>
        Effect.fail(
          new CallbackFailed({
            callback: "the backoff function",
            cause: `no answer within ${BACKOFF_TIMEOUT_MS} ms (its Promise never settled)`,
          }),
        ),
    }),
    Effect.flatMap((d: unknown) => {
      if (typeof d === "number" && d < 0) return Effect.succeed<RetryPlan>({ retry: false, delayMs: 0 })
      if (typeof d === "number" && Number.isFinite(d)) {
        return Effect.succeed<RetryPlan>({ retry: true, delayMs: Math.min(Math.round(d), Limits.delayMs.max) })
      }
      return Effect.fail(
        new InvalidOptions({
          field: "backoff",
          value: d,
          reason: `returned for attempt ${attempt}: it must return a number of ms (0 or more), a negative number for no retry, or a Promise of one; the default backoff was used`,
        }),
      )
    }),
    Effect.catch((problem) =>
      Effect.sync(() => {
        report(problem)
        return defaultPlan(attempt)
      }),
    ),
  )
}

/**
 * A job's own backoff (the `backoff` job option): one of the built-in kinds of {@link Backoff}
 * (a function cannot be stored), stored only when given. It sets a retry's delay instead of the
 * worker's (a manual fail's default), not whether to retry: a worker's backoff function that
 * answers "no retry" still ends the job, and `maxAttempts` still counts.
 */
export type JobBackoff = Exclude<Backoff, (attempt: number, error: unknown) => unknown>

/** A job's own backoff validated (a job's `backoff` option), as JSON text; undefined when not given. */
export const checkJobBackoff = (field: string, value: unknown): Checked<string | undefined> => {
  if (value === undefined) return Result.succeed(undefined)
  if (typeof value !== "object" || value === null) {
    return Result.fail(
      new InvalidOptions({
        field: `${field}.backoff`,
        value,
        reason:
          'must be { type: "fixed" | "exponential", delayMs, … } (a backoff function cannot be stored with a job: give it to the Worker)',
      }),
    )
  }
  try {
    return Result.succeed(JSON.stringify(validateBackoff(`${field}.backoff`, value)))
  } catch (e) {
    return Result.fail(e as InvalidOptions)
  }
}
