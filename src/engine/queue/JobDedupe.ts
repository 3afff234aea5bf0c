/**
 * A job's dedupe options (docs/jobs.md, "Deduplication"): `dedupeKey`, held for `dedupeTtlMs`
 * or `dedupeUntil: "finished"`, and `dedupeExtend` (a duplicate add holds the key again).
 */
import * as Result from "effect/Result"
import { InvalidOptions } from "../model/Errors.ts"
import { isWellFormed, NOT_WELL_FORMED } from "../model/GroupName.ts"
import { type Checked, Limits } from "../model/Validate.ts"

/** `dedupeTtlMs` as sent to the add script for a key held until the job finishes. */
export const DEDUPE_UNTIL_FINISHED = -1

/** The dedupe options of the queue's defaults, as given. */
export interface DedupeDefaults {
  readonly dedupeKey?: unknown
  readonly dedupeTtlMs?: unknown
  readonly dedupeUntil?: unknown
  readonly dedupeExtend?: unknown
  readonly dedupeReplace?: unknown
}

/** `dedupeReplace`: a boolean (default false), only with a dedupe key. */
const checkDedupeReplace = (field: string, value: unknown, dedupeKey: unknown): Checked<boolean> => {
  const fail = (reason: string) => Result.fail(new InvalidOptions({ field: `${field}.dedupeReplace`, value, reason }))
  if (value === undefined || value === false) return Result.succeed(false)
  if (value !== true) return fail("must be true or false")
  return dedupeKey === undefined ? fail("needs a dedupeKey") : Result.succeed(true)
}

/** `dedupeExtend`: a boolean (default false), only with a dedupe key held for a TTL. */
const checkDedupeExtend = (
  field: string,
  value: unknown,
  dedupeKey: unknown,
  untilFinished: boolean,
): Checked<boolean> => {
  const fail = (reason: string) => Result.fail(new InvalidOptions({ field: `${field}.dedupeExtend`, value, reason }))
  if (value === undefined || value === false) return Result.succeed(false)
  if (value !== true) return fail("must be true or false")
  if (dedupeKey === undefined) return fail("needs a dedupeKey")
  if (untilFinished) return fail('cannot be given with dedupeUntil: "finished" (that key holds until the job finishes)')
  return Result.succeed(true)
}

/**
 * Whether a job's dedupe key is held until it finishes: its own `dedupeUntil`, else the
 * defaults' unless it gives its own `dedupeTtlMs`; else the {@link InvalidOptions}.
 */
const checkDedupeUntil = (
  field: string,
  given: Record<string, unknown>,
  defaults: DedupeDefaults,
  dedupeKey: unknown,
): Checked<boolean> => {
  const fail = (name: string, value: unknown, reason: string) =>
    Result.fail(new InvalidOptions({ field: `${field}.${name}`, value, reason }))
  if (given.dedupeUntil === undefined) {
    return Result.succeed(given.dedupeTtlMs === undefined && defaults.dedupeUntil === "finished")
  }
  if (given.dedupeUntil !== "finished") {
    return fail("dedupeUntil", given.dedupeUntil, 'must be "finished" (or left out, for a key held dedupeTtlMs)')
  }
  if (given.dedupeTtlMs !== undefined) {
    return fail("dedupeTtlMs", given.dedupeTtlMs, 'cannot be given with dedupeUntil: "finished"; give one of them')
  }
  if (dedupeKey === undefined) return fail("dedupeUntil", given.dedupeUntil, "needs a dedupeKey")
  return Result.succeed(true)
}

/**
 * The dedupe key ("" for none) and how long it is held (`ttl`, or
 * {@link DEDUPE_UNTIL_FINISHED}) of a job's options; else the {@link InvalidOptions}.
 */
export const checkDedupe = (
  field: string,
  given: Record<string, unknown>,
  defaults: DedupeDefaults,
  ttl: number,
): Checked<{
  readonly dedupeKey: string
  readonly dedupeTtlMs: number
  readonly dedupeExtend: boolean
  readonly dedupeReplace: boolean
}> => {
  const dedupeKey = given.dedupeKey ?? defaults.dedupeKey
  if (
    dedupeKey !== undefined &&
    (typeof dedupeKey !== "string" || dedupeKey.length === 0 || dedupeKey.length > Limits.dedupeKeyLength)
  ) {
    return Result.fail(
      new InvalidOptions({
        field: `${field}.dedupeKey`,
        value: dedupeKey,
        reason: `must be a non-empty string of at most ${Limits.dedupeKeyLength} characters`,
      }),
    )
  }
  if (typeof dedupeKey === "string" && !isWellFormed(dedupeKey)) {
    return Result.fail(new InvalidOptions({ field: `${field}.dedupeKey`, value: dedupeKey, reason: NOT_WELL_FORMED }))
  }
  if (given.dedupeTtlMs !== undefined && dedupeKey === undefined) {
    return Result.fail(
      new InvalidOptions({ field: `${field}.dedupeTtlMs`, value: given.dedupeTtlMs, reason: "needs a dedupeKey" }),
    )
  }
  const untilFinished = checkDedupeUntil(field, given, defaults, dedupeKey)
  if (Result.isFailure(untilFinished)) return Result.fail(untilFinished.failure)
  return Result.map(checkDebounce(field, given, defaults, dedupeKey, untilFinished.success), (modes) => ({
    dedupeKey: (dedupeKey as string | undefined) ?? "",
    dedupeTtlMs: untilFinished.success ? DEDUPE_UNTIL_FINISHED : ttl,
    ...modes,
  }))
}

/** The debounce modes of a job's options (`dedupeExtend`, `dedupeReplace`), with the defaults'. */
const checkDebounce = (
  field: string,
  given: Record<string, unknown>,
  defaults: DedupeDefaults,
  dedupeKey: unknown,
  untilFinished: boolean,
): Checked<{ readonly dedupeExtend: boolean; readonly dedupeReplace: boolean }> => {
  // a default dedupeExtend is for the keys held for a TTL: a job's own "finished" key goes without it
  const extendGiven = given.dedupeExtend ?? (untilFinished ? undefined : defaults.dedupeExtend)
  const extend = checkDedupeExtend(field, extendGiven, dedupeKey, untilFinished)
  if (Result.isFailure(extend)) return Result.fail(extend.failure)
  const replace = checkDedupeReplace(field, given.dedupeReplace ?? defaults.dedupeReplace, dedupeKey)
  return Result.map(replace, (r) => ({ dedupeExtend: extend.success, dedupeReplace: r }))
}
