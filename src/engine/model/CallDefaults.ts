/**
 * The defaults, bounds and choices of the operator calls' options (sweep, verify, groups,
 * listing and clean), apart from the calls: this module imports nothing, so the CLI's
 * flags can state them without loading the engine.
 */

/** Default jobs per sweep call. */
export const DEFAULT_SWEEP_LIMIT = 500

/** Default `pageSize` of verify: entries (or set members, hash fields) checked per script call. */
export const DEFAULT_VERIFY_PAGE = 100

/** `pageSize` bounds: 1 .. 10 000. */
export const VERIFY_PAGE_LIMITS = { min: 1, max: 10_000 } as const

/** Default `maxLines` of verify. */
export const DEFAULT_VERIFY_LINES = 100

/** Most groups one `groups()` page lists (default 100). */
export const MAX_GROUP_PAGE = 1000

/** The states a listing reads. */
export const LIST_STATES = [
  "waiting",
  "delayed",
  "active",
  "completed",
  "cancelled",
  "dead",
  "waiting-children",
] as const

/** The finished states `clean` deletes from. */
export const CLEAN_STATES = ["completed", "cancelled", "dead"] as const
