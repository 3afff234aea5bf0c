/**
 * What a run leaves behind: the JSON record in bench/results/ (one file per
 * run, named after its date, mode and commit), the markdown table and the
 * headline it prints. The SVG chart is bench/chart.ts.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { BenchConfig, Sizes } from "./config.ts"
import type { BenchContext, Machine } from "./context.ts"
import { fmt, max, median, min } from "./lib/stats.ts"
import { RESULTS_DIR } from "./paths.ts"
import type { Cell, Results, ScenarioResult } from "./results.ts"
import { evaluateTargets, type TargetRow } from "./targets.ts"

/** The JSON record of one run. */
export interface RunResult {
  /** ISO time the run finished. */
  readonly date: string
  readonly mode: BenchConfig["mode"]
  /** `--only` or `--libs` narrowed the run (absent in records written before this field existed: false). */
  readonly partial?: boolean
  readonly seconds: number
  readonly sectionSeconds: Record<string, number>
  readonly loadAverage1mAtEnd: number
  readonly machine: Machine
  /** The sizes used (bench/config.ts). */
  readonly config: Sizes
  /** Per library asked for: "measured" or why not. */
  readonly libraries: Record<string, string>
  readonly scenarios: ReadonlyArray<ScenarioResult>
  readonly ratiosVsBullmq: Record<string, number | null>
  readonly ratiosVsBeequeue: Record<string, number | null>
  readonly targets: ReadonlyArray<TargetRow>
  readonly headline: string
}

const times = (r: number | undefined): string => (r === undefined ? "n/a" : `${r >= 10 ? r.toFixed(0) : r.toFixed(1)}x`)

/** The headline scenarios, in the order they are printed, with their short labels. */
const headlineIds = (sizes: Sizes): [string, string][] => {
  const big = sizes.completeInFlight.filter((n) => n >= 20_000).map((n) => `${n / 1000}k`)
  return [
    ["process.c100", "process c100"],
    ["process.c16", "c16"],
    ["process.c1", "c1"],
    ["add.bulk100", "bulk add"],
    ["add.c64", "add c64"],
    ["add.seq", "add seq"],
    ["pickup.p99", "pickup p99"],
    ...sizes.reclaim.map((n): [string, string] => [`reclaim.${n / 1000}k`, `reclaim ${n / 1000}k`]),
    ...big.map((k): [string, string] => [`healthy.${k}.maxcall`, `healthy ${k} sweep`]),
    ...big.map((k): [string, string] => [`complete.${k}`, `complete at ${k}`]),
    ["memory.waiting", "memory/job"],
  ]
}

/** One line: leaseq against BullMQ on the scenarios that matter most, and against the Redis floor. */
export const headline = (ctx: BenchContext): string => {
  const why = ctx.unavailable.get("leaseq")
  if (why) return `headline: leaseq not measured (${why}); peers only — see the table above`
  const r = ctx.results
  const parts: string[] = []
  for (const [id, label] of headlineIds(ctx.config.sizes)) {
    if (!r.all.some((s) => s.id === id)) continue
    parts.push(`${label} ${times(r.ratio(id, "bullmq"))}${parts.length === 0 ? " bullmq" : ""}`)
  }
  const c100 = r.median("process.c100", "leaseq")
  const floor = r.median("floor.process", "floor")
  const floorB = r.median("floor.process.batched", "floor")
  if (c100 !== undefined && floor !== undefined) {
    const batched = floorB !== undefined ? ` (${Math.round((100 * c100) / floorB)}% of batched floor)` : ""
    parts.push(`c100 = ${Math.round((100 * c100) / floor)}% of redis floor${batched}`)
  }
  return `headline: ${parts.join(", ")}`
}

const cellText = (c: Cell | undefined): string => {
  if (!c) return ""
  if (c.runs.length === 0) return c.na ? "n/a" : ""
  const m = median(c.runs)
  return c.runs.length > 1 ? `${fmt(m)} (${fmt(min(c.runs))}–${fmt(max(c.runs))})` : fmt(m)
}

/** Every scenario as a markdown row: median (min–max) per library, the floor, leaseq/BullMQ. */
export const table = (libs: BenchConfig["libs"], results: Results): string[] => {
  const head = ["scenario", "unit", ...libs, "floor", "leaseq/bullmq"]
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`]
  for (const s of results.all) {
    const cells = libs.map((l) => cellText(s.libs[l])).join(" | ")
    lines.push(`| ${s.title} | ${s.unit} | ${cells} | ${cellText(s.floor)} | ${times(results.ratio(s.id, "bullmq"))} |`)
  }
  return lines
}

/** The targets at the in-flight sizes this run used (quick mode: 20k). */
export const targetsOf = (ctx: BenchContext): TargetRow[] => {
  const inFlight = ctx.config.sizes.completeInFlight
  return evaluateTargets((id, lib) => ctx.results.median(id, lib), {
    healthy: inFlight.includes(50_000) ? 50_000 : (inFlight.at(-1) ?? 0),
    completeBig: inFlight.at(-1) ?? 0,
  })
}

const round = (x: number, places: number): number => Math.round(x * 10 ** places) / 10 ** places

/** The JSON record of a finished run (call `results.summarize()` first). */
export const buildResult = (
  ctx: BenchContext,
  run: { seconds: number; sectionSeconds: Record<string, number>; loadAtEnd: number },
): RunResult => {
  const r = ctx.results
  const ids = r.all.map((s) => s.id)
  return {
    date: new Date().toISOString(),
    mode: ctx.config.mode,
    partial: ctx.config.partial,
    seconds: run.seconds,
    sectionSeconds: run.sectionSeconds,
    loadAverage1mAtEnd: round(run.loadAtEnd, 2),
    machine: ctx.machine,
    config: ctx.config.sizes,
    libraries: Object.fromEntries(ctx.config.libs.map((l) => [l, ctx.unavailable.get(l) ?? "measured"])),
    scenarios: r.all,
    ratiosVsBullmq: Object.fromEntries(ids.map((id) => [id, r.ratio(id, "bullmq") ?? null])),
    ratiosVsBeequeue: Object.fromEntries(ids.map((id) => [id, r.ratio(id, "beequeue") ?? null])),
    targets: targetsOf(ctx),
    headline: headline(ctx),
  }
}

/**
 * `<date>-<mode>[-partial]-<commit>[-dirty].json`: one file per run, never
 * overwritten by a later run of other code. `-partial`: `--only`/`--libs`
 * narrowed the run; `-dirty`: src/ or lua/ had uncommitted changes.
 */
export const resultFileName = (
  result: Pick<RunResult, "date" | "mode" | "partial"> & {
    machine: Pick<Machine, "commit" | "uncommittedEngineChanges" | "zsetMaxListpackEntries">
  },
): string => {
  const partial = result.partial ? "-partial" : ""
  const dirty = result.machine.uncommittedEngineChanges ? "-dirty" : ""
  // a Redis tuned away from the default sorted-set encoding gets its own record
  const entries = result.machine.zsetMaxListpackEntries
  const zset = entries !== undefined && entries !== 128 ? `-zset${entries}` : ""
  return `${result.date.slice(0, 10)}-${result.mode}${partial}-${result.machine.commit}${dirty}${zset}.json`
}

/** Write the record to bench/results/; returns the path. */
export const writeResult = (result: RunResult): string => {
  mkdirSync(RESULTS_DIR, { recursive: true })
  const path = join(RESULTS_DIR, resultFileName(result))
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`)
  return path
}

/** The newest complete (not `-partial`) record of `mode` in bench/results/, by the date inside it. */
export const newestResultFile = (mode: BenchConfig["mode"], dir = RESULTS_DIR): string | undefined => {
  let best: { path: string; date: string } | undefined
  for (const f of readdirSync(dir)) {
    if (!f.endsWith(".json")) continue
    const path = join(dir, f)
    const r = JSON.parse(readFileSync(path, "utf8")) as Partial<RunResult>
    if (r.mode !== mode || r.partial === true || f.includes("-partial") || typeof r.date !== "string") continue
    if (!best || r.date > best.date) best = { path, date: r.date }
  }
  return best?.path
}
