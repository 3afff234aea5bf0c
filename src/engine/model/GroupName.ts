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

/**
 * Why a string holding a lone surrogate is refused where it would become a Redis key, field
 * or member: Redis stores text as UTF-8, where every lone surrogate becomes U+FFFD, so
 * `"a\uD800"` and `"a\uDC00"` would be one name (one group's limits and pause, one dedupe).
 */
export const NOT_WELL_FORMED =
  "is not well-formed UTF-16 (it holds a lone surrogate, shown as \\udXXX), and Redis would store it as U+FFFD, " +
  "the same as other such strings: pass valid Unicode (for binary data, its hex or base64)"

/**
 * `String.prototype.isWellFormed()` (ES2024, Node ≥ 20; the compiler's lib is ES2023): no
 * lone surrogate in `text`.
 */
export const isWellFormed = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed()

/** `value` when it is a group name, else the {@link InvalidOptions} naming `field`. */
export const checkGroupName = (field: string, value: unknown): Checked<string> =>
  typeof value === "string" && value.length > 0 && value.length <= MAX_GROUP_LENGTH && !value.includes("\u0000")
    ? isWellFormed(value)
      ? Result.succeed(value)
      : Result.fail(new InvalidOptions({ field, value, reason: NOT_WELL_FORMED }))
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
