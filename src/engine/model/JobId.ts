/**
 * Job ids: the ULIDs leaseq makes, and the custom ids a user may give (`options.id`).
 */
import * as Result from "effect/Result"
import { InvalidOptions } from "./Errors.ts"
import type { Checked } from "./Validate.ts"

/**
 * The characters of a custom job id: letters, digits, `-`, `_`, `.`, `:`. They exclude
 * `|` and `,`, the separators of reserve's request records and of the events' id lists.
 */
const JOB_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** A custom job id (`options.id`) validated, or undefined when none is given. */
export const checkCustomId = (field: string, value: unknown): Checked<string | undefined> =>
  value === undefined || (typeof value === "string" && JOB_ID.test(value))
    ? Result.succeed(value)
    : Result.fail(
        new InvalidOptions({
          field: `${field}.id`,
          value,
          reason:
            "must be 1–128 characters from letters, digits, '-', '_', '.' and ':' (or left out for a generated id)",
        }),
      )

/** Random 32-bit words from a pooled crypto buffer: one getRandomValues call per 1024 draws. */
const pool = new Uint32Array(1024)
let drawn = pool.length
const randomWord = (): number => {
  if (drawn >= pool.length) {
    crypto.getRandomValues(pool)
    drawn = 0
  }
  return pool[drawn++]!
}

/** Crockford's base32, the ULID alphabet. */
const B32 = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
/** Every pair of base32 characters, by its value (0 – 1023). */
const PAIRS = Array.from({ length: 1024 }, (_, v) => B32[v >> 5]! + B32[v & 31]!)
/** `n` (an integer below 32^digits, `digits` even) as `digits` base32 characters, most significant first. */
const base32 = (n: number, digits: number): string => {
  let out = ""
  for (let i = 0; i < digits; i += 2) {
    out = PAIRS[n % 1024]! + out
    n = Math.floor(n / 1024)
  }
  return out
}
const TWO_40 = 2 ** 40

/**
 * Monotonic ULID state: the last millisecond, its 10 time characters, and the 80 random
 * bits as two 40-bit halves (each 8 characters). Within one millisecond (or when the
 * clock goes back) the next id is the last one + 1, as ULID's monotonic mode specifies,
 * so ids made by one process sort in the order they were made.
 */
let lastMs = -1
let timeChars = ""
let high = 0
let highChars = ""
let low = 0

/** A new job id: a ULID (sortable by creation time, unique across producers). */
export const newJobId = (): string => {
  const now = Date.now()
  if (now > lastMs) {
    lastMs = now
    timeChars = base32(now, 10)
    high = randomWord() * 256 + (randomWord() & 0xff)
    highChars = base32(high, 8)
    low = randomWord() * 256 + (randomWord() & 0xff)
  } else if (++low === TWO_40) {
    // 2^40 ids in one millisecond: carry into the high half (it cannot wrap in practice)
    low = 0
    high = (high + 1) % TWO_40
    highChars = base32(high, 8)
  }
  return timeChars + highChars + base32(low, 8)
}
