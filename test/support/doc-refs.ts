/**
 * Readers for what the user docs point at: the tests they cite (a path in backticks, then
 * quoted test names) and the links between docs (GitHub heading anchors). Used by
 * test/package/doc-citations.test.ts; plain text scanning, nothing imported or run.
 */

/** A piece of a test title that stands for anything (`${…}` in a template, `%s`/`$name` in `.each`). */
export const ANY = Symbol("any")
/** A test title as written: literal characters and {@link ANY} wildcards. */
export type Title = ReadonlyArray<string | typeof ANY>

const CALL = /\b(?:it|test|describe)((?:\.\w+)*)\s*(?=[<(])/g

/** Every `it(…)`/`test(…)`/`describe(…)` title of a test file's text (string or template literal). */
export const testTitles = (source: string): Title[] => {
  const titles: Title[] = []
  for (const m of source.matchAll(CALL)) {
    let i = afterGeneric(source, m.index + m[0].length)
    if (source[i] !== "(") continue
    i++
    // `it.each([...])("title", …)`: the title is in the second call
    if (m[1]?.includes(".each") || m[1]?.includes(".for")) i = afterParens(source, i - 1)
    while (/\s/.test(source[i] ?? "")) i++
    const lit = literal(source, i)
    if (lit === undefined) continue
    titles.push(m[1]?.includes(".each") ? eachHoles(lit) : lit)
  }
  return titles
}

/** Index just after a type argument list `<…>` at `at` (an `=>` inside it is no closing `>`), or `at`. */
const afterGeneric = (s: string, at: number): number => {
  if (s[at] !== "<") return at
  let depth = 0
  for (let i = at; i < s.length; i++) {
    if (s[i] === "<") depth++
    else if (s[i] === ">" && s[i - 1] !== "=" && --depth === 0) return i + 1
  }
  return s.length
}

const OPEN = new Set(["(", "[", "{"])
const CLOSE = new Set([")", "]", "}"])
const QUOTES = new Set(['"', "'", "`"])

/** Index just after the `(…)` group opening at `open` and the `(` that follows it, or -1. */
const afterParens = (s: string, open: number): number => {
  let depth = 0
  let i = open
  do {
    const c = s[i]!
    if (OPEN.has(c)) depth++
    else if (CLOSE.has(c)) depth--
    else if (QUOTES.has(c)) i = skipString(s, i)
    i++
  } while (depth > 0 && i < s.length)
  while (/\s/.test(s[i] ?? "")) i++
  return depth === 0 && s[i] === "(" ? i + 1 : -1
}

/** Index of the quote closing the string that opens at `at`. */
const skipString = (s: string, at: number): number => {
  const q = s[at]
  for (let i = at + 1; i < s.length; i++) {
    if (s[i] === "\\") i++
    else if (s[i] === q) return i
  }
  return s.length
}

/** Index of the `}` closing the `${` at `at`. */
const skipHole = (s: string, at: number): number => {
  let depth = 0
  for (let i = at + 1; i < s.length; i++) {
    if (s[i] === "{") depth++
    else if (s[i] === "}" && --depth === 0) return i
  }
  return s.length
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r" }

/** The string or template literal starting at `at`, escapes decoded, `${…}` as {@link ANY}. */
const literal = (s: string, at: number): Title | undefined => {
  const q = s[at]
  if (at < 0 || q === undefined || !QUOTES.has(q)) return undefined
  const out: Array<string | typeof ANY> = []
  for (let i = at + 1; i < s.length; i++) {
    const c = s[i]!
    if (c === q) return out
    if (c === "\\") {
      i++
      out.push(ESCAPES[s[i]!] ?? s[i]!)
    } else if (q === "`" && c === "$" && s[i + 1] === "{") {
      i = skipHole(s, i)
      out.push(ANY)
    } else out.push(c)
  }
  return undefined
}

/** `%s`, `%d`, … and `$name` of an `.each` title, each as {@link ANY}. */
const eachHoles = (title: Title): Title => {
  const out: Array<string | typeof ANY> = []
  for (let i = 0; i < title.length; i++) {
    const c = title[i]
    const next = title[i + 1]
    if (c === "%" && typeof next === "string" && /[sdifjo#]/.test(next)) {
      out.push(ANY)
      i++
    } else if (c === "$" && typeof next === "string" && /\w/.test(next)) {
      while (typeof title[i + 1] === "string" && /\w/.test(title[i + 1] as string)) i++
      out.push(ANY)
    } else out.push(c!)
  }
  return out
}

const GAP = Symbol("gap")

/**
 * Whether a test title can read as the cited name: the name is the title's start, with
 * `…` standing for any text, spaces next to it included (so `"K1: …"` and `"… exactly once"`
 * both cite), whitespace runs equal, and a title's wildcard equal to anything.
 */
export const titleMatches = (title: Title, cited: string): boolean => {
  const t = squash(title)
  const c: Array<string | typeof GAP> = [
    ...cited
      .replace(/\.\.\./g, "…")
      .replace(/\s*…\s*/g, "…")
      .replace(/\s+/g, " ")
      .trim(),
  ].map((ch) => (ch === "…" ? GAP : ch))
  c.push(GAP)
  const seen = new Map<number, boolean>()
  const go = (i: number, j: number): boolean => {
    const key = i * (c.length + 1) + j
    const known = seen.get(key)
    if (known !== undefined) return known
    let r: boolean
    if (j === c.length) r = i === t.length
    else if (c[j] === GAP) r = go(i, j + 1) || (i < t.length && go(i + 1, j))
    else if (i < t.length && t[i] === ANY) r = go(i + 1, j) || go(i, j + 1)
    else r = i < t.length && t[i] === c[j] && go(i + 1, j + 1)
    seen.set(key, r)
    return r
  }
  return go(0, 0)
}

/** A title with each whitespace run as one space, trimmed. */
const squash = (title: Title): Title => {
  const out: Array<string | typeof ANY> = []
  for (const ch of title) {
    const c = typeof ch === "string" && /\s/.test(ch) ? " " : ch
    if (c === " " && (out.length === 0 || out.at(-1) === " ")) continue
    out.push(c)
  }
  if (out.at(-1) === " ") out.pop()
  return out
}

/** A test cited by a doc: the file, the names quoted after it, and the `-t` filter of a command naming it. */
export interface Citation {
  readonly line: number
  readonly path: string
  readonly names: ReadonlyArray<string>
  readonly filter?: string | undefined
}

const TEST_PATH = /\btest\/[\w-]+(?:\/[\w.-]+)*\.test\.ts\b/g

/** A doc's text with each fenced code block blanked (its lines kept, so line numbers hold). */
export const prose = (md: string): string =>
  md.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ""))

const lineOf = (text: string, at: number): number => text.slice(0, at).split("\n").length

/** Every test file a doc names, anywhere in it (code blocks and HTML comments included). */
export const citedPaths = (md: string): Array<{ line: number; path: string }> =>
  [...md.matchAll(TEST_PATH)].map((m) => ({ line: lineOf(md, m.index), path: m[0] }))

/**
 * The doc's citations: a backticked span naming a test file, then quoted names
 * (`"a", "b" (two), "c"`, optionally in parentheses); `same file, "x"` cites the file cited last.
 */
export const citations = (md: string): Citation[] => {
  const text = prose(md)
  const out: Citation[] = []
  let last: string | undefined
  for (const m of text.matchAll(/`([^`]+)`|\bsame file\b,?/g)) {
    const path = m[1] === undefined ? last : m[1].match(TEST_PATH)?.[0]
    if (path === undefined) continue
    last = path
    const filter = m[1]?.match(/\s-t\s+(\S+)/)?.[1]
    out.push({ line: lineOf(text, m.index), path, names: quotedAfter(text, m.index + m[0].length), filter })
  }
  return out
}

/** The quoted names just after `at`: `"a"`, `("a")`, `"a" (two), "b"`. */
const quotedAfter = (text: string, at: number): string[] => {
  const names: string[] = []
  let rest = text.slice(at)
  let m = rest.match(/^\s*\(?\s*"([^"]*)"/)
  while (m) {
    names.push(m[1]!.replace(/\s+/g, " ").trim())
    rest = rest.slice(m[0].length).replace(/^\s*\([^()"\n]*\)/, "")
    m = rest.match(/^\s*,\s*"([^"]*)"/)
  }
  return names
}

/** A relative link of a doc: `[x](other.md#anchor)`, `[x](#anchor)`, `![x](y.png)`. */
export interface Link {
  readonly line: number
  readonly file: string
  readonly anchor?: string | undefined
}

/** The doc's relative links (code blocks and inline code left out; URLs with a scheme skipped). */
export const links = (md: string): Link[] => {
  const text = prose(md).replace(/`[^`\n]*`/g, (code) => code.replace(/[^\n]/g, " "))
  const out: Link[] = []
  for (const m of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1]!
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue
    const [file, anchor] = target.split("#", 2) as [string, string | undefined]
    out.push({ line: lineOf(text, m.index), file: decodeURI(file), anchor })
  }
  return out
}

/** The anchors GitHub gives a doc's headings (`-1`, `-2` for repeats), plus explicit `<a id|name>`. */
export const anchors = (md: string): Set<string> => {
  const text = prose(md)
  const count = new Map<string, number>()
  const out = new Set<string>()
  for (const m of text.matchAll(/^#{1,6}[ \t]+(.*?)[ \t#]*$/gm)) {
    const base = slug(m[1]!)
    const n = count.get(base) ?? 0
    count.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(m[1]!)
  return out
}

/** GitHub's heading slug: the rendered text lowercased, punctuation dropped, each space a `-`. */
export const slug = (heading: string): string =>
  heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, "")
    .replace(/ /g, "-")
