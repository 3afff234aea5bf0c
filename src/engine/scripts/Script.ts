/**
 * What a Lua script of `lua/` is to the TypeScript side: one typed descriptor per
 * script, the single source of its KEYS order (by key name), its ARGV and the decoder
 * of its reply. test/scripts/script-descriptors.test.ts checks each descriptor against its
 * script's header, so the two cannot drift apart.
 *
 * A script is read once at start-up with its SHA1 and called by EVALSHA (see
 * redis/Client.ts for the NOSCRIPT reload). A line `--!include <name>` is replaced by
 * `lua/include/<name>.lua` (shared Lua), less the include functions the script never
 * calls; the SHA1 is of the expanded text, which is what Redis runs.
 */
import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import type { Script } from "../../redis/Script.ts"
import type { KeyName, QueueKeys } from "../model/Keys.ts"

export type { Script } from "../../redis/Script.ts"

/** The ARGV of one call: strings and numbers, in the order the script's header names them. */
export type Argv = ReadonlyArray<string | number>

/**
 * One Lua script, typed: `In` is what a call needs, `Out` what its reply means.
 * The script's header (`KEYS[i] <name> …`, `ARGV[i] <name> …`, `ARGV[i..] <names> …`)
 * lists the same names in the same order.
 */
export interface ScriptDef<In, Out> extends Script {
  /** The keys the script takes, by name, in KEYS order: the one place this order is written. */
  readonly keys: ReadonlyArray<KeyName>
  /**
   * The keys it may take from a second queue (its `peer`), by name, after {@link keys}: sent
   * only when the call names a peer (complete's fan-in). Absent: none.
   */
  readonly peer?: ReadonlyArray<KeyName>
  /** The names of its fixed ARGV entries, in order (`layout` first when it checks the layout). */
  readonly argv: ReadonlyArray<string>
  /** The fields of the group repeated after the fixed entries (`id`, `token`), or none. */
  readonly rest: ReadonlyArray<string>
  /** The ARGV of one call, in the order of {@link argv} then groups of {@link rest}. */
  readonly args: (input: In) => Argv
  /** The reply as a typed value (refusals such as LAYOUT_MISMATCH are handled before this). */
  readonly decode: (reply: unknown) => Out
}

const dir = new URL("../../../lua/", import.meta.url)

/** A line of an expanded script, and whether it came from `lua/include/`. */
export interface Line {
  readonly text: string
  readonly included: boolean
}

/**
 * A line `--!include <name>` is replaced by `lua/include/<name>.lua`, itself expanded (an
 * include names the includes it needs: active includes ready, ready includes groups), the
 * first time a script reaches it; a later line for the same include is dropped. So each
 * include is in a script once, after those it includes, whatever order the script names them in.
 * A `--!include` line of another form, or one naming no file of `lua/include/`, is an error
 * naming the line and the file it is in (`from`): never a comment Redis would run past.
 */
const expand = (source: string, from: string, included = false, seen = new Set<string>()): ReadonlyArray<Line> =>
  source.split("\n").flatMap((text): ReadonlyArray<Line> => {
    if (!text.startsWith("--!include")) return [{ text, included }]
    const m = /^--!include ([a-z-]+)$/.exec(text)
    if (!m) throw new Error(`${from}: "${text}" is not an include line: write "--!include <name>" (a-z and -)`)
    const name = m[1]!
    if (seen.has(name)) return []
    seen.add(name)
    const file = new URL(`include/${name}.lua`, dir)
    if (!existsSync(file)) throw new Error(`${from}: "${text}" names no file: lua/include/${name}.lua is missing`)
    return expand(readFileSync(file, "utf8").replace(/\n$/, ""), `lua/include/${name}.lua`, true, seen)
  })

/** The lines of a Lua text (`from` names it in errors) with its includes pulled in, before {@link shake}. */
export const expandSource = (source: string, from: string): ReadonlyArray<Line> => expand(source, from)

/** A `--[[ … ]]` comment (a script's header). */
const BLOCK_COMMENT = /--\[\[[\s\S]*?\]\]/g

/** A function of an include: its lines `from` (its comment) to `to` (its closing `end`), both included. */
interface Block {
  readonly name: string
  readonly from: number
  readonly to: number
}

/** The include functions: a line `local function <name>(` through the next line `end`, with the comment just above. */
const blocks = (lines: ReadonlyArray<Line>): ReadonlyArray<Block> => {
  const out: Block[] = []
  lines.forEach((line, i) => {
    const m = /^local function (\w+)\(/.exec(line.text)
    if (!m || !line.included) return
    let from = i
    while (from > 0 && lines[from - 1]!.included && lines[from - 1]!.text.startsWith("--")) from--
    let to = i
    while (to < lines.length - 1 && lines[to]!.text !== "end") to++
    out.push({ name: m[1]!, from, to })
  })
  return out
}

/** The words (`\w+` runs) of a line that is code: none for a `--` line, `--[[ … ]]` comments left out. */
const words = (text: string): ReadonlyArray<string> =>
  text.trimStart().startsWith("--") ? [] : (text.replace(BLOCK_COMMENT, "").match(/\w+/g) ?? [])

/** Lines in the same include functions (none, for a script's own lines), and the functions their words name. */
interface Group {
  readonly in: ReadonlyArray<Block>
  readonly calls: Set<Block>
}

/** The functions each line is in (they do not nest: none or one), and the lines grouped by them. */
const group = (lines: ReadonlyArray<Line>, all: ReadonlyArray<Block>) => {
  const byName = new Map<string, Block[]>()
  for (const b of all) byName.set(b.name, [...(byName.get(b.name) ?? []), b])
  const owners: Block[][] = lines.map(() => [])
  for (const b of all) for (let i = b.from; i <= b.to; i++) owners[i]!.push(b)
  const groups = new Map<string, Group>()
  lines.forEach((line, i) => {
    const key = owners[i]!.map((b) => b.from).join(",")
    const g = groups.get(key) ?? { in: owners[i]!, calls: new Set<Block>() }
    groups.set(key, g)
    for (const w of words(line.text)) for (const b of byName.get(w) ?? []) if (!g.in.includes(b)) g.calls.add(b)
  })
  return { owners, groups: [...groups.values()] }
}

/**
 * The functions to drop: those no line outside them names, then, as their lines go, those
 * only they named, until every function left is named by a line that stays.
 */
const deadBlocks = (all: ReadonlyArray<Block>, groups: ReadonlyArray<Group>): ReadonlySet<Block> => {
  const callers = new Map<Block, number>(all.map((b) => [b, 0]))
  for (const g of groups) for (const b of g.calls) callers.set(b, callers.get(b)! + 1)
  const dead = new Set<Block>()
  const gone = new Set<Group>()
  const drop = all.filter((b) => callers.get(b) === 0)
  for (let b = drop.pop(); b !== undefined; b = drop.pop()) {
    dead.add(b)
    for (const g of groups.filter((g) => g.in.includes(b) && !gone.has(g))) {
      gone.add(g)
      for (const c of g.calls) {
        callers.set(c, callers.get(c)! - 1)
        if (callers.get(c) === 0) drop.push(c)
      }
    }
  }
  return dead
}

/**
 * The expanded source without the include functions it never calls: Redis runs a script's
 * whole text on every call, and each `local function` it passes costs a closure, so a
 * script pays only for the functions of lua/include/ it uses (directly or through another).
 * A function stays while a line outside it (not a comment, not in a dropped function) names
 * it. Each line is read once; a dropped function takes back the names its lines counted.
 */
const shake = (lines: ReadonlyArray<Line>): string => {
  const all = blocks(lines)
  const { owners, groups } = group(lines, all)
  const dead = deadBlocks(all, groups)
  return lines
    .filter((_, i) => !owners[i]!.some((b) => dead.has(b)))
    .map((l) => l.text)
    .join("\n")
}

let expansions = 0

/** How many scripts have been expanded so far in this process (a test checks importing expands none). */
export const expandedCount = (): number => expansions

/** The lines of `lua/<name>.lua` with its includes pulled in, before {@link shake} (tests compare shakes on them). */
export const expandedLines = (name: string): ReadonlyArray<Line> =>
  expand(readFileSync(new URL(`${name}.lua`, dir), "utf8"), `lua/${name}.lua`)

/** Read `lua/<name>.lua` with its includes (less the functions it never calls), and its SHA1. */
export const loadScript = (name: string): Script => {
  expansions++
  const source = shake(expandedLines(name))
  return { name, source, sha: createHash("sha1").update(source).digest("hex") }
}

/**
 * Define the descriptor of `lua/<name>.lua`. `rest` defaults to none. The file is read and
 * expanded on the first read of `source` or `sha` (the first call), once: importing the
 * package reads no Lua.
 */
export const defineScript = <In, Out>(spec: {
  readonly name: string
  readonly keys: ReadonlyArray<KeyName>
  readonly peer?: ReadonlyArray<KeyName>
  readonly argv: ReadonlyArray<string>
  readonly rest?: ReadonlyArray<string>
  readonly args: (input: In) => Argv
  readonly decode: (reply: unknown) => Out
}): ScriptDef<In, Out> => {
  let loaded: Script | undefined
  const load = (): Script => (loaded ??= loadScript(spec.name))
  return {
    rest: [],
    ...spec,
    get source() {
      return load().source
    },
    get sha() {
      return load().sha
    },
  }
}

/** The KEYS of one call of `script` on the queue of `keys`, in the order the descriptor names them. */
export const scriptKeys = (script: ScriptDef<never, unknown>, keys: QueueKeys): ReadonlyArray<string> =>
  script.keys.map((name) => keys[name])

/** The KEYS of one call of `script` on the queue of `keys` with the queue of `peer` as its peer ({@link ScriptDef.peer}). */
export const peerKeys = (
  script: ScriptDef<never, unknown>,
  keys: QueueKeys,
  peer: QueueKeys,
): ReadonlyArray<string> => [...scriptKeys(script, keys), ...(script.peer ?? []).map((name) => peer[name])]

/** A reply that is a list (every script answers one); anything else is a bug in the script. */
export const list = <A = number | string>(reply: unknown): ReadonlyArray<A> => {
  if (!Array.isArray(reply)) throw new TypeError(`a script answered ${typeof reply}, not a list`)
  return reply as ReadonlyArray<A>
}

/** `1` as true, anything else as false: the per-item statuses of complete and release. */
export const flags = (reply: unknown): ReadonlyArray<boolean> => list(reply).map((x) => x === 1)
