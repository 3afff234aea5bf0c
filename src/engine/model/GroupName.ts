/**
 * Group names (add's `group` option, `setGroupLimits`, `pauseGroup`): 1 to
 * {@link MAX_GROUP_LENGTH} characters without NUL (the scripts separate a group from the
 * rest of a member with "\0").
 */
import * as Result from "effect/Result"
import { InvalidOptions } from "./Errors.ts"
import type { Checked } from "./Validate.ts"

/** Longest group name, in characters. */
export const MAX_GROUP_LENGTH = 128

/** `value` when it is a group name, else the {@link InvalidOptions} naming `field`. */
export const checkGroupName = (field: string, value: unknown): Checked<string> =>
  typeof value === "string" && value.length > 0 && value.length <= MAX_GROUP_LENGTH && !value.includes("\u0000")
    ? Result.succeed(value)
    : Result.fail(
        new InvalidOptions({
          field,
          value,
          reason: `must be a group name: a string of 1 to ${MAX_GROUP_LENGTH} characters without NUL`,
        }),
      )

/** A job's group checked: "" for none (undefined), else {@link checkGroupName}. */
export const checkJobGroup = (field: string, value: unknown): Checked<string> =>
  value === undefined ? Result.succeed("") : checkGroupName(field, value)
