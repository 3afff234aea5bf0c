/**
 * The Lua scripts in `lua/`, read once at start-up with their SHA1, called by
 * EVALSHA (see redis/Client.ts for the NOSCRIPT reload). A script may include shared
 * functions from `lua/include/` with a line `--!include <name>`; the SHA1 is of the
 * expanded text, which is what Redis runs.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"

/** A script read from `lua/<name>.lua`. */
export interface Script {
  readonly name: string
  readonly source: string
  readonly sha: string
}

const dir = new URL("../../lua/", import.meta.url)

/** A line `--!include <name>` is replaced by `lua/include/<name>.lua` (shared Lua functions). */
const expand = (source: string): string =>
  source.replace(/^--!include ([a-z-]+)$/gm, (_line, name: string) =>
    readFileSync(new URL(`include/${name}.lua`, dir), "utf8"),
  )

const load = (name: string): Script => {
  const source = expand(readFileSync(new URL(`${name}.lua`, dir), "utf8"))
  return { name, source, sha: createHash("sha1").update(source).digest("hex") }
}

/** Every script, by operation. */
export const Scripts = {
  add: load("add"),
  reserve: load("reserve"),
  extend: load("extend"),
  complete: load("complete"),
  fail: load("fail"),
  release: load("release"),
  sweep: load("sweep"),
  stats: load("stats"),
  deadList: load("dead-list"),
  deadRetry: load("dead-retry"),
  deadPurge: load("dead-purge"),
  verifyWait: load("verify-wait"),
  verifySet: load("verify-set"),
  verifyHash: load("verify-hash"),
  verifyOrphans: load("verify-orphans"),
  open: load("open"),
  workers: load("workers"),
  workerLeave: load("worker-leave"),
} as const

/** The name of a script. */
export type ScriptName = keyof typeof Scripts
