/**
 * leaseq's performance targets, checked against one run's medians. Each target
 * is named after what it measures and compares two figures of the same run
 * (leaseq and a peer, leaseq and the Redis floor, leaseq at two sizes) or one
 * figure and a fixed limit; the ratio of the two decides met or missed.
 * In quick mode the in-flight sizes are smaller (20k instead of 50k/100k): the
 * row says which size it used.
 */

/** Median of a scenario for a library (or the floor); undefined when not measured. */
export type Median = (id: string, lib: "leaseq" | "bullmq" | "beequeue" | "floor") => number | undefined

/** The in-flight sizes this run used for the targets that depend on one. */
export interface TargetSizes {
  /** In-flight jobs of the healthy-sweep target (50k in the full run). */
  readonly healthy: number
  /** In-flight jobs of the complete-cost target (100k in the full run). */
  readonly completeBig: number
}

export interface TargetRow {
  /** Stable name: what is measured, against what (`process-c100-vs-bullmq`). */
  readonly name: string
  readonly what: string
  /** The goal, e.g. `≥ 3× BullMQ`. */
  readonly target: string
  /** The two figures compared, e.g. `leaseq 25,779 vs BullMQ 7,241 jobs/s`; "n/a" when one is missing. */
  readonly compares: string
  /** The ratio the goal is about (figure ÷ the figure or limit it is compared with); undefined when not measured. */
  readonly ratio: number | undefined
  /** The ratio as printed, e.g. `3.56×`. */
  readonly measured: string
  /** undefined when a figure is missing (leaseq or the peer not measured). */
  readonly met: boolean | undefined
}

/** One figure against another; `ratio` = `a / b`. */
interface Comparison {
  readonly a: number
  readonly b: number
  /** How to print the two figures. */
  readonly text: (a: number, b: number) => string
}

interface TargetDef {
  readonly name: string
  readonly what: (s: TargetSizes) => string
  readonly target: string
  /** The comparison is met when `a / b` is at least / at most / below `bound`. */
  readonly bound: { readonly op: "≥" | "≤" | "<"; readonly value: number }
  readonly compare: (med: Median, s: TargetSizes) => Comparison | undefined
}

const f1 = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2))
const n0 = (x: number): string => Math.round(x).toLocaleString("en-US")
const k = (n: number): string => `${n / 1000}k`

/** Both figures or nothing: a comparison needs two measured figures, the second one positive. */
const pair = (a: number | undefined, b: number | undefined, text: Comparison["text"]): Comparison | undefined =>
  a === undefined || b === undefined || a < 0 || b <= 0 ? undefined : { a, b, text }

/** leaseq against BullMQ on one scenario, oriented so that > 1 means leaseq is better. */
const vsBullmq =
  (id: string, unit: string, better: "higher" | "lower") =>
  (med: Median): Comparison | undefined => {
    const l = med(id, "leaseq")
    const b = med(id, "bullmq")
    const show = better === "higher" ? n0 : f1
    const text = (lq: number, bq: number) => `leaseq ${show(lq)} vs BullMQ ${show(bq)} ${unit}`
    // oriented so that the ratio is > 1 when leaseq is better: fewer ms means BullMQ's figure on top
    return better === "higher" ? pair(l, b, text) : pair(b, l, (bq, lq) => text(lq, bq))
  }

/** A leaseq figure against a fixed limit. */
const underLimit =
  (id: (s: TargetSizes) => string, limit: number, unit: string) =>
  (med: Median, s: TargetSizes): Comparison | undefined =>
    pair(med(id(s), "leaseq"), limit, (x, y) => `leaseq ${f1(x)} ${unit} vs a limit of ${y} ${unit}`)

const quickNote = (used: number, full: number): string =>
  used !== full ? ` (quick mode size; the target is at ${k(full)})` : ""

export const TARGETS: ReadonlyArray<TargetDef> = [
  ...(
    [
      ["process-c100-vs-bullmq", "process, concurrency 100", "process.c100", 3],
      ["process-c16-vs-bullmq", "process, concurrency 16", "process.c16", 2.5],
      ["process-c1-vs-bullmq", "process, concurrency 1", "process.c1", 1.3],
      ["bulk-add-vs-bullmq", "bulk add", "add.bulk100", 1.5],
    ] as const
  ).map(
    ([name, what, id, min]): TargetDef => ({
      name,
      what: () => what,
      target: `≥ ${min}× BullMQ`,
      bound: { op: "≥", value: min },
      compare: vsBullmq(id, "jobs/s", "higher"),
    }),
  ),
  {
    name: "reclaim-20k-vs-bullmq",
    what: () => "reclaim 20,000 expired leases, total time",
    target: "≥ 20× faster than BullMQ",
    bound: { op: "≥", value: 20 },
    compare: vsBullmq("reclaim.20k", "ms", "lower"),
  },
  {
    name: "flow-rate-limit-1000-jobs",
    what: () => "rate limit 100 per 1000 ms: 1,000 jobs over 4 workers at concurrency 20",
    target: "≤ 10.5 s (10 windows: 9 s is the floor)",
    bound: { op: "≤", value: 1 },
    compare: underLimit(() => "flow.rate", 10.5, "s"),
  },
  {
    name: "reclaim-20k-longest-call",
    what: () => "reclaim 20,000 expired leases, longest single Redis call",
    target: "≤ 10 ms",
    bound: { op: "≤", value: 1 },
    compare: underLimit(() => "reclaim.20k.maxcall", 10, "ms"),
  },
  {
    name: "healthy-sweep-longest-call",
    what: (s) => `sweep with nothing expired, ${k(s.healthy)} in flight${quickNote(s.healthy, 50_000)}`,
    target: "under 1 ms in Redis (the sweep call)",
    bound: { op: "<", value: 1 },
    compare: underLimit((s) => `healthy.${k(s.healthy)}.maxcall`, 1, "ms"),
  },
  {
    name: "complete-cost-at-size",
    what: (s) => `complete at ${k(s.completeBig)} in flight${quickNote(s.completeBig, 100_000)}`,
    target: "within 1.2× of its cost at 1,000",
    bound: { op: "≤", value: 1.2 },
    compare: (med, s) =>
      pair(
        med(`complete.${k(s.completeBig)}`, "leaseq"),
        med("complete.1k", "leaseq"),
        (x, y) => `${f1(x)} µs vs ${f1(y)} µs of Redis time per completion`,
      ),
  },
  {
    name: "memory-per-job-vs-bullmq",
    what: () => "Redis memory per waiting job",
    target: "≤ 0.5× BullMQ",
    bound: { op: "≤", value: 0.5 },
    compare: (med) =>
      pair(
        med("memory.waiting", "leaseq"),
        med("memory.waiting", "bullmq"),
        (x, y) => `leaseq ${n0(x)} vs BullMQ ${n0(y)} bytes`,
      ),
  },
  {
    name: "pickup-p99-vs-bullmq",
    what: () => "pickup latency p99",
    target: "≤ BullMQ's",
    bound: { op: "≤", value: 1 },
    compare: (med) =>
      pair(
        med("pickup.p99", "leaseq"),
        med("pickup.p99", "bullmq"),
        (x, y) => `leaseq ${f1(x)} ms vs BullMQ ${f1(y)} ms`,
      ),
  },
  ...([16, 100] as const).map((c) => ({
    name: `priority-10-levels-c${c}`,
    what: () => `process at concurrency ${c} with jobs spread over 10 priorities, against none`,
    target: "≥ 0.7× the throughput without priorities",
    bound: { op: "≥" as const, value: 0.7 },
    compare: (med: Median) =>
      pair(
        med(`priority.levels10.c${c}`, "leaseq"),
        med(`priority.plain.c${c}`, "leaseq"),
        (x, y) => `10 levels ${n0(x)} vs none ${n0(y)} jobs/s`,
      ),
  })),
  {
    name: "batch-b100-vs-c100",
    what: () => "process with a batch handler of 100, against a one-job handler at concurrency 100",
    target: "≥ 1× the throughput at concurrency 100 (each job still leased, heartbeated and acked on its own)",
    bound: { op: "≥", value: 1 },
    compare: (med) =>
      pair(
        med("batch.b100", "leaseq"),
        med("batch.c100", "leaseq"),
        (x, y) => `batch ${n0(x)} vs concurrency ${n0(y)} jobs/s`,
      ),
  },
  {
    name: "tracing-on-process-cost",
    what: () => "process at concurrency 16 with every span recorded, against tracing off",
    target: "≥ 0.3× the throughput with tracing off (three recorded spans and five measurements a job)",
    bound: { op: "≥", value: 0.3 },
    compare: (med) =>
      pair(
        med("tracing.on.process", "leaseq"),
        med("tracing.off.process", "leaseq"),
        (x, y) => `on ${n0(x)} vs off ${n0(y)} jobs/s`,
      ),
  },
  {
    name: "groups-1000-process-cost",
    what: () => "process at concurrency 16 with the jobs spread over 1,000 groups, against no group",
    target: "≥ 0.6× the throughput without groups (issue 24)",
    bound: { op: "≥", value: 0.6 },
    compare: (med) =>
      pair(
        med("groups.g1000.c16", "leaseq"),
        med("groups.plain.c16", "leaseq"),
        (x, y) => `1,000 groups ${n0(x)} vs none ${n0(y)} jobs/s`,
      ),
  },
  {
    name: "process-c100-vs-floor",
    what: () => "throughput at concurrency 100",
    target: "≥ 40 % of the Redis floor (per-job commands)",
    bound: { op: "≥", value: 0.4 },
    compare: (med) =>
      pair(
        med("process.c100", "leaseq"),
        med("floor.process", "floor"),
        (x, y) => `leaseq ${n0(x)} vs floor ${n0(y)} jobs/s`,
      ),
  },
]

const holds = (bound: TargetDef["bound"], r: number): boolean =>
  bound.op === "≥" ? r >= bound.value : bound.op === "≤" ? r <= bound.value : r < bound.value

/** Every target, met or missed, from one run's medians. */
export const evaluateTargets = (med: Median, sizes: TargetSizes): TargetRow[] =>
  TARGETS.map((t) => {
    const c = t.compare(med, sizes)
    const ratio = c === undefined ? undefined : c.a / c.b
    return {
      name: t.name,
      what: t.what(sizes),
      target: t.target,
      compares: c === undefined ? "n/a" : c.text(c.a, c.b),
      ratio,
      measured: ratio === undefined ? "n/a" : `${f1(ratio)}×`,
      met: ratio === undefined ? undefined : holds(t.bound, ratio),
    }
  })

/** The targets as a markdown table: name, goal, the figures compared, their ratio, met or missed. */
export const targetsTable = (rows: ReadonlyArray<TargetRow>): string[] => [
  "| target | what | goal | compares | ratio | |",
  "|---|---|---|---|---|---|",
  ...rows.map(
    (r) =>
      `| ${r.name} | ${r.what} | ${r.target} | ${r.compares} | ${r.measured} | ${r.met === undefined ? "n/a" : r.met ? "met" : "missed"} |`,
  ),
]
