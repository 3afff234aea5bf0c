/**
 * The order test files start in: the longest first, so that no long file starts last and
 * runs alone while the other workers idle. Vitest does that from its cache of earlier runs;
 * a fresh clone has none, and vitest then starts the largest files first, which put the
 * model test (a 3 kB file, ~25 s) at the end of a fresh-clone run. So a file without a
 * cached result takes its seconds from test/support/durations.json (`npm run test:slowest
 * -- --write` refreshes it); a file in neither goes by size, after the known ones.
 */
import { readFileSync } from "node:fs"
import { relative } from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"

const known: Readonly<Record<string, number>> = JSON.parse(
  readFileSync(new URL("./durations.json", import.meta.url), "utf8"),
) as Record<string, number>

/** Longest first: vitest's cache where it has the file, else durations.json; vitest's own order breaks ties. */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files)
    const cache = this.ctx.cache
    const seconds = (spec: TestSpecification): number | undefined => {
      const cached = cache.getTestSpecificationResult(spec)?.duration
      return cached !== undefined ? cached / 1000 : known[relative(this.ctx.config.root, spec.moduleId)]
    }
    const at = new Map(base.map((spec, i) => [spec, i]))
    return [...base].sort((a, b) => {
      // vitest runs projects one after another and non-isolated files last: keep that
      if (a.project.name !== b.project.name || a.project.config.isolate !== b.project.config.isolate)
        return (at.get(a) as number) - (at.get(b) as number)
      const [sa, sb] = [seconds(a), seconds(b)]
      if (sa !== undefined && sb !== undefined && sa !== sb) return sb - sa
      if (sa !== undefined && sb === undefined) return -1
      if (sa === undefined && sb !== undefined) return 1
      return (at.get(a) as number) - (at.get(b) as number)
    })
  }
}
