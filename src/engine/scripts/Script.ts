/**
 * What a Lua script of `lua/` is to the TypeScript side: one typed descriptor per
 * script, the single source of its KEYS order (by key name), its ARGV and the decoder
 * of its reply. test/scripts/script-descriptors.test.ts checks each descriptor against its
 * script's header, so the two cannot drift apart.
 *
 * A script is read once at start-up with its SHA1 and called by EVALSHA (see
 * redis/Client.ts for the NOSCRIPT reload). A line `--!include <name>` is replaced by
 * `lua/include/<name>.lua` (shared Lua); the SHA1 is of the expanded text, which is
 * what Redis runs.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
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

/** A line `--!include <name>` is replaced by `lua/include/<name>.lua`. */
const expand = (source: string): string =>
  source.replace(/^--!include ([a-z-]+)$/gm, (_line, name: string) =>
    readFileSync(new URL(`include/${name}.lua`, dir), "utf8"),
  )

/** Read `lua/<name>.lua` with its includes, and its SHA1. */
export const loadScript = (name: string): Script => {
  const source = expand(readFileSync(new URL(`${name}.lua`, dir), "utf8"))
  return { name, source, sha: createHash("sha1").update(source).digest("hex") }
}

/** Define the descriptor of `lua/<name>.lua` (read once, here). `rest` defaults to none. */
export const defineScript = <In, Out>(spec: {
  readonly name: string
  readonly keys: ReadonlyArray<KeyName>
  readonly argv: ReadonlyArray<string>
  readonly rest?: ReadonlyArray<string>
  readonly args: (input: In) => Argv
  readonly decode: (reply: unknown) => Out
}): ScriptDef<In, Out> => ({ ...loadScript(spec.name), rest: [], ...spec })

/** The KEYS of one call of `script` on the queue of `keys`, in the order the descriptor names them. */
export const scriptKeys = (script: ScriptDef<never, unknown>, keys: QueueKeys): ReadonlyArray<string> =>
  script.keys.map((name) => keys[name])

/** A reply that is a list (every script answers one); anything else is a bug in the script. */
export const list = <A = number | string>(reply: unknown): ReadonlyArray<A> => {
  if (!Array.isArray(reply)) throw new TypeError(`a script answered ${typeof reply}, not a list`)
  return reply as ReadonlyArray<A>
}

/** `1` as true, anything else as false: the per-item statuses of complete and release. */
export const flags = (reply: unknown): ReadonlyArray<boolean> => list(reply).map((x) => x === 1)
