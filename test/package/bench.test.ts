/**
 * The bench's own logic, without running it: the command line, which scenarios
 * `--only` selects, the targets' verdicts, and the one-file-per-run naming of
 * bench/results/ (every committed record is named after its own content).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { FULL, parseConfig, QUICK, wanted } from "../../bench/config.ts"
import { RESULTS_DIR } from "../../bench/paths.ts"
import { newestResultFile, type RunResult, resultFileName } from "../../bench/report.ts"
import { SECTIONS } from "../../bench/scenarios/index.ts"
import { evaluateTargets, type Median, TARGETS } from "../../bench/targets.ts"
import { onCleanup } from "../support/cleanup.ts"

describe("bench command line", () => {
  it("defaults to the full run of all three libraries", () => {
    const c = parseConfig([])
    expect(c).toMatchObject({ mode: "full", quick: false, libs: ["leaseq", "bullmq", "beequeue"], partial: false })
    expect(c.sizes).toBe(FULL)
    expect(c.only).toBeUndefined()
  })

  it("takes --quick, --only prefixes and --libs in the order given, and marks the run partial", () => {
    const c = parseConfig(["--quick", "--only", "process.c1,pickup", "--libs", "bullmq,leaseq"])
    expect(c).toMatchObject({
      mode: "quick",
      libs: ["bullmq", "leaseq"],
      only: ["process.c1", "pickup"],
      partial: true,
    })
    expect(c.sizes).toBe(QUICK)
    expect(["process.c1", "process.c16", "process.c100", "pickup.p99"].filter((id) => wanted(c, id))).toHaveLength(4)
    expect(wanted(c, "add.seq")).toBe(false)
  })

  it("refuses an unknown library, naming it and the choices", () => {
    expect(() => parseConfig(["--libs", "leaseq,sidekiq"])).toThrow(
      "--libs: unknown library sidekiq; choose from leaseq, bullmq, beequeue",
    )
  })

  it("refuses an unknown flag and a flag without its list", () => {
    expect(() => parseConfig(["--quik"])).toThrow(/unknown argument "--quik"\. usage: node bench\/main\.ts/)
    expect(() => parseConfig(["--only"])).toThrow(/--only needs a comma-separated list/)
    expect(() => parseConfig(["--libs", "--quick"])).toThrow(/--libs needs a comma-separated list/)
  })

  it("has one registry entry per section, each with its own name", () => {
    const names = SECTIONS.map((s) => s.name)
    expect(names).toEqual([
      "add",
      "process",
      "pickup",
      "memory",
      "in flight / complete",
      "reclaim",
      "floor",
      "tracing",
      "batch",
      "groups",
      "priority",
      "flow",
    ])
  })
})

describe("bench targets", () => {
  const medians =
    (figures: Record<string, number>): Median =>
    (id, lib) =>
      figures[`${id}/${lib}`]
  const full = { healthy: 50_000, completeBig: 100_000 }
  const verdict = (figures: Record<string, number>, name: string) =>
    evaluateTargets(medians(figures), full).find((r) => r.name === name)

  it("every target has a unique name", () => {
    const names = TARGETS.map((t) => t.name)
    expect(new Set(names).size).toBe(names.length)
  })

  it("compares leaseq with BullMQ and decides on the ratio", () => {
    const met = verdict({ "process.c100/leaseq": 30_000, "process.c100/bullmq": 10_000 }, "process-c100-vs-bullmq")
    expect(met).toMatchObject({ ratio: 3, met: true, compares: "leaseq 30,000 vs BullMQ 10,000 jobs/s" })
    const missed = verdict({ "process.c100/leaseq": 29_900, "process.c100/bullmq": 10_000 }, "process-c100-vs-bullmq")
    expect(missed?.met).toBe(false)
  })

  it("orients a time so that faster leaseq is a ratio above 1", () => {
    const r = verdict({ "reclaim.20k/leaseq": 100, "reclaim.20k/bullmq": 2_500 }, "reclaim-20k-vs-bullmq")
    expect(r).toMatchObject({ ratio: 25, met: true, compares: "leaseq 100 vs BullMQ 2500 ms" })
  })

  it("checks a figure against a fixed limit: at most 10 ms, under 1 ms", () => {
    expect(verdict({ "reclaim.20k.maxcall/leaseq": 10 }, "reclaim-20k-longest-call")?.met).toBe(true)
    expect(verdict({ "reclaim.20k.maxcall/leaseq": 10.5 }, "reclaim-20k-longest-call")?.met).toBe(false)
    expect(verdict({ "healthy.50k.maxcall/leaseq": 0.4 }, "healthy-sweep-longest-call")?.met).toBe(true)
    expect(verdict({ "healthy.50k.maxcall/leaseq": 1 }, "healthy-sweep-longest-call")?.met).toBe(false)
  })

  it("says n/a, neither met nor missed, when a figure was not measured", () => {
    const r = verdict({ "process.c1/leaseq": 5_000 }, "process-c1-vs-bullmq")
    expect(r).toMatchObject({ ratio: undefined, met: undefined, compares: "n/a", measured: "n/a" })
  })

  it("names the size it used in quick mode", () => {
    const rows = evaluateTargets(medians({}), { healthy: 20_000, completeBig: 20_000 })
    expect(rows.find((r) => r.name === "complete-cost-at-size")?.what).toBe(
      "complete at 20k in flight (quick mode size; the target is at 100k)",
    )
  })
})

describe("bench results", () => {
  const record = (date: string, mode: "quick" | "full", extra: Partial<RunResult> = {}) => ({
    date,
    mode,
    machine: { commit: "abc1234", uncommittedEngineChanges: false },
    ...extra,
  })

  it("names a record after its date, mode, partial-ness, commit and dirty tree", () => {
    expect(resultFileName(record("2026-11-30T07:00:00.000Z", "full"))).toBe("2026-11-30-full-abc1234.json")
    const dirty = {
      ...record("2026-11-30T07:00:00.000Z", "quick"),
      partial: true,
      machine: { commit: "abc1234", uncommittedEngineChanges: true },
    }
    expect(resultFileName(dirty)).toBe("2026-11-30-quick-partial-abc1234-dirty.json")
    const tuned = (zsetMaxListpackEntries: number) => ({
      ...record("2026-11-30T07:00:00.000Z", "full"),
      machine: { commit: "abc1234", uncommittedEngineChanges: false, zsetMaxListpackEntries },
    })
    expect(resultFileName(tuned(128))).toBe("2026-11-30-full-abc1234.json")
    expect(resultFileName(tuned(16))).toBe("2026-11-30-full-abc1234-zset16.json")
  })

  it("every committed record is stored once, under the name its content gives", () => {
    const files = readdirSync(RESULTS_DIR).filter((f) => f.endsWith(".json") && !f.endsWith(".tmp.json"))
    expect(files.length).toBeGreaterThan(0)
    for (const f of files) {
      const r = JSON.parse(readFileSync(join(RESULTS_DIR, f), "utf8")) as RunResult
      expect(f).toBe(resultFileName(r))
    }
  })

  it("finds the newest full, complete record by the date inside it", () => {
    const dir = mkdtempSync(join(tmpdir(), "leaseq-bench-results-"))
    onCleanup(() => rmSync(dir, { recursive: true, force: true }))
    const put = (r: ReturnType<typeof record>) => writeFileSync(join(dir, resultFileName(r)), JSON.stringify(r))
    put(record("2026-11-29T10:00:00.000Z", "full"))
    put({ ...record("2026-11-30T09:00:00.000Z", "full"), machine: { commit: "b", uncommittedEngineChanges: false } })
    put({ ...record("2026-12-01T09:00:00.000Z", "full"), partial: true })
    put(record("2026-12-02T09:00:00.000Z", "quick"))
    expect(newestResultFile("full", dir)).toBe(join(dir, "2026-11-30-full-b.json"))
    expect(newestResultFile("quick", dir)).toBe(join(dir, "2026-12-02-quick-abc1234.json"))
  })
})
