/**
 * Each Lua script's header and its typed descriptor (src/engine/scripts/*.ts) say the
 * same thing: the same KEYS by name in the same order, the same ARGV, and every
 * script in lua/ has a descriptor. The descriptor is where Commands take a call's KEYS
 * order from, so a header that drifts from it (or a descriptor that drifts from the
 * script) fails here. Reads files only: no Redis.
 *
 * The header grammar (see CONTRIBUTING.md, "Adding a script"):
 *   KEYS[i] <key name>  <LIST|ZSET|HASH|STREAM>  <meaning>
 *   ARGV[i] <name>  <meaning>
 *   ARGV[i..] <name>, <name>, …  <meaning of the repeated group>
 */
import { readdirSync, readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { KEY_TYPES } from "../src/engine/Keys.ts"
import { Scripts } from "../src/engine/Scripts.ts"
import type { ScriptDef } from "../src/engine/scripts/Script.ts"

const luaDir = new URL("../lua/", import.meta.url)
const files = readdirSync(luaDir)
  .filter((f) => f.endsWith(".lua"))
  .map((f) => f.slice(0, -".lua".length))
  .sort()
const descriptors = Object.values(Scripts) as ReadonlyArray<ScriptDef<never, unknown>>

interface Header {
  readonly keys: ReadonlyArray<{ readonly index: number; readonly name: string; readonly type: string | undefined }>
  readonly argv: ReadonlyArray<{ readonly index: number; readonly name: string }>
  readonly rest: { readonly index: number; readonly names: ReadonlyArray<string> } | undefined
}

/** The `--[[ … ]]` block a script opens with, and the code after it (includes not expanded). */
const split = (name: string): { readonly header: string; readonly body: string } => {
  const text = readFileSync(new URL(`${name}.lua`, luaDir), "utf8")
  const end = text.indexOf("]]")
  if (!text.startsWith("--[[") || end < 0) throw new Error(`lua/${name}.lua does not open with a --[[ header ]]`)
  return { header: text.slice(4, end), body: text.slice(end + 2) }
}

const parseHeader = (header: string): Header => {
  const keys: Array<Header["keys"][number]> = []
  const argv: Array<Header["argv"][number]> = []
  let rest: Header["rest"]
  for (const line of header.split("\n")) {
    const key = /^\s*KEYS\[(\d+)\]\s+(\w+)(?:\s+(LIST|ZSET|HASH|STREAM)\b)?/.exec(line)
    if (key) keys.push({ index: Number(key[1]), name: key[2]!, type: key[3]?.toLowerCase() })
    const arg = /^\s*ARGV\[(\d+)\]\s+(\w+)/.exec(line)
    if (arg) argv.push({ index: Number(arg[1]), name: arg[2]! })
    const tail = /^\s*ARGV\[(\d+)\.\.\]\s+(\w+(?:,\s*\w+)*)/.exec(line)
    if (tail) rest = { index: Number(tail[1]), names: tail[2]!.split(/,\s*/) }
  }
  return { keys, argv, rest }
}

describe("script descriptors", () => {
  it("every script in lua/ has exactly one descriptor, and every descriptor a script", () => {
    expect(descriptors.map((d) => d.name).sort()).toEqual(files)
  })

  describe.each(files)("lua/%s.lua", (name) => {
    const script = descriptors.find((d) => d.name === name)
    const { header, body } = split(name)
    const parsed = parseHeader(header)

    it("names the descriptor's KEYS, in the same order, each with its key's type", () => {
      expect(script).toBeDefined()
      expect(parsed.keys.map((k) => k.index)).toEqual(parsed.keys.map((_, i) => i + 1))
      expect(parsed.keys.map((k) => k.name)).toEqual(script?.keys)
      for (const k of parsed.keys) {
        expect(k.type, `KEYS[${k.index}] ${k.name}: its Redis type`).toBe(KEY_TYPES[k.name as keyof typeof KEY_TYPES])
      }
    })

    it("names the descriptor's ARGV, in the same order, and its repeated group", () => {
      expect(parsed.argv.map((a) => a.index)).toEqual(parsed.argv.map((_, i) => i + 1))
      expect(parsed.argv.map((a) => a.name)).toEqual(script?.argv)
      if (script?.rest.length === 0) expect(parsed.rest).toBeUndefined()
      else expect(parsed.rest).toEqual({ index: parsed.argv.length + 1, names: script?.rest })
    })

    it("uses no KEYS entry beyond those its header declares", () => {
      const used = [...body.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1]))
      expect(Math.max(0, ...used)).toBeLessThanOrEqual(parsed.keys.length)
    })
  })
})
