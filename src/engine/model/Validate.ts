/**
 * Argument checks, run before anything reaches Redis. Each `check…` returns a
 * `Result`: the value, or a tagged error naming the field, the value and what to do;
 * nothing is written when one fails. Effects take a check with `Effect.fromResult`.
 * {@link orThrow} is for the synchronous public calls whose contract is to throw (the
 * Promise face's constructors); `integer`, `integerOr`, `optionsObject` and `knownKeys`
 * are the checks through it.
 */
import * as Result from "effect/Result"
import { unknownOptionReason } from "./DidYouMean.ts"
import { InvalidOptions, InvalidPayload, type InvalidQueueName } from "./Errors.ts"
import { jsonChange } from "./JsonChange.ts"

/** What a validator answers: the value, or the error that says what is wrong and how to fix it. */
export type Checked<A, E = InvalidOptions> = Result.Result<A, E>

/** The errors validators answer; every one names the field and the value. */
export type ValidationError = InvalidOptions | InvalidPayload | InvalidQueueName

/** The value of a check, or its error thrown: only where a synchronous call's contract is to throw. */
export const orThrow = <A, E>(checked: Result.Result<A, E>): A => {
  if (Result.isFailure(checked)) throw checked.failure
  return checked.success
}

/** Documented limits. Every one is enforced with an error, never by silently clipping. */
export const Limits = {
  /** leaseMs bounds: 10 ms .. 24 h. */
  leaseMs: { min: 10, max: 86_400_000 },
  /** timeoutMs bounds (a job's or a worker's default): 1 ms .. 24 h. */
  timeoutMs: { min: 1, max: 86_400_000 },
  /** delayMs bounds: 0 .. 365 days. */
  delayMs: { min: 0, max: 31_536_000_000 },
  /** priority bounds: 0 (the default, runs first) .. 1 000 000. */
  priority: { min: 0, max: 1_000_000 },
  /** maxAttempts bounds: 1 .. 1000. */
  maxAttempts: { min: 1, max: 1000 },
  /** dedupeTtlMs bounds: 1 ms .. 30 days. */
  dedupeTtlMs: { min: 1, max: 2_592_000_000 },
  /** dedupeKey length: 1 .. 512 characters. */
  dedupeKeyLength: 512,
  /** concurrency bounds: 1 .. 10 000. */
  concurrency: { min: 1, max: 10_000 },
  /** Jobs in one addBulk call (one Redis call): at most 10 000. */
  bulk: 10_000,
  /** Default and largest payload size in bytes (UTF-8 JSON): 1 MiB default, 512 MiB hard maximum. */
  payloadBytes: { default: 1_048_576, max: 536_870_912 },
  /** Grace period on close: 0 .. 1 h. */
  shutdownGraceMs: { min: 0, max: 3_600_000 },
  /** Sweep batch: 1 .. 10 000 jobs per script call. */
  sweepLimit: { min: 1, max: 10_000 },
  /** A queue call's deadline: 10 s default, 10 ms .. 1 h. */
  callTimeoutMs: { default: 10_000, min: 10, max: 3_600_000 },
} as const

/** Inclusive bounds of a whole-number option. */
export interface Bounds {
  readonly min: number
  readonly max: number
}

/** An integer in [min, max], else {@link InvalidOptions}. */
export const checkInteger = (field: string, value: unknown, bounds: Bounds): Checked<number> => {
  if (typeof value !== "number" || !Number.isFinite(value) || !Number.isInteger(value)) {
    return Result.fail(
      new InvalidOptions({ field, value, reason: `must be a whole number from ${bounds.min} to ${bounds.max}` }),
    )
  }
  if (value < bounds.min || value > bounds.max) {
    return Result.fail(new InvalidOptions({ field, value, reason: `must be from ${bounds.min} to ${bounds.max}` }))
  }
  return Result.succeed(value)
}

/** Like {@link checkInteger}, with `fallback` for `undefined`. */
export const checkIntegerOr = (field: string, value: unknown, fallback: number, bounds: Bounds): Checked<number> =>
  value === undefined ? Result.succeed(fallback) : checkInteger(field, value, bounds)

/** A plain object (`{}` for undefined), else {@link InvalidOptions}. */
export const checkObject = (field: string, value: unknown): Checked<Record<string, unknown>> => {
  if (value === undefined) return Result.succeed({})
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return Result.fail(new InvalidOptions({ field, value, reason: "must be an object" }))
  }
  return Result.succeed(value as Record<string, unknown>)
}

/**
 * {@link InvalidOptions} for the first key of `value` not in `allowed`, saying what was
 * meant: a typo such as `leaseMS` or a BullMQ name such as `attempts` gets "did you mean …?".
 */
export const checkKnownKeys = (
  field: string,
  value: Record<string, unknown>,
  allowed: ReadonlyArray<string>,
): Checked<void> => {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      return Result.fail(
        new InvalidOptions({
          field: `${field}.${key}`,
          value: value[key],
          reason: unknownOptionReason(key, allowed),
        }),
      )
    }
  }
  return Result.void
}

/** A page of a list: `offset` (default 0) and `count` (default 100, at most 10 000). */
export const checkPage = (value: unknown): Checked<{ readonly offset: number; readonly count: number }> => {
  const o = checkObject("options", value)
  if (Result.isFailure(o)) return Result.fail(o.failure)
  const offset = checkIntegerOr("offset", o.success.offset, 0, { min: 0, max: Number.MAX_SAFE_INTEGER })
  if (Result.isFailure(offset)) return Result.fail(offset.failure)
  const count = checkIntegerOr("count", o.success.count, 100, { min: 1, max: 10_000 })
  if (Result.isFailure(count)) return Result.fail(count.failure)
  return Result.succeed({ offset: offset.success, count: count.success })
}

/** {@link checkInteger}, throwing its error (synchronous option parsing). */
export const integer = (field: string, value: unknown, bounds: Bounds): number =>
  orThrow(checkInteger(field, value, bounds))

/** {@link checkIntegerOr}, throwing its error (synchronous option parsing). */
export const integerOr = (field: string, value: unknown, fallback: number, bounds: Bounds): number =>
  orThrow(checkIntegerOr(field, value, fallback, bounds))

/** {@link checkObject}, throwing its error (synchronous option parsing). */
export const optionsObject = (field: string, value: unknown): Record<string, unknown> =>
  orThrow(checkObject(field, value))

/** {@link checkKnownKeys}, throwing its error (synchronous option parsing). */
export const knownKeys = (field: string, value: Record<string, unknown>, allowed: ReadonlyArray<string>): void =>
  orThrow(checkKnownKeys(field, value, allowed))

/**
 * True when `JSON.stringify(value)` keeps everything in it: plain objects and arrays
 * (no `toJSON`, at most 32 deep) of strings, finite numbers, booleans and null. Anything
 * else is serialised the careful way, which says what JSON would drop or change.
 */
const plainJson = (value: unknown, depth: number): boolean => {
  if (value === null) return true
  const type = typeof value
  if (type === "string" || type === "boolean") return true
  if (type === "number") return Number.isFinite(value)
  if (type !== "object" || depth > 32) return false
  const o = value as Record<string, unknown>
  if (typeof o.toJSON === "function") return false
  return Array.isArray(o) ? plainArray(o, depth) : plainObject(o, depth)
}

const plainArray = (o: ReadonlyArray<unknown>, depth: number): boolean => {
  for (let i = 0; i < o.length; i++) if (!plainJson(o[i], depth + 1)) return false
  return true
}

const plainObject = (o: Record<string, unknown>, depth: number): boolean => {
  const proto = Object.getPrototypeOf(o)
  if (proto !== Object.prototype && proto !== null) return false
  for (const key in o) if (!plainJson(o[key], depth + 1)) return false
  return true
}

/**
 * A payload as JSON text, refusing what JSON would silently change (see {@link jsonChange}:
 * undefined, functions, symbols, BigInts, non-finite numbers, cycles, Maps, Sets, Errors,
 * class instances…), naming where, before anything is sent; and anything over `maxBytes`.
 * A plain payload (the common case) is checked by one walk ({@link plainJson}) and stringified.
 */
export const encodePayload = (field: string, payload: unknown, maxBytes: number): Checked<string, InvalidPayload> => {
  if (payload === undefined) {
    return Result.fail(new InvalidPayload({ field, reason: "is undefined; pass null or a JSON value" }))
  }
  let text: string | undefined
  // a throwing getter or toJSON, or a structure too deep for the stack, is reported by throwing
  try {
    if (!plainJson(payload, 0)) {
      const change = jsonChange(payload, field)
      if (change !== undefined) return Result.fail(new InvalidPayload({ field, reason: change }))
    }
    text = JSON.stringify(payload)
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e)
    const reason = /circular/i.test(message) ? "contains a circular reference; JSON cannot represent it" : message
    return Result.fail(new InvalidPayload({ field, reason }))
  }
  if (text === undefined) return Result.fail(new InvalidPayload({ field, reason: "is not JSON-serialisable" }))
  // a UTF-16 code unit is at most 3 bytes of UTF-8: a short text needs no count
  const bytes = text.length * 3 <= maxBytes ? 0 : Buffer.byteLength(text, "utf8")
  if (bytes > maxBytes) {
    return Result.fail(
      new InvalidPayload({
        field,
        reason: `is ${bytes} bytes as JSON; the limit is ${maxBytes} bytes (maxPayloadBytes): store large data elsewhere and enqueue a reference`,
      }),
    )
  }
  return Result.succeed(text)
}

/** {@link encodePayload}, throwing its error. */
export const serializePayload = (field: string, payload: unknown, maxBytes: number): string =>
  orThrow(encodePayload(field, payload, maxBytes))
