/**
 * Fails when an import crosses folders in a direction the design does not allow:
 * `node tools/check-layers.ts [dir]` (default `src`).
 *
 * Three rules, all over relative `import`/`export … from` specifiers (type-only too):
 * 1. Top-level folders may import only the folders listed for them in `ALLOWED` below
 *    (the files directly in `src/` are the package's entry points and may import anything).
 * 2. Inside `engine/`, a sub-folder may import only the sub-folders listed for it in
 *    `ENGINE_ALLOWED` (tools/layer-rules.ts); inside `engine/worker/`, a room (`loop/`,
 *    `run/`, `lease/`) only the rooms `WORKER_ROOMS` lists for it and the worker's base files.
 * 3. No loop of folders at any depth: if any file of folder A imports folder B, no file of
 *    B (or of a folder B reaches) may import A. A folder's files that reach none of its
 *    sub-folders (its base: `engine/worker/`'s options, hooks, states) count as a node of
 *    their own, so its sub-folders may import them; its other files (its assembly:
 *    `Worker.ts`) import the sub-folders, which may then not import them back.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve, sep } from "node:path"
import { engineProblem, roomProblem } from "./layer-rules.ts"

/** Which top-level folders each top-level folder may import. Anything else fails. */
export const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  redis: [],
  engine: ["redis"],
  // perform() runs a job through the Promise face's Queue and Worker: the real engine, as users run it
  testing: ["promise", "engine", "redis"],
  promise: ["engine", "redis"],
  effect: ["engine", "redis"],
  metrics: ["engine", "redis"],
  dashboard: ["metrics", "engine", "redis"],
  cli: ["dashboard", "metrics", "engine", "redis"],
  demo: [".", "testing", "redis"],
}

const root = resolve(process.argv[2] ?? "src")

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return files(path)
    return path.endsWith(".ts") ? [path] : []
  })

const SPECIFIER = /(?:^|\n)\s*(?:import|export)\b[^;'"]*?\bfrom\s*["'](\.{1,2}\/[^"']+)["']/g

/** The folder of a file, relative to the root ("." for the root itself). */
const folderOf = (file: string): string => relative(root, dirname(file)) || "."
const top = (folder: string): string => folder.split(sep)[0] ?? "."

const problems: string[] = []
/** Folder → folders it imports, with one example import per edge. */
const edges = new Map<string, Map<string, string>>()
/** A root-relative path with `/` separators (the tables' form). */
const rel = (file: string): string => relative(root, file).split(sep).join("/")

/** Each file's relative imports inside the root, resolved. */
const imports = new Map<string, Array<{ readonly target: string; readonly spec: string }>>()
for (const file of files(root)) {
  const found = [...readFileSync(file, "utf8").matchAll(SPECIFIER)].map((m) => ({
    target: resolve(dirname(file), m[1] as string),
    spec: m[1] as string,
  }))
  imports.set(
    file,
    found.filter((i) => i.target.startsWith(root)),
  )
}

/** Whether `folder` lies strictly inside `parent`. */
const inside = (folder: string, parent: string): boolean =>
  parent === "." ? folder !== "." : folder.startsWith(`${parent}${sep}`)

/**
 * The files that reach one of their own folder's sub-folders (directly, or through a file
 * of the same folder that does): a folder's *assembly*. The rest of its files are its *base*,
 * a node of their own in the folder graph, so its sub-folders may import them (rule 3).
 */
const assembly = new Set<string>()
for (let grew = true; grew; ) {
  grew = false
  for (const [file, list] of imports) {
    if (assembly.has(file)) continue
    const folder = folderOf(file)
    const reaches = list.some(
      (i) => inside(folderOf(i.target), folder) || (folderOf(i.target) === folder && assembly.has(i.target)),
    )
    if (reaches) {
      assembly.add(file)
      grew = true
    }
  }
}
const assembled = new Set([...assembly].map(folderOf))
/** A file's node in the folder graph: its folder, or its folder's base (for a folder with an assembly). */
const nodeOf = (file: string): string => {
  const folder = folderOf(file)
  return assembly.has(file) || !assembled.has(folder) ? folder : `${folder} (base)`
}

for (const [file, list] of imports) {
  const from = folderOf(file)
  for (const { target, spec } of list) {
    const to = folderOf(target)
    const example = `${relative(process.cwd(), file)} imports ${spec}`
    const [nodeFrom, nodeTo] = [nodeOf(file), nodeOf(target)]
    if (nodeFrom !== nodeTo) {
      const out = edges.get(nodeFrom) ?? new Map<string, string>()
      if (!out.has(nodeTo)) out.set(nodeTo, example)
      edges.set(nodeFrom, out)
    }
    if (to === from) continue
    const inRooms = roomProblem(rel(file), rel(target), !assembly.has(target))
    if (inRooms !== undefined) problems.push(`${inRooms}: ${example}`)
    const inEngine = engineProblem(rel(file), rel(target))
    if (inEngine !== undefined) problems.push(`${inEngine}: ${example}`)
    const [a, b] = [top(from), top(to)]
    if (a === b || a === ".") continue
    const allowed = ALLOWED[a]
    if (allowed === undefined) problems.push(`${a}/ is not in the allowed-edges table (${example})`)
    else if (!allowed.includes(b))
      problems.push(`${a}/ may not import ${b === "." ? "the entry points" : `${b}/`}: ${example}`)
  }
}

/** Folder loops: Tarjan's strongly connected components over the folder graph. */
const index = new Map<string, number>()
const low = new Map<string, number>()
const onStack = new Set<string>()
const stack: string[] = []
let next = 0
const connect = (v: string): void => {
  index.set(v, next)
  low.set(v, next)
  next++
  stack.push(v)
  onStack.add(v)
  for (const w of edges.get(v)?.keys() ?? []) {
    if (!index.has(w)) {
      connect(w)
      low.set(v, Math.min(low.get(v) as number, low.get(w) as number))
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number))
  }
  if (low.get(v) !== index.get(v)) return
  const component: string[] = []
  for (;;) {
    const w = stack.pop() as string
    onStack.delete(w)
    component.push(w)
    if (w === v) break
  }
  if (component.length < 2) return
  const set = new Set(component)
  const inside = component.flatMap((a) =>
    [...(edges.get(a) ?? [])].filter(([b]) => set.has(b)).map(([b, ex]) => `  ${a} → ${b}: ${ex}`),
  )
  problems.push(`folder loop ${component.sort().join(" ↔ ")}:\n${inside.join("\n")}`)
}
for (const v of edges.keys()) if (!index.has(v)) connect(v)

if (problems.length > 0) {
  for (const p of problems) console.error(p)
  console.error(
    `${problems.length} layering problem(s) under ${relative(process.cwd(), root) || "."}: move the shared part down a layer (see docs/architecture.md)`,
  )
  process.exit(1)
}
console.log(`folders under ${relative(process.cwd(), root) || "."} import only down the allowed edges, with no loops`)
