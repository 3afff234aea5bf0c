/**
 * The user docs stay short: README.md and docs/*.md less docs/architecture.md (the
 * contributors' map) are counted in words as `wc -w` counts them (runs of non-space). A new
 * feature's doc has to make room (cut repetition, move history to bench/HISTORY.md), not
 * just add; these are the bounds the docs were cut to.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = resolve(import.meta.dirname, "../..")
const userDocs = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md") && f !== "architecture.md")
    .map((f) => `docs/${f}`),
]
const words = (file: string): number => readFileSync(join(ROOT, file), "utf8").split(/\s+/).filter(Boolean).length
const counts = new Map(userDocs.map((f) => [f, words(f)]))

describe("the user docs' length", () => {
  it("all of them: under 20,000 words", () => {
    const total = [...counts.values()].reduce((a, b) => a + b, 0)
    expect(total).toBeLessThan(20_000)
  })

  it("no user doc over 3,000 words", () => {
    expect([...counts].filter(([, n]) => n > 3_000)).toEqual([])
  })

  it("README under 1,000, performance.md under 1,500, reliability.md under 2,500", () => {
    expect(counts.get("README.md")).toBeLessThan(1_000)
    expect(counts.get("docs/performance.md")).toBeLessThan(1_500)
    expect(counts.get("docs/reliability.md")).toBeLessThan(2_500)
  })
})
