/**
 * The order test files start in: the longest first, so that no long file starts last and
 * runs alone while the other workers idle. Vitest does that from its cache of earlier runs;
 * a fresh clone has none, and vitest then starts the largest files first, which put the
 * model test (a 3 kB file, ~25 s) at the end of a fresh-clone run. So a file without a
 * cached result takes its seconds from test/support/durations.json (`npm run test:slowest
 * -- --write` refreshes it); a file in neither goes by size, after the known ones.
 *
 * {@link SeededFiles} is the other order, for `TEST_SHUFFLE_FILES=1 vitest run
 * --sequence.seed=<n>` (vitest.config.ts): vitest's `--sequence.shuffle` shuffles files only
 * without a sequencer of the config's own. Files share worker processes (`isolate: false`),
 * so a file that leaves something behind shows as another file's failure in some order; the
 * seed replays one.
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

/** Each project's files in an order drawn from `--sequence.seed` (projects in vitest's order). */
export class SeededFiles extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return shuffled(await super.sort(files), String(this.ctx.config.sequence.seed), this.ctx.config.root)
  }
}

/** `specs` with each project's files in an order drawn from `seed` (a project's place kept). */
const shuffled = (specs: readonly TestSpecification[], seed: string, root: string): TestSpecification[] => {
  const draw = (id: string): number => {
    // FNV-1a of seed and path: the same seed gives the same order on any machine
    let h = 2166136261
    for (const ch of `${seed}:${id}`) h = Math.imul(h ^ (ch.codePointAt(0) as number), 16777619) >>> 0
    return h
  }
  const at = new Map(specs.map((spec, i) => [spec, i]))
  const projectAt = new Map<string, number>()
  for (const spec of specs)
    if (!projectAt.has(spec.project.name)) projectAt.set(spec.project.name, at.get(spec) as number)
  return [...specs].sort(
    (a, b) =>
      (projectAt.get(a.project.name) as number) - (projectAt.get(b.project.name) as number) ||
      draw(relative(root, a.moduleId)) - draw(relative(root, b.moduleId)),
  )
}
