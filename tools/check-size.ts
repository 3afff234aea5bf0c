/**
 * Fails when a source file (`.ts`, or `.js`: the dashboard's browser script) is over 300
 * lines or a function in it is over 80, or (with `--lua`) a Lua file is over its caps:
 * `node tools/check-size.ts [dir] [--lua <dir>]` (default `src`; `npm run check:size` adds
 * `--lua lua`). A function's length runs from the line of its parameter list (or `function`
 * keyword) to the line of its closing brace, both counted. Functions are found by the
 * scanner in tools/size-scan.ts; its header lists what it recognises and its limits. The
 * caps and the exemptions (each with its reason) are in tools/size-rules.ts; an exemption
 * no longer needed is printed, without failing.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import { CAPS, type LuaMeasure, luaProblems, sourceProblems, staleExemptions, unreasoned } from "./size-rules.ts"
import { lineCount } from "./size-scan.ts"

const args = process.argv.slice(2)
const luaAt = args.indexOf("--lua")
const luaDir = luaAt >= 0 ? resolve(args[luaAt + 1] ?? "lua") : undefined
const root = resolve(args.find((a, i) => !a.startsWith("--") && (luaAt < 0 || i !== luaAt + 1)) ?? "src")

const files = (dir: string, ext: RegExp): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return files(path, ext)
    return ext.test(path) ? [path] : []
  })

const problems: string[] = unreasoned().map((k) => `tools/size-rules.ts: exemption ${k} gives no reason`)
const used = new Set<string>()
const sources = files(root, /\.[jt]s$/)
  .sort()
  .map((file) => ({ path: relative(process.cwd(), file), text: readFileSync(file, "utf8") }))
const checked = sources.length
problems.push(...sourceProblems(sources, used))

/** The Lua files of `dir`: lines; for the repository's own scripts also KEYS and expanded lines (the loader reads lua/). */
const measureLua = async (dir: string): Promise<LuaMeasure[]> => {
  const own = dir === resolve(import.meta.dirname, "../lua")
  const scripts = own ? await import("../src/engine/calls/Scripts.ts") : undefined
  const loader = own ? await import("../src/engine/scripts/Script.ts") : undefined
  const keysOf = new Map(Object.values(scripts?.Scripts ?? {}).map((d) => [d.name, d.keys.length]))
  return files(dir, /\.lua$/)
    .sort()
    .map((file) => {
      const path = relative(process.cwd(), file)
      const lines = lineCount(readFileSync(file, "utf8"))
      const script = relative(dir, file).replace(/\.lua$/, "")
      if (loader === undefined || script.includes("/")) return { path, lines }
      return { path, lines, keys: keysOf.get(script), expandedLines: lineCount(loader.loadScript(script).source) }
    })
}

let luaChecked = 0
if (luaDir !== undefined) {
  const measured = await measureLua(luaDir)
  luaChecked = measured.length
  problems.push(...luaProblems(measured, used))
}

const covered = [root, ...(luaDir === undefined ? [] : [luaDir])].map((d) => relative(process.cwd(), d))
for (const k of staleExemptions(used, covered)) console.log(`note: the size exemption ${k} is no longer needed`)
const where = relative(process.cwd(), root) || "."
if (problems.length > 0) {
  for (const p of problems) console.error(p)
  console.error(
    `${problems.length} size problem(s) in ${where}: split a file or function where its concept splits, or exempt it with a reason in tools/size-rules.ts`,
  )
  process.exit(1)
}
console.log(
  `${checked} files under ${where} within ${CAPS.fileLines} lines, functions within ${CAPS.functionLines} lines` +
    (luaDir === undefined
      ? ""
      : `; ${luaChecked} Lua files within ${CAPS.luaLines} lines, ${CAPS.luaKeys} KEYS, ${CAPS.luaExpandedLines} lines expanded`) +
    (used.size > 0 ? ` (${used.size} exempt: tools/size-rules.ts)` : ""),
)
