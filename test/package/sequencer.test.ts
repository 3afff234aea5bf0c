/**
 * test/support/sequencer.ts: on a fresh clone (no vitest cache) files start longest first by
 * test/support/durations.json, not largest first, so the small but long model test does not
 * start last and run alone; with a cache, the cache's times decide; projects stay apart.
 */
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import type { TestSpecification, Vitest } from "vitest/node"
import { LongestFirst } from "../support/sequencer.ts"

const ROOT = join(import.meta.dirname, "../..")
const FILES = ["test/scripts/scripts.test.ts", "test/model/model.test.ts", "test/package/doc-size.test.ts"]

/** Specs of `files` in one project, and a sequencer whose cache knows `cached` (ms per file). */
const setUp = (cached: Readonly<Record<string, number>>, project = "suite") => {
  const projectOf = { name: project, config: { isolate: true, sequence: { groupOrder: 0 } } }
  const specs = FILES.map((f) => ({ moduleId: join(ROOT, f), project: projectOf })) as unknown as TestSpecification[]
  const ctx = {
    config: { root: ROOT, shard: undefined },
    cache: {
      getTestSpecificationResult: (spec: TestSpecification) => {
        const ms = cached[spec.moduleId.slice(ROOT.length + 1)]
        return ms === undefined ? undefined : { duration: ms, failed: false }
      },
    },
  } as unknown as Vitest
  return { specs, sequencer: new LongestFirst(ctx) }
}
const names = (specs: TestSpecification[]) => specs.map((s) => s.moduleId.slice(ROOT.length + 1))

describe("the suite's file order", () => {
  it("without a cache: longest first by durations.json, so the 3 kB model test starts before the 21 kB scripts test it outlasts", async () => {
    const { specs, sequencer } = setUp({})
    expect(names(await sequencer.sort(specs))).toEqual([
      "test/model/model.test.ts",
      "test/scripts/scripts.test.ts",
      "test/package/doc-size.test.ts",
    ])
  })

  it("with a cache: the cache's times decide", async () => {
    const { specs, sequencer } = setUp({
      "test/scripts/scripts.test.ts": 1_000,
      "test/model/model.test.ts": 2_000,
      "test/package/doc-size.test.ts": 90_000,
    })
    expect(names(await sequencer.sort(specs))).toEqual([
      "test/package/doc-size.test.ts",
      "test/model/model.test.ts",
      "test/scripts/scripts.test.ts",
    ])
  })
})
