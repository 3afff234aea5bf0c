/**
 * The user docs' pointers cannot rot. README.md and docs/*.md cite tests the way
 * docs/reliability.md does — a path in backticks, then quoted test names, each the start of
 * an `it`/`describe` title (`…` standing for elided text) — and link each other by heading
 * anchor. Here every cited test file must exist, every quoted name must be the start of a
 * title in that file (read from its text by test/support/doc-refs.ts, not imported), a `-t`
 * filter in a command must match a title, and every relative link must reach a file and,
 * for a `.md`, one of its GitHub heading anchors. So a renamed test or heading fails here.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import {
  ANY,
  anchors,
  citations,
  citedPaths,
  type Link,
  links,
  slug,
  testTitles,
  titleMatches,
} from "../support/doc-refs.ts"

const ROOT = resolve(import.meta.dirname, "../..")
const docs = ["README.md", ...readdirSync(join(ROOT, "docs")).map((f) => `docs/${f}`)].filter((f) => f.endsWith(".md"))
const read = (f: string): string => readFileSync(join(ROOT, f), "utf8")

const titlesOf = new Map<string, ReturnType<typeof testTitles>>()
const titles = (path: string) => {
  if (!titlesOf.has(path)) titlesOf.set(path, testTitles(read(path)))
  return titlesOf.get(path)!
}
/** The cited names that no title of the file starts with, as `doc:line path "name"`. */
const unmatched = (doc: string, md: string): string[] =>
  citations(md).flatMap((c) => {
    if (!existsSync(join(ROOT, c.path))) return []
    const ts = titles(c.path)
    const bad = c.names.filter((n) => !ts.some((t) => titleMatches(t, n))).map((n) => `"${n}"`)
    const joined = ts.map((t) => t.map((ch) => (ch === ANY ? "" : ch)).join(""))
    if (c.filter !== undefined && !joined.some((t) => new RegExp(c.filter!).test(t))) bad.push(`-t ${c.filter}`)
    return bad.map((b) => `${doc}:${c.line} ${c.path} ${b}`)
  })

/** What is wrong with a link of `doc`, if anything, as `doc:line target (why)`. */
const brokenLink = (doc: string, l: Link): string[] => {
  const target = l.file === "" ? doc : relative(ROOT, resolve(ROOT, dirname(doc), l.file))
  if (!existsSync(join(ROOT, target))) return [`${doc}:${l.line} ${l.file} (no such file)`]
  if (l.anchor === undefined || !target.endsWith(".md")) return []
  return anchors(read(target)).has(l.anchor) ? [] : [`${doc}:${l.line} ${l.file}#${l.anchor} (no such heading)`]
}

describe("doc citations", () => {
  it("the docs cite tests, and every cited test file exists", () => {
    const cited = docs.flatMap((doc) => citedPaths(read(doc)).map((c) => ({ ...c, doc })))
    expect(cited.length).toBeGreaterThan(50)
    expect(cited.filter((c) => !existsSync(join(ROOT, c.path))).map((c) => `${c.doc}:${c.line} ${c.path}`)).toEqual([])
  })

  it("every quoted test name is the start of a test title in the cited file", () => {
    const named = docs.flatMap((doc) => citations(read(doc)).flatMap((c) => c.names))
    expect(named.length).toBeGreaterThan(50)
    expect(docs.flatMap((doc) => unmatched(doc, read(doc)))).toEqual([])
  })

  it("a made-up name, a made-up file and a filter matching nothing are each caught", () => {
    const md = [
      '| x | y | `test/reliability/poison.test.ts` "a job that kills its worker …" |',
      '| x | y | same file, "a job nobody wrote …" |',
      '`test/reliability/no-such.test.ts` "anything"',
      "`npx vitest run test/reliability/poison.test.ts -t nothing-called-this`",
    ].join("\n")
    expect(unmatched("fixture.md", md)).toEqual([
      'fixture.md:2 test/reliability/poison.test.ts "a job nobody wrote …"',
      "fixture.md:4 test/reliability/poison.test.ts -t nothing-called-this",
    ])
    expect(citedPaths(md).filter((c) => !existsSync(join(ROOT, c.path)))).toEqual([
      { line: 3, path: "test/reliability/no-such.test.ts" },
    ])
  })

  it("reads titles as written: templates, escaped quotes, .each holes, elisions", () => {
    const src = [
      'it("plain \\"quoted\\" title", () => {})',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the test file's text, a template title
      "describe(`K1: ${n} jobs at once`, () => {})",
      "it.each([[1], [2]])('runs %s times, on the $path path', () => {})",
      "test.skip('it\\'s here', () => {})",
      'it.each<[string, new (...args: never[]) => Error]>([])("typed %s", () => {})',
    ].join("\n")
    const ts = testTitles(src)
    expect(ts).toHaveLength(5)
    const hit = (name: string) => ts.some((t) => titleMatches(t, name))
    for (const name of [
      'plain "quoted" …',
      "K1: …",
      "K1: 500 jobs at …",
      "… jobs at once",
      "runs 3 times, on the",
      "it's here",
      "typed x",
    ])
      expect(hit(name), name).toBe(true)
    for (const name of ["plain quoted", "K2: …", "jobs at once", "times, on", "it's here and more"])
      expect(hit(name), name).toBe(false)
  })
})

describe("doc links", () => {
  it("every relative link reaches a file, and a .md link's anchor one of its headings", () => {
    expect(docs.flatMap((doc) => links(read(doc)).flatMap((l) => brokenLink(doc, l)))).toEqual([])
  })

  it("slugs headings as GitHub does", () => {
    expect(slug("### `maxmemory-policy noeviction`")).toBe("-maxmemory-policy-noeviction")
    expect(slug("When Redis does not answer: `callTimeoutMs`")).toBe("when-redis-does-not-answer-calltimeoutms")
    expect(slug("Keys, re-sent calls, wake-up: the detail")).toBe("keys-re-sent-calls-wake-up-the-detail")
    expect([...anchors("# A\n\n## Same\n\n```\n# not a heading\n```\n\n## Same\n")]).toEqual(["a", "same", "same-1"])
  })
})
