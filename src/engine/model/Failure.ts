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

/**
 * A thrown value's name, message and stack, read without letting a throwing getter
 * through: a message that cannot be read is recorded as such.
 */
export const describeError = (error: unknown): { name?: string; message: string; stack?: string } => {
  if (error instanceof Error) {
    const name = stringField(error, "name")
    const message = stringField(error, "message") ?? "(the error's message could not be read: its getter threw)"
    const stack = stringField(error, "stack")?.split("\n").slice(0, 8).join("\n")
    return { ...(name !== undefined ? { name } : {}), message, ...(stack !== undefined ? { stack } : {}) }
  }
  if (typeof error === "string") return { message: error }
  try {
    return { message: JSON.stringify(error) ?? safeString(error) }
  } catch {
    return { message: safeString(error) }
  }
}

/** A handler's error as the job's last error (JSON text), with its reason (default `failed`). */
export const errorJson = (error: unknown, reason: DeadReason = "failed"): string =>
  JSON.stringify({ reason, ...describeError(error) })
