/**
 * Dead letters grouped by what went wrong: the reason and the error's message with the
 * parts that differ per job masked out (e-mail addresses, UUIDs, ULIDs, hex, numbers), so
 * five "mailbox full: a@x.org" … "mailbox full: e@x.org" errors are one group of five with
 * their ids, as Sentry and Sidekiq group them, not five groups of one.
 */

/** The most job ids a group lists (its count is always exact over the dead jobs read). */
export const GROUP_IDS = 10

/** The masks, in the order they apply: the most specific first, so a UUID is not read as hex and numbers. */
const MASKS: ReadonlyArray<readonly [RegExp, string]> = [
  [/[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g, "<email>"],
  [/\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/g, "<uuid>"],
  [/\b[0-9A-HJKMNP-TV-Z]{26}\b/g, "<id>"],
  [/\b0x[0-9a-fA-F]+\b/g, "<hex>"],
  // a run of 8+ hex digits with a digit and a letter in it (a hash, a trace id), not a word
  [/\b(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b/g, "<hex>"],
  [/\b\d+(?:\.\d+)?\b/g, "<n>"],
]

/**
 * `message` with what varies per job masked: `"no user 42 at a@b.io"` → `"no user <n> at <email>"`.
 * Masked text is what groups dead jobs; the jobs keep their own message.
 */
export const maskError = (message: string): string => {
  let out = message
  for (const [pattern, mask] of MASKS) out = out.replace(pattern, mask)
  return out
}

/** One group of dead jobs: their reason, the masked message, how many, and the first {@link GROUP_IDS} ids. */
export interface DeadGroup {
  readonly reason: string
  /** The error's message with ids, numbers, addresses, UUIDs and hex masked ({@link maskError}). */
  readonly message: string
  readonly count: number
  /** The first {@link GROUP_IDS} ids of the group, in the order the jobs died. */
  readonly ids: ReadonlyArray<string>
}

/** Group `jobs` by reason and masked message, the largest group first (ties: the first to die first). */
export const groupDead = (
  jobs: ReadonlyArray<{ readonly id: string; readonly reason: string; readonly message: string }>,
): ReadonlyArray<DeadGroup> => {
  const groups = new Map<string, { reason: string; message: string; count: number; ids: string[] }>()
  for (const j of jobs) {
    const message = maskError(j.message)
    const key = `${j.reason}\u0000${message}`
    const g = groups.get(key) ?? { reason: j.reason, message, count: 0, ids: [] }
    g.count++
    if (g.ids.length < GROUP_IDS) g.ids.push(j.id)
    groups.set(key, g)
  }
  return [...groups.values()].sort((a, b) => b.count - a.count)
}
