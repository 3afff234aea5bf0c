/**
 * Issue 34: a reader who copies a snippet that is cut from a runnable example (a region, or
 * an excerpt) must be able to find the whole file: every page that cuts from an example links
 * to it where it can be read (`[examples/x.ts](examples/x.ts)`; from the README,
 * `docs/examples/x.ts`). A block that is a whole example is complete as it stands.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = resolve(import.meta.dirname, "../..")
const pages = ["README.md", ...readdirSync(join(ROOT, "docs")).flatMap((f) => (f.endsWith(".md") ? [`docs/${f}`] : []))]

/** The example files a page's snippets are cut from (region markers and excerpts). */
const cutFrom = (text: string): ReadonlySet<string> =>
  new Set([
    ...[...text.matchAll(/<!-- example: docs\/examples\/([\w.-]+\.ts)#/g)].map((m) => m[1] as string),
    ...[...text.matchAll(/<!-- excerpt: docs\/examples\/([\w.-]+\.ts)/g)].map((m) => m[1] as string),
  ])

describe("snippets cut from an example link to it", () => {
  it("every page links to each example its snippets are cut from", () => {
    const missing = pages.flatMap((page) => {
      const text = readFileSync(join(ROOT, page), "utf8")
      const base = page === "README.md" ? "docs/examples/" : "examples/"
      return [...cutFrom(text)].filter((f) => !text.includes(`](${base}${f})`)).map((f) => `${page}: ${f}`)
    })
    expect(missing).toEqual([])
  })

  it("finds the cuts it checks (the test would pass on nothing otherwise)", () => {
    expect(cutFrom(readFileSync(join(ROOT, "docs/jobs.md"), "utf8")).size).toBeGreaterThan(3)
  })
})
