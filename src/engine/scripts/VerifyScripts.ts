/**
 * The descriptors of the read-only page scripts of an incremental verify (see
 * engine/calls/Verify.ts): one page of wait, of a sorted set, of a per-job hash, and the
 * final recheck of orphan candidates.
 */
import { LAYOUT_VERSION, READY_KEYS } from "../model/Keys.ts"
import { type Argv, defineScript, list } from "./Script.ts"

/** The sorted sets verify pages through, in the order `verify-set` numbers them (1 = active). */
export const VERIFY_SETS = ["active", "delayed", "dead", "done"] as const

/** The per-job hashes verify pages through. */
export const VERIFY_HASHES = [
  "data",
  "lease",
  "max",
  "fails",
  "lost",
  "err",
  "result",
  "holder",
  "progress",
  "timeout",
  "priority",
  "backoff",
  "errors",
  "logs",
] as const

/** One entry of a page of wait. */
export interface WaitEntry {
  readonly id: string
  /** Its payload is inline in the entry. */
  readonly inline: boolean
  /** The data hash holds a payload for it. */
  readonly stored: boolean
  /** The first of active, delayed, dead, done, cancelled that also holds the id, or "". */
  readonly alsoIn: string
}

/** `verify-wait`: a page of wait, from its right end (the pop end); `more` when entries remain. */
export const verifyWait = defineScript({
  name: "verify-wait",
  keys: ["active", "dead", "done", "data", "meta", "cancelled", ...READY_KEYS],
  argv: ["layout", "from", "size"],
  args: ({ from, size }: { readonly from: number; readonly size: number }): Argv => [LAYOUT_VERSION, from, size],
  decode: (reply) => {
    const r = list(reply)
    const entries: WaitEntry[] = []
    for (let i = 1; i + 3 < r.length; i += 4) {
      entries.push({
        id: String(r[i]),
        inline: Number(r[i + 1]) === 1,
        stored: Number(r[i + 2]) === 1,
        alsoIn: String(r[i + 3]),
      })
    }
    return { more: Number(r[0]) === 1, entries }
  },
})

/** A page of a ZSCAN or HSCAN: the cursor to go on from ("0": done) and violation lines. */
export interface ScanPage {
  readonly cursor: string
  readonly lines: ReadonlyArray<string>
}

/** `verify-set`: a ZSCAN page of one sorted set, its members counted and checked. */
export const verifySet = defineScript({
  name: "verify-set",
  keys: ["active", "dead", "done", "data", "holder", "meta", ...READY_KEYS],
  argv: ["layout", "set", "cursor", "count"],
  args: (i: { readonly set: (typeof VERIFY_SETS)[number]; readonly cursor: string; readonly count: number }): Argv => [
    LAYOUT_VERSION,
    VERIFY_SETS.indexOf(i.set) + 1,
    i.cursor,
    i.count,
  ],
  decode: (
    reply,
  ): ScanPage & { readonly members: number; readonly duplicates: number; readonly groups: ReadonlyArray<string> } => {
    const r = list(reply)
    return {
      cursor: String(r[0]),
      members: Number(r[1]),
      duplicates: Number(r[2]),
      groups: list(r[3]).map(String),
      lines: r.slice(4).map(String),
    }
  },
})

/** `verify-hash`: an HSCAN page of one per-job hash; `candidates` are payloads of jobs in no sorted set. */
export const verifyHash = defineScript({
  name: "verify-hash",
  keys: [
    "active",
    "dead",
    "done",
    "data",
    "lease",
    "max",
    "fails",
    "lost",
    "err",
    "result",
    "meta",
    "holder",
    "progress",
    "timeout",
    "cancelled",
    "backoff",
    "errors",
    "logs",
    ...READY_KEYS,
  ],
  argv: ["layout", "hash", "cursor", "count"],
  args: (i: {
    readonly hash: (typeof VERIFY_HASHES)[number]
    readonly cursor: string
    readonly count: number
  }): Argv => [LAYOUT_VERSION, i.hash, i.cursor, i.count],
  decode: (reply): ScanPage & { readonly candidates: ReadonlyArray<string> } => {
    const r = list<unknown>(reply)
    return { cursor: String(r[0]), candidates: list(r[1]).map(String), lines: r.slice(2).map(String) }
  },
})

/** `verify-rate`: the rate window's stored count and the sum of its entries (-1: not set, or a window too long to read). */
export const verifyRate = defineScript({
  name: "verify-rate",
  keys: ["meta", "rate"],
  argv: ["layout"],
  args: (_: undefined): Argv => [LAYOUT_VERSION],
  decode: (reply): { readonly stored: number; readonly counted: number; readonly entries: number } => {
    const r = list(reply).map(Number)
    return { stored: r[0]!, counted: r[1]!, entries: r[2]! }
  },
})

/** `verify-orphans`: of these ids, those still with a payload and in no sorted set. */
export const verifyOrphans = defineScript({
  name: "verify-orphans",
  keys: ["active", "dead", "done", "data", "meta", "cancelled", ...READY_KEYS],
  argv: ["layout"],
  rest: ["id"],
  args: (ids: ReadonlyArray<string>): Argv => [LAYOUT_VERSION, ...ids],
  decode: (reply): ReadonlyArray<string> => list(reply).slice(1).map(String),
})

/** `verify-groups`: an HSCAN page of the groups' active counts. */
export const verifyGroups = defineScript({
  name: "verify-groups",
  keys: ["meta", ...READY_KEYS],
  argv: ["layout", "cursor", "count"],
  args: (i: { readonly cursor: string; readonly count: number }): Argv => [LAYOUT_VERSION, i.cursor, i.count],
  decode: (reply): { readonly cursor: string; readonly counts: ReadonlyArray<readonly [string, number]> } => {
    const r = list(reply)
    const counts: Array<readonly [string, number]> = []
    for (let i = 1; i + 1 < r.length; i += 2) counts.push([String(r[i]), Number(r[i + 1])])
    return { cursor: String(r[0]), counts }
  },
})
