/**
 * Argument checks, run before anything reaches Redis. Each throws a tagged error
 * naming the field, the value and what to do; nothing is written when one fails.
 */
import { InvalidOptions, InvalidPayload } from "./Errors.ts"

/** Documented limits. Every one is enforced with an error, never by silently clipping. */
export const Limits = {
  /** leaseMs bounds: 10 ms .. 24 h. */
  leaseMs: { min: 10, max: 86_400_000 },
  /** timeoutMs bounds (a job's or a worker's default): 1 ms .. 24 h. */
  timeoutMs: { min: 1, max: 86_400_000 },
  /** delayMs bounds: 0 .. 365 days. */
  delayMs: { min: 0, max: 31_536_000_000 },
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
  /** Retained completed jobs: 0 .. 1 000 000. */
  keepCompleted: { min: 0, max: 1_000_000 },
  /** Grace period on close: 0 .. 1 h. */
  shutdownGraceMs: { min: 0, max: 3_600_000 },
  /** Sweep batch: 1 .. 10 000 jobs per script call. */
  sweepLimit: { min: 1, max: 10_000 },
  /** A queue call's deadline: 10 s default, 10 ms .. 1 h. */
  callTimeoutMs: { default: 10_000, min: 10, max: 3_600_000 },
} as const

/** An integer in [min, max], else {@link InvalidOptions}. */
export const integer = (
  field: string,
  value: unknown,
  bounds: { readonly min: number; readonly max: number },
): number => {
  if (typeof value !== "number" || !Number.isFinite(value) || !Number.isInteger(value)) {
    throw new InvalidOptions({
      field,
      value,
      reason: `must be a whole number from ${bounds.min} to ${bounds.max}`,
    })
  }
  if (value < bounds.min || value > bounds.max) {
    throw new InvalidOptions({ field, value, reason: `must be from ${bounds.min} to ${bounds.max}` })
  }
  return value
}

/** Like {@link integer}, with a default for `undefined`. */
export const integerOr = (
  field: string,
  value: unknown,
  fallback: number,
  bounds: { readonly min: number; readonly max: number },
): number => (value === undefined ? fallback : integer(field, value, bounds))

/** Throw unless `value` is a plain object (or undefined). */
export const optionsObject = (field: string, value: unknown): Record<string, unknown> => {
  if (value === undefined) return {}
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidOptions({ field, value, reason: "must be an object" })
  }
  return value as Record<string, unknown>
}

/** Throw for any key of `value` not in `allowed` (catches typos such as `leaseMS`). */
export const knownKeys = (field: string, value: Record<string, unknown>, allowed: ReadonlyArray<string>): void => {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw new InvalidOptions({
        field: `${field}.${key}`,
        value: value[key],
        reason: `unknown option; known options are ${allowed.join(", ")}`,
      })
    }
  }
}

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
  return type === "object" && depth <= 32 && plainContainer(value as Record<string, unknown>, depth + 1)
}

/** {@link plainJson} for an array or a plain object: every element or value is plain JSON. */
const plainContainer = (o: Record<string, unknown>, depth: number): boolean => {
  if (typeof o.toJSON === "function") return false
  if (Array.isArray(o)) {
    for (let i = 0; i < o.length; i++) if (!plainJson(o[i], depth)) return false
    return true
  }
  const proto = Object.getPrototypeOf(o)
  if (proto !== Object.prototype && proto !== null) return false
  for (const key in o) if (!plainJson(o[key], depth)) return false
  return true
}

/** A `JSON.stringify` replacer that throws, naming the key, on what JSON would drop or change. */
const refuseLossy = (key: string, value: unknown): unknown => {
  const type = typeof value
  if (type === "object" || type === "string" || type === "boolean") return value
  const where = () => (key === "" ? "" : ` at key ${JSON.stringify(key)}`)
  if (type === "function") throw new Error(`contains a function${where()}; functions cannot be stored`)
  if (type === "symbol") throw new Error(`contains a symbol${where()}; symbols cannot be stored`)
  if (type === "bigint") throw new Error(`contains a BigInt${where()}; convert it to a string or number`)
  if (type === "number" && !Number.isFinite(value)) {
    throw new Error(`contains ${value}${where()}; JSON would turn it into null`)
  }
  return value
}

/**
 * Serialise a payload to JSON, refusing what JSON would silently change: undefined,
 * functions, symbols, BigInts, non-finite numbers, cycles; and anything over `maxBytes`.
 */
export const serializePayload = (field: string, payload: unknown, maxBytes: number): string => {
  if (payload === undefined) {
    throw new InvalidPayload({ field, reason: "is undefined; pass null or a JSON value" })
  }
  let text: string | undefined
  try {
    text = plainJson(payload, 0) ? JSON.stringify(payload) : JSON.stringify(payload, refuseLossy)
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e)
    const reason = /circular/i.test(message) ? "contains a circular reference; JSON cannot represent it" : message
    throw new InvalidPayload({ field, reason })
  }
  if (text === undefined) throw new InvalidPayload({ field, reason: "is not JSON-serialisable" })
  // a UTF-16 code unit is at most 3 bytes of UTF-8: a short text needs no count
  const bytes = text.length * 3 <= maxBytes ? 0 : Buffer.byteLength(text, "utf8")
  if (bytes > maxBytes) {
    throw new InvalidPayload({
      field,
      reason: `is ${bytes} bytes as JSON; the limit is ${maxBytes} bytes (maxPayloadBytes): store large data elsewhere and enqueue a reference`,
    })
  }
  return text
}
