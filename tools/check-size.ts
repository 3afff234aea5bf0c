/**
 * Fails when a source file (`.ts`, or `.js`: the dashboard's browser script) is over 300
 * lines or a function in it is over 80:
 * `node tools/check-size.ts [dir]` (default `src`). A function's length runs from the line
 * of its parameter list (or `function` keyword) to the line of its closing brace, both
 * counted. Functions are found by the scanner in tools/size-scan.ts; its header lists what
 * it recognises and its limits.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import { findFunctions, lineCount } from "./size-scan.ts"

const MAX_FILE_LINES = 300
const MAX_FUNCTION_LINES = 80

/**
 * Files exempt from both limits, relative to the repository root, each with its reason: only
 * files whose whole content is data. None today.
 */
const ALLOWED: Readonly<Record<string, string>> = {}

const root = resolve(process.argv[2] ?? "src")

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return files(path)
    return /\.[jt]s$/.test(path) ? [path] : []
  })

const problems: string[] = []
let checked = 0
for (const file of files(root).sort()) {
  const name = relative(process.cwd(), file)
  if (ALLOWED[name] !== undefined) continue
  checked++
  const text = readFileSync(file, "utf8")
  const lines = lineCount(text)
  if (lines > MAX_FILE_LINES) problems.push(`${name}: ${lines} lines (max ${MAX_FILE_LINES})`)
  for (const f of findFunctions(text)) {
    if (f.lines > MAX_FUNCTION_LINES) {
      problems.push(`${name}:${f.startLine}: function ${f.name} is ${f.lines} lines (max ${MAX_FUNCTION_LINES})`)
    }
  }
}

const where = relative(process.cwd(), root) || "."
if (problems.length > 0) {
  for (const p of problems) console.error(p)
  console.error(
    `${problems.length} size problem(s) in ${where}: split long files into modules by concern and long functions into named steps`,
  )
  process.exit(1)
}
console.log(
  `${checked} files under ${where} within ${MAX_FILE_LINES} lines, functions within ${MAX_FUNCTION_LINES} lines`,
)
