/**
 * Fails when the source has an import cycle: `node tools/check-cycles.ts [dir]` (default
 * `src`). Follows relative `import`/`export … from` specifiers (type-only imports too: a
 * cycle of types is still a cycle a reader has to untangle) and prints each cycle found.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

const root = resolve(process.argv[2] ?? "src")

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return files(path)
    return path.endsWith(".ts") ? [path] : []
  })

const SPECIFIER = /(?:^|\n)\s*(?:import|export)\b[^;'"]*?\bfrom\s*["'](\.{1,2}\/[^"']+)["']/g

/** Each file's relative imports, resolved to absolute paths. */
const graph = new Map<string, string[]>()
for (const file of files(root)) {
  const text = readFileSync(file, "utf8")
  const deps: string[] = []
  for (const m of text.matchAll(SPECIFIER)) deps.push(resolve(dirname(file), m[1] as string))
  graph.set(file, deps)
}

/** Depth-first search; a back edge to a file on the stack closes a cycle. */
const cycles: string[][] = []
const state = new Map<string, "open" | "done">()
const stack: string[] = []
const visit = (file: string): void => {
  state.set(file, "open")
  stack.push(file)
  for (const dep of graph.get(file) ?? []) {
    if (!graph.has(dep)) continue
    const s = state.get(dep)
    if (s === "open") cycles.push([...stack.slice(stack.indexOf(dep)), dep])
    else if (s === undefined) visit(dep)
  }
  stack.pop()
  state.set(file, "done")
}
for (const file of graph.keys()) if (!state.has(file)) visit(file)

if (cycles.length > 0) {
  for (const c of cycles) console.error(`import cycle: ${c.map((f) => relative(process.cwd(), f)).join(" → ")}`)
  console.error(
    `${cycles.length} import cycle(s) in ${relative(process.cwd(), root) || "."}: break each one (move the shared part into a module both can import)`,
  )
  process.exit(1)
}
console.log(`no import cycles in ${graph.size} files under ${relative(process.cwd(), root) || "."}`)
