/**
 * The results of one run: every scenario, per library its runs (one figure per
 * repetition) and why it was not measured, the Redis floor where there is one.
 * Scenarios record through this model; the report (bench/report.ts) reads it.
 */
import type { LibName } from "./adapters/types.ts"
import { fmt, max, median, min } from "./lib/stats.ts"

/** One library's figures on one scenario. */
export interface Cell {
  runs: number[]
  median?: number
  min?: number
  max?: number
  /** Why there is no figure (the library lacks the feature, or a run failed). */
  na?: string
  /** Per run: the side figures printed next to it (CPU per job, commands per job, …). */
  extra: Record<string, unknown>[]
}

export interface ScenarioResult {
  /** Stable id, `<family>.<variant>` (`process.c100`, `reclaim.20k.maxcall`); `--only` matches its prefix. */
  id: string
  title: string
  unit: string
  better: "higher" | "lower"
  note?: string
  libs: Partial<Record<LibName, Cell>>
  floor?: Cell
}

export type Extra = Record<string, unknown>

/** Where figures go while a run records them. */
export interface Results {
  /** The scenario with this id, made (and listed, in order) on first use. */
  scenario(id: string, title: string, unit: string, better: "higher" | "lower", note?: string): ScenarioResult
  /** Add one run's figure for `lib`, and print it. */
  record(s: ScenarioResult, lib: LibName, value: number, extra?: Extra): void
  /** Add one run of the Redis floor (no library). */
  recordFloor(s: ScenarioResult, value: number): void
  /** Say why `lib` has no figure on `s` (printed once). */
  markNa(s: ScenarioResult, lib: LibName, reason: string): void
  /** Every scenario recorded so far, in the order they were made. */
  readonly all: ReadonlyArray<ScenarioResult>
  /** The median of a library's (or the floor's) runs; undefined when there are none. */
  median(id: string, lib: LibName | "floor"): number | undefined
  /** How many times better leaseq is than `peer` on `id` (> 1: leaseq better); undefined when either is missing. */
  ratio(id: string, peer: LibName | "floor"): number | undefined
  /** Fill in median/min/max of every cell, for the JSON. */
  summarize(): void
}

const extraText = (e: Extra): string => {
  const parts = Object.entries(e)
    .filter(([, v]) => typeof v === "number" || typeof v === "string")
    .map(([k, v]) => `${k}=${typeof v === "number" ? fmt(v) : v}`)
  return parts.length ? `  (${parts.join(", ")})` : ""
}

const summarizeCell = (c: Cell | undefined): void => {
  if (!c || c.runs.length === 0) return
  c.median = median(c.runs)
  c.min = min(c.runs)
  c.max = max(c.runs)
}

/** A fresh, empty results model that prints each figure with `log` as it is recorded. */
export const makeResults = (log: (line: string) => void): Results => {
  const scenarios: ScenarioResult[] = []
  const byId = (id: string) => scenarios.find((x) => x.id === id)
  const cellOf = (s: ScenarioResult, lib: LibName): Cell => {
    let c = s.libs[lib]
    if (!c) {
      c = { runs: [], extra: [] }
      s.libs[lib] = c
    }
    return c
  }
  const medianOf: Results["median"] = (id, lib) => {
    const s = byId(id)
    const c = lib === "floor" ? s?.floor : s?.libs[lib]
    return c && c.runs.length > 0 ? median(c.runs) : undefined
  }
  return {
    all: scenarios,
    scenario(id, title, unit, better, note) {
      let s = byId(id)
      if (!s) {
        s = { id, title, unit, better, libs: {}, ...(note ? { note } : {}) }
        scenarios.push(s)
      }
      return s
    },
    record(s, lib, value, extra = {}) {
      const c = cellOf(s, lib)
      c.runs.push(value)
      c.extra.push(extra)
      log(`  ${s.id.padEnd(22)} ${lib.padEnd(9)} ${fmt(value).padStart(10)} ${s.unit}${extraText(extra)}`)
    },
    recordFloor(s, value) {
      s.floor ??= { runs: [], extra: [] }
      s.floor.runs.push(value)
      log(`  ${s.id.padEnd(22)} ${"floor".padEnd(9)} ${fmt(value).padStart(10)} ${s.unit}`)
    },
    markNa(s, lib, reason) {
      const c = cellOf(s, lib)
      if (!c.na) {
        c.na = reason
        log(`  ${s.id.padEnd(22)} ${lib.padEnd(9)}        n/a (${reason})`)
      }
    },
    median: medianOf,
    ratio(id, peer) {
      const s = byId(id)
      const l = medianOf(id, "leaseq")
      const p = medianOf(id, peer)
      if (!s || l === undefined || p === undefined || l <= 0 || p <= 0) return undefined
      return s.better === "higher" ? l / p : p / l
    },
    summarize() {
      for (const s of scenarios) {
        for (const c of Object.values(s.libs)) summarizeCell(c)
        summarizeCell(s.floor)
      }
    },
  }
}
