/**
 * The API reference (docs/api/): one page per entry point (`leaseq`, `leaseq/effect`,
 * `leaseq/testing`, `leaseq/metrics`, `leaseq/dashboard`), each export with its JSDoc and
 * its declaration as the published `.d.ts` gives it. TypeDoc is not a dependency: the
 * declarations are emitted with the repository's own `tsc` (tsconfig.build.json,
 * declarations only, into a temp dir) and read back, so the reference shows exactly
 * what a user's editor shows.
 *
 * `node tools/api-docs.ts` (`npm run docs:api`) writes docs/api/; `--check` writes nothing
 * and exits 1 naming the pages that are not current (test/package/api-docs.test.ts).
 *
 * What it reads of a `.d.ts`: `export { a, type B } from "./x.js"` and `export * as N from`
 * (followed into the file named), and top-level `export declare …` / `export interface` /
 * `export type` declarations with the JSDoc block before them; a declaration runs until the
 * next line at column 0 that does not close it. Overloads are kept together; a class lists
 * what it inherits from bases that are not exported; `@internal` exports and members,
 * protected members and private state are left out.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"

const ROOT = resolve(import.meta.dirname, "..")
const OUT = join(ROOT, "docs/api")

/** The entry points, as package.json's `exports` names them, and their page. */
const ENTRIES = [
  { spec: "leaseq", file: "index.d.ts", page: "leaseq.md" },
  { spec: "leaseq/effect", file: "effect.d.ts", page: "leaseq-effect.md" },
  { spec: "leaseq/testing", file: "testing.d.ts", page: "leaseq-testing.md" },
  { spec: "leaseq/metrics", file: "metrics.d.ts", page: "leaseq-metrics.md" },
  { spec: "leaseq/dashboard", file: "dashboard.d.ts", page: "leaseq-dashboard.md" },
] as const

/** Emit the declarations of src/ into a fresh temp dir; its path. */
const emit = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "leaseq-api-"))
  const r = spawnSync(
    join(ROOT, "node_modules/.bin/tsc"),
    ["-p", join(ROOT, "tsconfig.build.json"), "--emitDeclarationOnly", "--outDir", dir],
    { encoding: "utf8" },
  )
  if (r.status !== 0) throw new Error(`tsc failed:\n${r.stdout}${r.stderr}`)
  return dir
}

/** One documented export: its name, JSDoc text (markdown), declaration, and what a class inherits. */
interface Entry {
  readonly name: string
  readonly doc: string
  readonly decl: string
  readonly bases?: ReadonlyArray<{ readonly base: string; readonly decl: string }>
}

/** A JSDoc block's text: the `*` margins off, `@module` dropped. */
const docText = (block: string): string =>
  block
    .replace(/^\/\*\*\s?/, "")
    .replace(/\s*\*\/$/, "")
    .split("\n")
    .map((l) => l.replace(/^\s*\* ?/, ""))
    .filter((l) => l.trim() !== "@module")
    .join("\n")
    .trim()

const cache = new Map<string, string>()
const read = (path: string): string => {
  let text = cache.get(path)
  if (text === undefined) {
    text = readFileSync(path, "utf8")
    cache.set(path, text)
  }
  return text
}

/** The `.d.ts` a specifier of `from` names (`./x.ts` or `./x.js` → `x.d.ts`). */
const target = (from: string, spec: string): string =>
  join(dirname(from), spec.replace(/\.(ts|js)$/, "").concat(".d.ts"))

/** Whether a line continues the declaration above it (indented, or closing it). */
const continues = (line: string): boolean => /^(\s|\}|\)|\||&|>)/.test(line)

/** The JSDoc block ending on the line above line `i`, as text ("" when there is none). */
const jsdocAbove = (lines: ReadonlyArray<string>, i: number): string => {
  let j = i - 1
  if (!(lines[j] ?? "").trimEnd().endsWith("*/")) return ""
  while (j > 0 && !(lines[j] ?? "").trimStart().startsWith("/**")) j--
  return docText(lines.slice(j, i).join("\n"))
}

/** The line after the declaration starting on line `i`. */
const declEnd = (lines: ReadonlyArray<string>, i: number): number => {
  const first = lines[i] ?? ""
  let end = i + 1
  if (/;\s*$/.test(first) && !/\{\s*$/.test(first)) return end
  while (end < lines.length && continues(lines[end] ?? "")) end++
  return end
}

/** The declarations of `name` in `file` (overloads together), with the JSDoc of the first; undefined when it has none. */
const declarationIn = (file: string, name: string): { doc: string; decl: string } | undefined => {
  const lines = read(file).split("\n")
  const head = new RegExp(
    `^export (?:declare )?(?:abstract )?(?:class|interface|type|const|let|function|enum|namespace) ${name}\\b`,
  )
  const parts: string[] = []
  let doc = ""
  for (let i = 0; i < lines.length; i++) {
    if (!head.test(lines[i] ?? "")) continue
    if (parts.length === 0) doc = jsdocAbove(lines, i)
    const end = declEnd(lines, i)
    parts.push(lines.slice(i, end).join("\n"))
    i = end - 1
  }
  return parts.length === 0 ? undefined : { doc, decl: parts.join("\n") }
}

/** The names `file` re-exports (`export { a, type B as C } from "x"`), each with the file and name it comes from. */
const reExports = (file: string) => {
  const out: Array<{ readonly name: string; readonly from: string; readonly as: string }> = []
  for (const m of read(file).matchAll(/^export (?:type )?\{([^}]*)\} from "([^"]+)";/gm)) {
    for (const part of (m[1] as string).split(",")) {
      const words = part
        .trim()
        .replace(/^type /, "")
        .split(/\s+as\s+/)
      if (words[0] === undefined || words[0] === "") continue
      out.push({ name: words[0], as: words[1] ?? words[0], from: target(file, m[2] as string) })
    }
  }
  return out
}

/** What `name` exported from `file` is: followed through re-exports. */
const resolveName = (file: string, name: string, depth = 0): Omit<Entry, "name"> => {
  const own = declarationIn(file, name)
  if (own !== undefined) return { doc: own.doc, decl: publicPart(own.decl), bases: inherited(file, own.decl) }
  const next = reExports(file).find((r) => r.as === name)
  if (next === undefined || depth > 5) return { doc: "", decl: `// ${name}: declaration not found` }
  return resolveName(next.from, next.name, depth + 1)
}

/** Where `file` imports `name` from (`import { type A, B } from "./x.ts"`), or undefined. */
const importOf = (file: string, name: string): string | undefined => {
  for (const m of read(file).matchAll(/^import (?:type )?\{([^}]*)\} from "(\.[^"]+)";/gm)) {
    const names = (m[1] as string).split(",").map((p) => p.trim().replace(/^type /, ""))
    if (names.includes(name)) return target(file, m[2] as string)
  }
  return undefined
}

/** A declaration as a reader needs it: private state, protected and `@internal` members left out. */
const publicPart = (decl: string): string =>
  decl
    .replace(/^\s*#private;\n/gm, "")
    .replace(/^\s*\/\*\* @internal[^\n]*\*\/\n[^\n]*\n/gm, "")
    .replace(/^\s*protected [^\n]*\n/gm, "")

/** The names in an `extends` clause: each base and what it wraps (`Omit<JobControl, "getJob">` → `JobControl`). */
const namesIn = (clause: string): Array<string> =>
  [...clause.replace(/"[^"]*"/g, "").matchAll(/\b[A-Za-z_]\w*\b/g)]
    .map((m) => m[0])
    .filter((n) => n !== "Omit" && n !== "Pick")

/** The declaration of `name` as `file` sees it: its own, or where it imports it from (followed through re-exports). */
const declarationSeen = (file: string, name: string): { from: string; decl: string } | undefined => {
  const own = declarationIn(file, name)
  if (own !== undefined) return { from: file, decl: own.decl }
  let from = importOf(file, name)
  for (let depth = 0; from !== undefined && depth < 5; depth++) {
    const found = declarationIn(from, name)
    if (found !== undefined) return { from, decl: found.decl }
    from = reExports(from).find((r) => r.as === name)?.from
  }
  return undefined
}

/**
 * The members a class or interface of `file` inherits from bases that are not exported
 * themselves (a base class, followed up its chain; the call groups of an interface merged
 * with the class, as `Queue`'s; the interfaces an interface extends, as the Effect
 * `Service`'s; and a base's type arguments, as `JobControlOf<PromiseFace<T, R>>`'s): each
 * base's declaration.
 */
const inherited = (file: string, decl: string, depth = 0): Array<{ base: string; decl: string }> => {
  const m = /^export declare (?:abstract )?class \w+(?:<[^{]*?>)? extends (\w+)/.exec(decl)
  // `export interface X<…> extends A, B<T> {}`: merged with a class, or an interface of its own
  const merged = /^export interface \w+(?:<[^{]*?>)? extends ([^{]+)\{/m.exec(decl)
  const bases = [m?.[1], ...(merged?.[1] === undefined ? [] : namesIn(merged[1]))]
  if (depth > 10) return []
  return [...new Set(bases)].flatMap((base) => {
    if (base === undefined) return []
    const found = declarationSeen(file, base)
    if (found === undefined) return []
    const body = publicPart(found.decl).replace(/^export declare /, "declare ")
    return [{ base, decl: body }, ...inherited(found.from, found.decl, depth + 1)]
  })
}

/** The module comment of a `.d.ts` (its first JSDoc block, when it says `@module`). */
const moduleDoc = (file: string): string => {
  const m = /^\/\*\*[\s\S]*?\*\//.exec(read(file))
  const block = m?.[0] ?? ""
  return block.includes("@module") ? docText(block) : ""
}

/** Every export of `file`: re-exports, `export * as` namespaces (their exports under `N.`), own declarations. */
const exportsOf = (file: string, prefix = ""): Entry[] => {
  const text = read(file)
  const out: Entry[] = []
  const seen = new Set<string>()
  const push = (name: string, r: Omit<Entry, "name">) => {
    // exported for leaseq's own faces only: not part of the API a user calls
    if (seen.has(name) || r.doc.startsWith("@internal")) return
    seen.add(name)
    out.push({ name: prefix + name, ...r })
  }
  for (const m of text.matchAll(/^export \* as (\w+) from "([^"]+)";/gm)) {
    const inner = target(file, m[2] as string)
    const name = m[1] as string
    seen.add(name)
    out.push({ name: prefix + name, doc: moduleDoc(inner), decl: `import { ${name} } from "…"  // a namespace` })
    out.push(...exportsOf(inner, `${prefix}${name}.`))
  }
  for (const r of reExports(file)) push(r.as, resolveName(r.from, r.name))
  for (const m of text.matchAll(
    /^export (?:declare )?(?:abstract )?(?:class|interface|type|const|let|function|enum|namespace) (\w+)/gm,
  ))
    push(m[1] as string, resolveName(file, m[1] as string))
  return out
}

/** An anchor for a heading (GitHub's: lower case, dots and spaces to nothing and dashes). */
const anchor = (name: string) => name.toLowerCase().replace(/[^a-z0-9 -]/g, "")

/** The page of one entry point. */
const page = (dts: string, entry: (typeof ENTRIES)[number]): string => {
  const file = join(dts, entry.file)
  const items = exportsOf(file)
  const lines = [
    `# \`${entry.spec}\``,
    "",
    "<!-- generated by `npm run docs:api` (tools/api-docs.ts) from the published declarations: do not edit -->",
    "",
    moduleDoc(file),
    "",
    `${items.length} exports: ${items.map((i) => `[${i.name}](#${anchor(i.name)})`).join(" · ")}`,
    "",
  ]
  for (const i of items) {
    lines.push(`## ${i.name}`, "")
    if (i.doc !== "") lines.push(i.doc, "")
    lines.push("```ts", i.decl.replace(/^ {4}/gm, "  "), "```", "")
    for (const b of i.bases ?? [])
      lines.push(`Inherited from \`${b.base}\`:`, "", "```ts", b.decl.replace(/^ {4}/gm, "  "), "```", "")
  }
  return `${lines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd()}\n`
}

/** The index page. */
const index = (): string =>
  [
    "# API reference",
    "",
    "<!-- generated by `npm run docs:api` (tools/api-docs.ts): do not edit -->",
    "",
    "Every export of each entry point, with its JSDoc and its declaration as the published",
    "`.d.ts` gives it. The guides start at the [README](../../README.md).",
    "",
    ...ENTRIES.map((e) => `- [\`${e.spec}\`](${e.page})`),
    "",
  ].join("\n")

/** Every page, by file name. */
export const apiPages = (): ReadonlyMap<string, string> => {
  const dts = emit()
  try {
    return new Map([["README.md", index()], ...ENTRIES.map((e) => [e.page, page(dts, e)] as const)])
  } finally {
    rmSync(dts, { recursive: true, force: true })
  }
}

if (import.meta.main) {
  const pages = apiPages()
  if (process.argv.includes("--check")) {
    const stale = [...pages].filter(
      ([f, text]) => !existsSync(join(OUT, f)) || readFileSync(join(OUT, f), "utf8") !== text,
    )
    if (stale.length > 0) {
      console.error(`docs/api is not current (${stale.map(([f]) => f).join(", ")}): run npm run docs:api`)
      process.exit(1)
    }
    console.log(`docs/api is current (${pages.size} pages)`)
  } else {
    mkdirSync(OUT, { recursive: true })
    for (const [f, text] of pages) writeFileSync(join(OUT, f), text)
    console.log(`wrote ${pages.size} pages to docs/api/`)
  }
}
