/**
 * The suite's per-file durations: `npm run test:slowest [report.json…] [--top N] [--write]`.
 *
 * Reads vitest JSON reports (`vitest run --reporter=json --outputFile=.tmp/vitest-report.json`,
 * the default path) and prints the slowest files as the table CONTRIBUTING.md shows ("Where
 * the time goes"). Without a report it reads vitest's cache of this checkout's last runs
 * (node_modules/.vite/vitest/…/results.json: each file's time in the run that last ran it).
 *
 * `--write` stores every file's seconds in test/support/durations.json, which the suite's
 * sequencer (test/support/sequencer.ts) uses on a fresh clone, where vitest has no cache
 * and would start the largest files first: a small file that takes 25 s (the model test)
 * then starts last and runs alone at the end.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, relative, resolve } from "node:path"

const ROOT = resolve(import.meta.dirname, "..")
const DURATIONS = join(ROOT, "test/support/durations.json")
const DEFAULT_REPORT = join(ROOT, ".tmp/vitest-report.json")

/** A vitest JSON report, the part read here. */
interface Report {
  readonly testResults: ReadonlyArray<{
    readonly name: string
    readonly startTime: number
    readonly endTime: number
    readonly assertionResults: ReadonlyArray<unknown>
  }>
}

/** Each test file's seconds and test count (count undefined when the source does not say). */
type Durations = Map<string, { seconds: number; tests: number | undefined }>

/** A test file's path in the repo, also for a report written by another checkout (a fresh clone). */
const repoPath = (name: string): string => {
  const rel = relative(ROOT, name)
  if (!rel.startsWith("..")) return rel
  const at = name.lastIndexOf("/test/")
  return at >= 0 ? name.slice(at + 1) : rel
}

const fromReports = (paths: readonly string[]): Durations => {
  const out: Durations = new Map()
  for (const path of paths) {
    const report = JSON.parse(readFileSync(path, "utf8")) as Report
    for (const r of report.testResults)
      out.set(repoPath(r.name), { seconds: (r.endTime - r.startTime) / 1000, tests: r.assertionResults.length })
  }
  return out
}

const fromCache = (): Durations => {
  const dir = join(ROOT, "node_modules/.vite/vitest")
  const out: Durations = new Map()
  if (!existsSync(dir)) return out
  for (const hash of readdirSync(dir)) {
    const path = join(dir, hash, "results.json")
    if (!existsSync(path)) continue
    const cache = JSON.parse(readFileSync(path, "utf8")) as {
      projects: Record<string, { files: Record<string, { duration?: number }> }>
    }
    for (const project of Object.values(cache.projects))
      for (const [file, r] of Object.entries(project.files))
        if (r.duration !== undefined && existsSync(join(ROOT, file)))
          out.set(file, { seconds: r.duration / 1000, tests: undefined })
  }
  return out
}

const args = process.argv.slice(2)
const topAt = args.indexOf("--top")
const top = topAt >= 0 ? Number(args[topAt + 1]) : 10
const reports = args.filter((a, i) => !a.startsWith("--") && (topAt < 0 || i !== topAt + 1))
const paths = reports.length > 0 ? reports : existsSync(DEFAULT_REPORT) ? [DEFAULT_REPORT] : []
const durations = paths.length > 0 ? fromReports(paths) : fromCache()
if (durations.size === 0) {
  console.error(
    "no durations: run `npx vitest run --reporter=json --outputFile=.tmp/vitest-report.json` first, or name a report",
  )
  process.exit(1)
}

const sorted = [...durations].sort((a, b) => b[1].seconds - a[1].seconds)
const total = sorted.reduce((s, [, d]) => s + d.seconds, 0)
const slowest = sorted.slice(0, top)
const share = slowest.reduce((s, [, d]) => s + d.seconds, 0) / total
const source = paths.length === 0 ? "vitest's cache" : paths.length > 2 ? `${paths.length} reports` : paths.join(", ")
console.log(
  `${durations.size} files, ${total.toFixed(0)} s in all (from ${source}); the ${top} slowest are ${Math.round(share * 100)} %:`,
)
console.log("| file | tests | s |\n|---|---|---|")
for (const [file, d] of slowest) console.log(`| ${file} | ${d.tests ?? "?"} | ${d.seconds.toFixed(0)} |`)

if (args.includes("--write")) {
  const seconds = Object.fromEntries(sorted.map(([file, d]) => [file, Math.round(d.seconds * 10) / 10]))
  writeFileSync(DURATIONS, `${JSON.stringify(seconds, null, 2)}\n`)
  console.log(`wrote ${relative(process.cwd(), DURATIONS)}`)
}
