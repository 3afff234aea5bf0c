/**
 * tools/check-size.ts and its scanner (tools/size-scan.ts, tools/size-mask.ts): functions are found through
 * strings, templates, comments and regular expressions that hold braces, nested functions
 * are measured on their own, and the check fails on a function of 81 lines. The rules of
 * tools/size-rules.ts: Lua's caps (lines, KEYS, expanded lines), exemptions with a reason,
 * a stale exemption reported, and the repository within them.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { mask } from "../../tools/size-mask.ts"
import { CAPS, EXEMPT, luaProblems, sourceProblems, staleExemptions, unreasoned } from "../../tools/size-rules.ts"
import { findFunctions, lineCount } from "../../tools/size-scan.ts"
import { onCleanup } from "../support/cleanup.ts"

const ROOT = join(import.meta.dirname, "../..")

/** `name(lines)` for each function found, in order. */
const spans = (text: string): string[] => findFunctions(text).map((f) => `${f.name}(${f.lines})`)

/** A function of exactly `lines` lines written as `head`, filler statements, and `}`. */
const fn = (head: string, lines: number): string =>
  [head, ...Array.from({ length: lines - 2 }, (_, i) => `  x += ${i}`), "}"].join("\n")

const runCheck = (files: Record<string, string>, flags: ReadonlyArray<string> = []) => {
  const dir = mkdtempSync(join(tmpdir(), "check-size-"))
  onCleanup(() => rmSync(dir, { recursive: true, force: true }))
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true })
    writeFileSync(join(dir, name), text)
  }
  const rel = (f: string) => (f.startsWith("--") ? f : join(dir, f))
  return spawnSync(process.execPath, [join(ROOT, "tools/check-size.ts"), dir, ...flags.map(rel)], {
    encoding: "utf8",
    cwd: ROOT,
  })
}

describe("size scanner", () => {
  it("blanks comments, strings, template text and regexes but keeps code inside template placeholders", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the fixture is source text holding a template literal
    const src = 'a("{", `x{${f({})}}`, /[{]/g) // }\n/* { */ b'
    const masked = mask(src)
    expect(masked).toHaveLength(src.length)
    expect(masked.replace(/[^{}]/g, "")).toBe("{{}}")
    expect(masked.split("\n")).toHaveLength(2)
  })

  it("finds function declarations, generators, arrows with blocks and methods", () => {
    const src = [
      "function plain(a: number): { b: string } {",
      "  return { b: String(a) }",
      "}",
      "const gen = Effect.gen(function* () {",
      "  yield* x",
      "})",
      "const arrow = async (a: A): Promise<Map<string, { c: 1 }>> => {",
      "  if (a) {",
      "    for (const k of a) {}",
      "  }",
      "}",
      "const single = a => {",
      "}",
      "const expr = (a) => ({ a })",
      "class K {",
      "  method<T>(t: T): T {",
      "    return t",
      "  }",
      "  get size() {",
      "    return 1",
      "  }",
      "}",
      "const o = { *items() {",
      "} }",
    ].join("\n")
    expect(spans(src)).toEqual(["plain(3)", "function(3)", "arrow(5)", "single(2)", "method(3)", "size(3)", "items(2)"])
  })

  it("is not misled by braces and quotes in strings, templates, comments and regexes", () => {
    const src = [
      "const f = () => {",
      "  const s = \"}}}\" + '{'",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the fixture is source text holding template literals
      "  const t = `}${'{'}` + `${`}`}`",
      "  // }",
      "  /* } */",
      "  const r = /}[}]/.test(s) ? 1 : 2 / 3",
      "  return s",
      "}",
    ].join("\n")
    expect(spans(src)).toEqual(["f(8)"])
  })

  it("measures nested functions on their own and counts from the first line of the parameters", () => {
    const src = [
      "export const outer = (",
      "  a: number,",
      "): number => {",
      "  const inner = function named(b: number) {",
      "    return b",
      "  }",
      "  return inner(a)",
      "}",
    ].join("\n")
    expect(findFunctions(src).map((f) => [f.name, f.startLine, f.endLine])).toEqual([
      ["outer", 1, 8],
      ["named", 4, 6],
    ])
  })

  it("does not take if, for, while, catch or calls for functions", () => {
    const src = "if (a) {\n}\nfor (;;) {\n}\nwhile (b) {\n}\ntry {\n} catch (e) {\n}\nf(a)\nx = a ? g(b) : c\n"
    expect(spans(src)).toEqual([])
  })

  it("counts file lines as an editor does", () => {
    expect(lineCount("a\nb\n")).toBe(2)
    expect(lineCount("a\nb")).toBe(2)
    expect(lineCount("")).toBe(0)
  })
})

describe("npm run check:size", () => {
  it("passes a function of 80 lines and fails one of 81, naming file, line and length", () => {
    const ok = runCheck({ "a.ts": `${fn("export const long = () => {", 80)}\n` })
    expect(ok.stderr).toBe("")
    expect(ok.status).toBe(0)

    const bad = runCheck({ "a.ts": `// header\n${fn("export function tooLong(x: number) {", 81)}\n` })
    expect(bad.status).toBe(1)
    expect(bad.stderr).toMatch(/a\.ts:2: function tooLong is 81 lines \(max 80\)/)
  })

  it("fails a file of 301 lines", () => {
    const bad = runCheck({ "deep/b.ts": "x\n".repeat(301) })
    expect(bad.status).toBe(1)
    expect(bad.stderr).toMatch(/deep\/b\.ts: 301 lines \(max 300\)/)
  })
  it("checks JavaScript too (the dashboard's browser script): a .js function of 81 lines fails", () => {
    const bad = runCheck({ "browser/app.js": `${fn("export const tooLong = (x) => {", 81)}\n` })
    expect(bad.status).toBe(1)
    expect(bad.stderr).toMatch(/browser\/app\.js:1: function tooLong is 81 lines \(max 80\)/)
  })
})

describe("the size rules (tools/size-rules.ts)", () => {
  it("a Lua file over the line cap fails, naming it; one at the cap passes", () => {
    const bad = runCheck({ "a.ts": "x\n", "lua/big.lua": "x\n".repeat(CAPS.luaLines + 1) }, ["--lua", "lua"])
    expect(bad.status).toBe(1)
    expect(bad.stderr).toMatch(new RegExp(`lua/big\\.lua: ${CAPS.luaLines + 1} lines \\(max ${CAPS.luaLines}\\)`))
    const ok = runCheck({ "a.ts": "x\n", "lua/small.lua": "x\n".repeat(CAPS.luaLines) }, ["--lua", "lua"])
    expect(ok.stderr).toBe("")
    expect(ok.status).toBe(0)
  })

  it("an exempt file or function passes; the exemption names the one function it lifts", () => {
    const used = new Set<string>()
    const files = [
      { path: "src/big.ts", text: "x\n".repeat(CAPS.fileLines + 1) },
      { path: "src/f.ts", text: `${fn("const a = () => {", 81)}\n${fn("const b = () => {", 81)}\n` },
    ]
    const exempt = { "src/big.ts": "a table of data, one concept", "src/f.ts#a": "one step that reads best whole" }
    expect(sourceProblems(files, used, CAPS, exempt)).toEqual(["src/f.ts:82: function b is 81 lines (max 80)"])
    expect([...used].sort()).toEqual(["src/big.ts", "src/f.ts#a"])
  })

  it("KEYS per script and lines expanded have caps; an exemption lifts only the rule it names", () => {
    const used = new Set<string>()
    const files = [
      { path: "lua/wide.lua", lines: 10, keys: CAPS.luaKeys + 1, expandedLines: 10 },
      { path: "lua/deep.lua", lines: 10, keys: 1, expandedLines: CAPS.luaExpandedLines + 1 },
      { path: "lua/fine.lua", lines: 10, keys: CAPS.luaKeys, expandedLines: CAPS.luaExpandedLines },
    ]
    expect(luaProblems(files, used, CAPS, {})).toEqual([
      `lua/wide.lua: ${CAPS.luaKeys + 1} KEYS (max ${CAPS.luaKeys})`,
      `lua/deep.lua: ${CAPS.luaExpandedLines + 1} lines expanded (max ${CAPS.luaExpandedLines})`,
    ])
    const exempt = { "lua/wide.lua#keys": "a reason long enough", "lua/deep.lua": "lifts lines, not expanded" }
    expect(luaProblems(files, used, CAPS, exempt)).toEqual([
      `lua/deep.lua: ${CAPS.luaExpandedLines + 1} lines expanded (max ${CAPS.luaExpandedLines})`,
    ])
    expect([...used]).toEqual(["lua/wide.lua#keys"])
    expect(staleExemptions(used, ["lua"], exempt)).toEqual(["lua/deep.lua"])
  })

  it("every exemption gives its reason, and none is stale; the repository is within the caps", () => {
    expect(unreasoned()).toEqual([])
    expect(unreasoned({ "src/x.ts": "" })).toEqual(["src/x.ts"])
    const real = spawnSync(process.execPath, [join(ROOT, "tools/check-size.ts"), "src", "--lua", "lua"], {
      encoding: "utf8",
      cwd: ROOT,
    })
    expect(real.stderr).toBe("")
    expect(real.status).toBe(0)
    expect(real.stdout).not.toContain("no longer needed")
    expect(real.stdout).toContain(`(${Object.keys(EXEMPT).length} exempt: tools/size-rules.ts)`)
  })
})
