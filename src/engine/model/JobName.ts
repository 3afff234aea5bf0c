/**
 * A job's name (add's `name` option): the kind of job, for a queue that carries many. It
 * travels in front of the stored payload (model/Carrier.ts), so it needs no key or field.
 */
import * as Result from "effect/Result"
import { InvalidOptions } from "./Errors.ts"
import { isWellFormed } from "./GroupName.ts"
import type { Checked } from "./Validate.ts"

/** The longest job name, in characters. */
export const MAX_JOB_NAME_LENGTH = 128

/** A job's `name` validated: undefined, or 1–128 characters without control characters. */
export const checkJobName = (field: string, value: unknown): Checked<string | undefined> => {
  if (value === undefined) return Result.succeed(undefined)
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_JOB_NAME_LENGTH) {
    return Result.fail(
      new InvalidOptions({
        field,
        value,
        reason: `must be a string of 1–${MAX_JOB_NAME_LENGTH} characters (the kind of job), or left out`,
      }),
    )
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value) || !isWellFormed(value)) {
    return Result.fail(
      new InvalidOptions({ field, value, reason: "must not hold control characters or lone surrogates" }),
    )
  }
  return Result.succeed(value)
}
