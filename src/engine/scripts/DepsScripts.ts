/**
 * The descriptors of the dependencies' scripts (flows: a parent waits for its children;
 * docs/flows.md): `deps-children`, `deps-seal`, `deps-link`, `deps-apply`, `deps-outbox`, `deps-page`, `deps-parents`.
 * Not flow control (rate limit, concurrency cap: `set-limits`).
 */
import type { ChildFailurePolicy } from "../model/Dependencies.ts"
import { LAYOUT_VERSION, READY_KEYS } from "../model/Keys.ts"
import { type Argv, defineScript, list } from "./Script.ts"

export type { ChildFailurePolicy } from "../model/Dependencies.ts"

/** One child as a parent registers it: its queue ("" = the parent's), id and policy. */
export interface ChildRef {
  readonly queue: string
  readonly id: string
  readonly policy: ChildFailurePolicy
}

/** `deps-children`: the children the parent now waits for, or why it takes none. */
export type ChildrenAnswer =
  | { readonly status: "ok"; readonly pending: number }
  | { readonly status: "NOT_WAITING" | "SEALED" }

/** `deps-children`: register children of a parent waiting for them, and seal it. */
export const depsChildren = defineScript({
  name: "deps-children",
  keys: ["meta", "events", ...READY_KEYS],
  argv: ["layout", "parent", "seal"],
  rest: ["queue", "id", "policy"],
  args: (i: { readonly parent: string; readonly seal: boolean; readonly children: ReadonlyArray<ChildRef> }): Argv => {
    const args: Array<string | number> = [LAYOUT_VERSION, i.parent, i.seal ? 1 : 0]
    for (const c of i.children) args.push(c.queue, c.id, c.policy)
    return args
  },
  decode: (reply): ChildrenAnswer => {
    const r = list(reply)
    return r[0] === "ok" ? { status: "ok", pending: Number(r[1]) } : { status: r[0] as "NOT_WAITING" | "SEALED" }
  },
})

/** `deps-seal`: per parent, sealed (ok) or no longer building (expired: the sweep failed it, its flow incomplete). */
export type SealStatus = "ok" | "expired"

/** `deps-seal`: the last call of a multi-call addFlow seals its building parents of one queue (or keeps them open). */
export const depsSeal = defineScript({
  name: "deps-seal",
  keys: ["meta", "events", ...READY_KEYS],
  argv: ["layout"],
  rest: ["id", "keep"],
  args: (parents: ReadonlyArray<{ readonly id: string; readonly keepOpen: boolean }>): Argv => {
    const args: Array<string | number> = [LAYOUT_VERSION]
    for (const p of parents) args.push(p.id, p.keepOpen ? 1 : 0)
    return args
  },
  decode: (reply): ReadonlyArray<SealStatus> => list<SealStatus>(reply),
})

/** Where a job `deps-link` was asked about stands: linked (not finished), finished, or missing. */
export type LinkState = "linked" | "completed" | "dead" | "cancelled" | "missing"

/** `deps-link`: jobs that exist record a parent; each one's state. */
export const depsLink = defineScript({
  name: "deps-link",
  keys: ["meta", "data", "active", "dead", "done", "cancelled", "lease", "holder", "result", ...READY_KEYS],
  argv: ["layout", "parent"],
  rest: ["id"],
  args: (i: { readonly parentQueue: string; readonly parent: string; readonly ids: ReadonlyArray<string> }): Argv => [
    LAYOUT_VERSION,
    `${i.parentQueue}|${i.parent}`,
    ...i.ids,
  ],
  decode: (reply): ReadonlyArray<{ readonly state: LinkState; readonly result: string }> => {
    const r = list<string>(reply)
    const out: Array<{ readonly state: LinkState; readonly result: string }> = []
    for (let i = 0; i < r.length; i += 2) out.push({ state: r[i] as LinkState, result: String(r[i + 1]) })
    return out
  },
})

/** A child's end as a parent's queue applies it. */
export interface Note {
  readonly parent: string
  /** The child's queue, "" for the parent's own. */
  readonly queue: string
  readonly child: string
  /**
   * "parent-cancelled" turns the note round (a cancelled parent's cascade): `parent` is a job
   * of the applying queue to cancel, `queue` and `child` the parent cancelled.
   */
  readonly outcome: ChildEnd | "parent-cancelled"
  /** A completed child's result as its note carried it (JSON text, "#<bytes>" past 64 KiB), kept on the edge. */
  readonly result?: string | undefined
}

/** An outbox note's fields, as its child's script wrote them (lua/include/deps.lua, deps_ended). */
export interface RawNote {
  /** The parent's queue, "" for the child's own. */
  readonly parentQueue: string
  readonly parent: string
  readonly child: string
  readonly outcome: Note["outcome"]
  /** A completed child's result ("#<bytes>" past 64 KiB); undefined when the note carries none. */
  readonly result: string | undefined
}

/**
 * An outbox note ("<parent queue>|<parent>|<child>|<outcome>", a completed child's with
 * "|<result>" after) read into its fields: the first four `|` split it (ids and queue names
 * hold none; a result may).
 */
export const parseNote = (raw: string): RawNote => {
  const at: number[] = []
  for (let i = raw.indexOf("|"); i !== -1 && at.length < 4; i = raw.indexOf("|", i + 1)) at.push(i)
  return {
    parentQueue: raw.slice(0, at[0]),
    parent: raw.slice(at[0]! + 1, at[1]),
    child: raw.slice(at[1]! + 1, at[2]),
    outcome: raw.slice(at[2]! + 1, at[3]) as Note["outcome"],
    result: at[3] === undefined ? undefined : raw.slice(at[3] + 1),
  }
}

/** How a child ended, as its parent counts it. */
export type ChildEnd = "completed" | "dead" | "cancelled" | "removed"

/** What applying a note did (see lua/include/deps.lua, deps_apply). */
export type NoteStatus = "counted" | "again" | "unknown" | "ended" | "waiting" | "failed" | "cancelling"

/** `deps-apply`: apply notes to parents of this queue, each once. */
export const depsApply = defineScript({
  name: "deps-apply",
  keys: ["meta", "events", "dead", "err", "dkey", "dedupe", "dedupeid", ...READY_KEYS],
  argv: ["layout"],
  rest: ["parent", "queue", "child", "outcome", "result"],
  args: (notes: ReadonlyArray<Note>): Argv => {
    const args: Array<string | number> = [LAYOUT_VERSION]
    for (const n of notes) args.push(n.parent, n.queue, n.child, n.outcome, n.result ?? "")
    return args
  },
  decode: (reply): ReadonlyArray<NoteStatus> => list<NoteStatus>(reply),
})

/** `deps-outbox`: remove the notes applied, read the next ones. */
export const depsOutbox = defineScript({
  name: "deps-outbox",
  keys: ["meta", ...READY_KEYS],
  argv: ["layout", "limit"],
  rest: ["note"],
  args: (i: { readonly limit: number; readonly applied: ReadonlyArray<string> }): Argv => [
    LAYOUT_VERSION,
    i.limit,
    ...i.applied,
  ],
  decode: (reply): { readonly removed: number; readonly more: boolean; readonly notes: ReadonlyArray<string> } => {
    const r = list(reply)
    return { removed: Number(r[0]), more: Number(r[1]) === 1, notes: r.slice(2).map(String) }
  },
})

/** `deps-parents`: a page of the jobs with a parent in another queue (obliterate tells those parents first). */
export const depsParents = defineScript({
  name: "deps-parents",
  keys: ["meta", "active", ...READY_KEYS],
  argv: ["layout", "cursor", "count"],
  args: (i: { readonly cursor: string; readonly count: number }): Argv => [LAYOUT_VERSION, i.cursor, i.count],
  decode: (
    reply,
  ): {
    readonly cursor: string
    readonly active: number
    readonly links: ReadonlyArray<{ readonly queue: string; readonly parent: string; readonly child: string }>
  } => {
    const r = list(reply)
    const links = r.slice(2).map((raw) => {
      const [queue, parent, child] = String(raw).split("|") as [string, string, string]
      return { queue, parent, child }
    })
    return { cursor: String(r[0]), active: Number(r[1]), links }
  },
})

/**
 * `deps-verify`: a page of the parents waiting for children checked against their children,
 * or (mode "edges") a page of all children edges checked for a parent that is gone (read-only).
 */
export const depsVerify = defineScript({
  name: "deps-verify",
  keys: ["meta", "data", ...READY_KEYS],
  argv: ["layout", "cursor", "count", "mode"],
  args: (i: {
    readonly cursor: string
    readonly count: number
    /** Default "waiting". */
    readonly mode?: "waiting" | "edges" | undefined
  }): Argv => [LAYOUT_VERSION, i.cursor, i.count, i.mode ?? "waiting"],
  decode: (reply): { readonly cursor: string; readonly lines: ReadonlyArray<string> } => {
    const r = list(reply)
    return { cursor: String(r[0]), lines: r.slice(1).map(String) }
  },
})

/** One child of a parent, as a page of `deps-page` answers it. */
export interface ChildEntry {
  /** The child's queue, "" for the parent's own. */
  readonly queue: string
  readonly id: string
  readonly policy: ChildFailurePolicy
  /** The outcome that counted, or undefined while pending. */
  readonly outcome: ChildEnd | undefined
  /** The result (JSON text) of a retained child of the parent's queue, "" for none, "#<bytes>" when over 64 KiB. */
  readonly result: string
}

/** A page of a parent's children. */
export interface ChildrenPage {
  readonly cursor: string
  readonly pending: number
  readonly open: boolean
  readonly waiting: boolean
  readonly children: ReadonlyArray<ChildEntry>
}

/** `deps-page`: a page of a parent's children. */
export const depsPage = defineScript({
  name: "deps-page",
  keys: ["meta", "result", ...READY_KEYS],
  argv: ["layout", "parent", "after", "count"],
  args: (i: { readonly parent: string; readonly after: string; readonly count: number }): Argv => [
    LAYOUT_VERSION,
    i.parent,
    i.after,
    i.count,
  ],
  decode: (reply): ChildrenPage => {
    const r = list(reply)
    const children: ChildEntry[] = []
    for (let i = 4; i + 3 < r.length; i += 4) {
      const [policy, outcome] = String(r[i + 2]).split("|")
      children.push({
        queue: String(r[i]),
        id: String(r[i + 1]),
        policy: policy as ChildFailurePolicy,
        outcome: outcome as ChildEnd | undefined,
        result: String(r[i + 3]),
      })
    }
    return { cursor: String(r[0]), pending: Number(r[1]), open: r[2] === 1, waiting: r[3] === 1, children }
  },
})
