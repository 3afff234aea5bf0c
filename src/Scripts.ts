/**
 * The Lua scripts in `lua/`, read once at start-up with their SHA1, called by
 * EVALSHA (see redis/Client.ts for the NOSCRIPT reload).
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"

/** A script read from `lua/<name>.lua`. */
export interface Script {
  readonly name: string
  readonly source: string
  readonly sha: string
}

const dir = new URL("../lua/", import.meta.url)

const load = (name: string): Script => {
  const source = readFileSync(new URL(`${name}.lua`, dir), "utf8")
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
  verify: load("verify"),
  open: load("open"),
} as const

/** The name of a script. */
export type ScriptName = keyof typeof Scripts
