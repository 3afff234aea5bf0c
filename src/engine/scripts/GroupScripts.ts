/**
 * The descriptors of the scripts of fair groups (add's `group` option): `group-limits`,
 * `group-pause`, `group-list`. The groups' state is in the ready group of keys.
 */
import { LAYOUT_VERSION, READY_KEYS } from "../model/Keys.ts"
import { newRequestId } from "../model/RequestId.ts"
import { type Argv, defineScript, list } from "./Script.ts"

/** Limits of a group (or the default of every group); a field left out is no limit. */
export interface GroupLimits {
  /** At most this many of the group's jobs active at once. */
  readonly concurrency?: number | undefined
  /** At most `max` of the group's jobs leased per window of `perMs` (Redis clock); both or neither. */
  readonly max?: number | undefined
  /** The rate window in ms, with `max`. */
  readonly perMs?: number | undefined
  /**
   * At most this many of the group's jobs waiting (BullMQ Pro's `maxSize`): an add (delayed or
   * not) that would pass it is refused whole with `GroupFull`, writing nothing. Jobs delayed,
   * retried, released or becoming due are not refused. Default none.
   */
  readonly maxSize?: number | undefined
}

/** One group as `groups()` lists it. */
export interface GroupInfo {
  readonly group: string
  /** Jobs of the group ready to run (delayed ones not counted). */
  readonly waiting: number
  /** Jobs of the group leased now. */
  readonly active: number
  readonly paused: boolean
  /** The group's own limits; undefined when the default applies. */
  readonly limits: GroupLimits | undefined
}

/** A page of groups, in name order. */
export interface GroupPage {
  readonly groups: ReadonlyArray<GroupInfo>
  /** The cursor of the next page; undefined when this page is the last. */
  readonly cursor: string | undefined
  /** The default limits of every group (undefined: none). */
  readonly defaults: GroupLimits | undefined
}

/**
 * Limits as the scripts store them: "<concurrency>|<max>|<perMs>", "" for a field not set, and
 * "|<maxSize>" after them only when it is set (so limits without one read as before).
 */
export const encodeLimits = (l: GroupLimits): string =>
  `${l.concurrency ?? ""}|${l.max ?? ""}|${l.perMs ?? ""}${l.maxSize === undefined ? "" : `|${l.maxSize}`}`

/** {@link encodeLimits} read back; undefined for "" (none). */
export const decodeLimits = (s: string): GroupLimits | undefined => {
  if (s === "") return undefined
  const [c, m, p, z] = s.split("|").map((x) => (x === "" || x === undefined ? undefined : Number(x)))
  return {
    ...(c === undefined ? {} : { concurrency: c }),
    ...(m === undefined ? {} : { max: m }),
    ...(p === undefined ? {} : { perMs: p }),
    ...(z === undefined ? {} : { maxSize: z }),
  }
}

/**
 * `group-limits`: set (`limits`) or clear (null) a group's own limits, or (group "") the
 * default, looking at a page of the held groups (`skip`: 0 first, then what the last page
 * answered): the `skip` of the next page, or -1 when none is left.
 */
export const groupLimits = defineScript({
  name: "group-limits",
  keys: ["meta", ...READY_KEYS],
  argv: ["layout", "group", "limits", "skip"],
  args: ({
    group,
    limits,
    skip = 0,
  }: {
    readonly group: string
    readonly limits: GroupLimits | null
    readonly skip?: number
  }): Argv => [LAYOUT_VERSION, group, limits === null ? "-" : encodeLimits(limits), skip],
  decode: (reply): number => Number(list(reply)[1]),
})

/** `group-pause`: pause or resume a group; true when that changed it. */
export const groupPause = defineScript({
  name: "group-pause",
  keys: ["meta", "receipts", "receiptsAt", ...READY_KEYS],
  argv: ["layout", "group", "op", "requestId"],
  // the request id (default: drawn when the call's ARGV is built, so a re-send carries the same) is the call's receipt
  args: ({
    group,
    pause,
    requestId = newRequestId(),
  }: {
    readonly group: string
    readonly pause: boolean
    readonly requestId?: string
  }): Argv => [LAYOUT_VERSION, group, pause ? "pause" : "resume", requestId],
  decode: (reply): boolean => list(reply)[0] === 1,
})

/** `group-list`: a page of groups after `after` (a cursor, "" from the first). */
export const groupList = defineScript({
  name: "group-list",
  keys: ["meta", ...READY_KEYS],
  argv: ["layout", "after", "count"],
  args: ({ after, count }: { readonly after: string; readonly count: number }): Argv => [LAYOUT_VERSION, after, count],
  decode: (reply): GroupPage => {
    const r = list<string | number>(reply)
    const groups: Array<GroupInfo> = []
    for (let i = 2; i + 4 < r.length; i += 5) {
      groups.push({
        group: String(r[i]),
        waiting: Number(r[i + 1]),
        active: Number(r[i + 2]),
        paused: Number(r[i + 3]) === 1,
        limits: decodeLimits(String(r[i + 4])),
      })
    }
    const next = String(r[0])
    return { groups, cursor: next === "" ? undefined : next, defaults: decodeLimits(String(r[1])) }
  },
})
