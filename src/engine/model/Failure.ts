/**
 * How a job's failure is recorded: the one list of reasons a job dies for (the same in
 * the worker's `dead` event, the events stream and `getJob`'s `error.reason`), and a
 * handler's error as the JSON kept as the job's last error, read so that no getter of
 * the error can throw into the worker.
 */

/**
 * Why a job went to dead, everywhere it is told: `failed` (a handler failure used up its
 * attempts, or the backoff said not to retry), `timeout` (its last attempt ran past its
 * timeout), `invalid-payload` (its payload did not decode), `lease-expired` (its last
 * lease expired: the worker died or stalled), `missing-data` (its id waited without a payload).
 */
export const DEAD_REASONS = ["failed", "timeout", "invalid-payload", "lease-expired", "missing-data"] as const

/** One of {@link DEAD_REASONS}. */
export type DeadReason = (typeof DEAD_REASONS)[number]

/** A string property of a thrown value, or undefined when it is not a string or reading it throws. */
const stringField = (error: object, key: "name" | "message" | "stack"): string | undefined => {
  try {
    const v = (error as Record<string, unknown>)[key]
    return typeof v === "string" ? v : undefined
  } catch {
    return undefined
  }
}

/** `String(value)`, or a placeholder when that throws (a throwing `toString` or getter). */
const safeString = (value: unknown): string => {
  try {
    return String(value)
  } catch {
    return "(a value that cannot be turned into text)"
  }
}

/** The longest message, stack and fields (JSON) an error is recorded with, in characters; a longer one is cut and ends with "…". */
export const ERROR_FIELD_CHARS = 2048

/** `text` cut to {@link ERROR_FIELD_CHARS} (ending "…" when cut). */
const bounded = (text: string): string =>
  text.length <= ERROR_FIELD_CHARS ? text : `${text.slice(0, ERROR_FIELD_CHARS - 1)}…`

/** Keys of an error that are recorded as its name, message, stack or tag, not among its fields. */
const OWN_KEYS = new Set(["name", "message", "stack", "_tag", "cause"])

/**
 * An error's own enumerable fields other than name, message, stack, `_tag` and cause (an
 * Effect `Data.TaggedError`'s data, a custom error's `code`), as JSON-safe values: undefined
 * when it has none, or its fields cannot be read or turned into JSON; `{ truncated: <json
 * length> }` when their JSON is longer than {@link ERROR_FIELD_CHARS}.
 */
const fieldsOf = (error: object): Record<string, unknown> | undefined => {
  try {
    const fields: Record<string, unknown> = {}
    let any = false
    for (const key of Object.keys(error)) {
      if (OWN_KEYS.has(key)) continue
      fields[key] = (error as Record<string, unknown>)[key]
      any = true
    }
    if (!any) return undefined
    const json = JSON.stringify(fields)
    if (json === undefined) return undefined
    return json.length <= ERROR_FIELD_CHARS ? (JSON.parse(json) as Record<string, unknown>) : { truncated: json.length }
  } catch {
    return undefined
  }
}

/** A thrown value's `_tag` (an Effect tagged error's), or undefined. */
const tagOf = (error: object): string | undefined => {
  try {
    const tag = (error as { _tag?: unknown })._tag
    return typeof tag === "string" ? bounded(tag) : undefined
  } catch {
    return undefined
  }
}

/** An error as recorded: its name, message and stack, and for a tagged error its tag and fields. */
export interface DescribedError {
  name?: string
  message: string
  stack?: string
  /** An Effect tagged error's `_tag`. */
  tag?: string
  /** The error's own fields (a tagged error's data), JSON-safe and bounded (see {@link ERROR_FIELD_CHARS}). */
  fields?: Record<string, unknown>
}

/**
 * A thrown value's name, message and stack, read without letting a throwing getter
 * through: a message that cannot be read is recorded as such. An error object's `_tag`
 * (an Effect `Data.TaggedError`) and own fields are kept too, each bounded: message, stack
 * (8 lines) and fields' JSON at most {@link ERROR_FIELD_CHARS} characters.
 */
export const describeError = (error: unknown): DescribedError => {
  if (error instanceof Error) return describeErrorObject(error)
  if (typeof error === "string") return { message: bounded(error) }
  const tagged = typeof error === "object" && error !== null ? describeTagged(error) : undefined
  if (tagged !== undefined) return tagged
  try {
    return { message: bounded(JSON.stringify(error) ?? safeString(error)) }
  } catch {
    return { message: bounded(safeString(error)) }
  }
}

/** An Error's name, message, stack, tag and fields (see {@link describeError}). */
const describeErrorObject = (error: Error): DescribedError => {
  const name = stringField(error, "name")
  const message = stringField(error, "message") ?? "(the error's message could not be read: its getter threw)"
  const stack = stringField(error, "stack")?.split("\n").slice(0, 8).join("\n")
  const tag = tagOf(error)
  const fields = fieldsOf(error)
  return {
    ...(name !== undefined ? { name } : {}),
    message: bounded(message),
    ...(stack !== undefined ? { stack: bounded(stack) } : {}),
    ...(tag !== undefined ? { tag } : {}),
    ...(fields !== undefined ? { fields } : {}),
  }
}

/** A tagged value that is not an Error (a plain `{ _tag, … }` failure): its tag and fields, else undefined. */
const describeTagged = (error: object): DescribedError | undefined => {
  const tag = tagOf(error)
  if (tag === undefined) return undefined
  const fields = fieldsOf(error)
  return { message: bounded(stringField(error, "message") ?? ""), tag, ...(fields !== undefined ? { fields } : {}) }
}

/** A handler's error as the job's last error (JSON text), with its reason (default `failed`). */
export const errorJson = (error: unknown, reason: DeadReason = "failed"): string =>
  JSON.stringify({ reason, ...describeError(error) })
