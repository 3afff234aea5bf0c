/**
 * When and how a script's Lua is expanded: importing the package reads and expands no
 * script (it cost ~1.3 s of CPU when every descriptor expanded its Lua at load); a
 * descriptor expands its script once, on the first read of `source` or `sha`; and the
 * linear shake keeps exactly the lines the fixpoint shake of f43eb35 kept (the reference
 * below), so every SHA1 Redis runs is unchanged. Reads files only: no Redis.
 */
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { expandedLines, expandSource, type Line, type ScriptDef } from "../../src/engine/scripts/Script.ts"

const src = (path: string) => new URL(`../../src/${path}`, import.meta.url).href

/** The shake of f43eb35, line for line: drop include functions until every one left is named outside itself. */
const referenceShake = (lines: ReadonlyArray<Line>): string => {
  const all: Array<{ name: string; from: number; to: number }> = []
  lines.forEach((line, i) => {
    const m = /^local function (\w+)\(/.exec(line.text)
    if (!m || !line.included) return
    let from = i
    while (from > 0 && lines[from - 1]!.included && lines[from - 1]!.text.startsWith("--")) from--
    let to = i
    while (to < lines.length - 1 && lines[to]!.text !== "end") to++
    all.push({ name: m[1]!, from, to })
  })
  const live = new Set(all)
  // the lines of the functions dropped so far (kept as a mask: testing every dropped
  // function's range per line per look made this test take ~17 s)
  const dead = lines.map(() => false)
  const inDead = (i: number) => dead[i] === true
  const comment = lines.map((l) => l.text.trimStart().startsWith("--"))
  const calledOutside = (b: (typeof all)[number]) => {
    const rest = lines.filter((_, i) => (i < b.from || i > b.to) && !inDead(i) && !comment[i]).map((l) => l.text)
    return new RegExp(`\\b${b.name}\\b`).test(rest.join("\n").replace(/--\[\[[\s\S]*?\]\]/g, ""))
  }
  for (let changed = true; changed; ) {
    changed = false
    for (const b of all) {
      if (live.has(b) && !calledOutside(b)) {
        live.delete(b)
        for (let i = b.from; i <= b.to; i++) dead[i] = true
        changed = true
      }
    }
  }
  return lines
    .filter((_, i) => !inDead(i))
    .map((l) => l.text)
    .join("\n")
}

const sha1 = (text: string) => createHash("sha1").update(text).digest("hex")

describe("script loading", () => {
  it("importing the package and its Effect face expands no script; the first read of a script expands it once", () => {
    const probe = `
      await import(${JSON.stringify(src("index.ts"))})
      await import(${JSON.stringify(src("effect.ts"))})
      const { expandedCount } = await import(${JSON.stringify(src("engine/scripts/Script.ts"))})
      const { Scripts } = await import(${JSON.stringify(src("engine/calls/Scripts.ts"))})
      const counts = [expandedCount()]
      const sha = Scripts.add.sha
      counts.push(expandedCount())
      if (Scripts.add.source.length === 0 || Scripts.add.sha !== sha) throw new Error("add changed between reads")
      counts.push(expandedCount())
      process.stdout.write(JSON.stringify(counts))`
    const r = spawnSync(process.execPath, ["--conditions=leaseq-source", "--input-type=module", "-e", probe], {
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
      encoding: "utf8",
    })
    expect(r.stderr).toBe("")
    expect(JSON.parse(r.stdout)).toEqual([0, 1, 1])
  })

  it("every script's lazily expanded text is the one the eager fixpoint shake produced (same SHA1 list)", () => {
    const descriptors = Object.values(Scripts) as ReadonlyArray<ScriptDef<never, unknown>>
    const files = readdirSync(new URL("../../lua/", import.meta.url))
      .filter((f) => f.endsWith(".lua"))
      .map((f) => f.slice(0, -".lua".length))
    expect(descriptors.map((d) => d.name).sort()).toEqual(files.sort())
    const now = descriptors.map((d) => [d.name, d.sha, sha1(d.source)])
    const before = descriptors.map((d) => {
      const text = referenceShake(expandedLines(d.name))
      return [d.name, sha1(text), sha1(text)]
    })
    expect(now).toEqual(before)
  })

  it("an include is pulled in once however many lines name it, after the includes it names itself", () => {
    const lines = expandSource("--!include ready\n--!include active\n--!include ready\nreturn 1", "test")
    const defined = lines.map((l) => /^local function (\w+)\(/.exec(l.text)?.[1]).filter((f) => f !== undefined)
    expect(defined.filter((f, i) => defined.indexOf(f) !== i)).toEqual([])
    // active includes ready, which includes groups: each before the first use
    expect(defined.indexOf("ready_left")).toBeGreaterThanOrEqual(0)
    expect(defined.indexOf("ready_left")).toBeLessThan(defined.indexOf("active_leave"))
    expect(lines.some((l) => l.text.startsWith("--!include"))).toBe(false)
  })

  it("an include line naming no file, or not of the form '--!include <name>', is an error naming the line", () => {
    expect(() => expandSource("--!include no-such-include", "lua/x.lua")).toThrow(
      'lua/x.lua: "--!include no-such-include" names no file: lua/include/no-such-include.lua is missing',
    )
    expect(() => expandSource("--!include Ready", "lua/x.lua")).toThrow(
      /lua\/x.lua: "--!include Ready" is not an include line/,
    )
    expect(() => expandSource("--!include ready ", "lua/x.lua")).toThrow(/is not an include line/)
  })

  /**
   * Include order is no rule in comments: an include names (directly or through another) every
   * include whose functions it calls, so the expander puts those before it in every script. An
   * include pulled into the middle of another (groups, part of ready.lua) may also call what
   * that one defines above its `--!include` line.
   */
  it("each include names the includes whose functions it calls", () => {
    const dir = new URL("../../lua/include/", import.meta.url)
    const text = new Map(
      readdirSync(dir)
        .filter((f) => f.endsWith(".lua"))
        .map((f) => [f.slice(0, -4), readFileSync(new URL(f, dir), "utf8")] as const),
    )
    const defined = (code: string) => [...code.matchAll(/^\s*local function (\w+)\(/gm)].map((m) => m[1]!)
    const owner = new Map([...text].flatMap(([name, code]) => defined(code).map((f) => [f, name] as const)))
    const includes = (name: string) => [...text.get(name)!.matchAll(/^--!include ([a-z-]+)$/gm)].map((m) => m[1]!)
    const reach = (name: string, seen = new Set<string>()): Set<string> => {
      for (const i of includes(name)) if (!seen.has(i)) reach(i, seen.add(i))
      return seen
    }
    const missing: string[] = []
    for (const [name, code] of text) {
      const own = new Set([name, ...reach(name)])
      // what an includer defines above the line that pulls this one in
      const above = [...text.values()].flatMap((c) => {
        const at = c.search(new RegExp(`^--!include ${name}$`, "m"))
        return at < 0 ? [] : defined(c.slice(0, at))
      })
      const calls = code.replace(/--.*$/gm, "").matchAll(/(?:^|[^\w.])(\w+)\(/g)
      for (const [, f] of calls) {
        const o = owner.get(f!)
        if (o !== undefined && !own.has(o) && !above.includes(f!))
          missing.push(`include/${name}.lua calls ${f} of ${o}`)
      }
    }
    expect([...new Set(missing)]).toEqual([])
  })
})
