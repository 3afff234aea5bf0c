/**
 * leaseq's performance targets, checked against one run's medians. Every ratio is
 * measured in the same run as the peers. In quick mode the in-flight sizes are
 * smaller (20k instead of 50k/100k): the row says which size it used.
 */

export interface TargetRow {
  readonly what: string
  readonly target: string
  readonly measured: string
  /** undefined when a figure is missing (leaseq or the peer not measured). */
  readonly reached: boolean | undefined
}

/** Median of a scenario for a library (or the floor); undefined when not measured. */
export type Median = (id: string, lib: "leaseq" | "bullmq" | "beequeue" | "floor") => number | undefined

const f1 = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2))

export const evaluateTargets = (med: Median, sizes: { healthy: number; completeBig: number }): TargetRow[] => {
  const rows: TargetRow[] = []
  const vsBullmq = (id: string, higherIsBetter: boolean): number | undefined => {
    const l = med(id, "leaseq")
    const b = med(id, "bullmq")
    if (l === undefined || b === undefined || l <= 0 || b <= 0) return undefined
    return higherIsBetter ? l / b : b / l
  }
  const ratioRow = (what: string, id: string, min: number, higher = true) => {
    const r = vsBullmq(id, higher)
    rows.push({
      what,
      target: `≥ ${min}× BullMQ`,
      measured: r === undefined ? "n/a" : `${f1(r)}×`,
      reached: r === undefined ? undefined : r >= min,
    })
  }
  ratioRow("process, concurrency 100", "process.c100", 3)
  ratioRow("process, concurrency 16", "process.c16", 2.5)
  ratioRow("process, concurrency 1", "process.c1", 1.3)
  ratioRow("bulk add", "add.bulk100", 1.5)

  {
    const r = vsBullmq("reclaim.20k", false)
    const maxCall = med("reclaim.20k.maxcall", "leaseq")
    rows.push({
      what: "reclaim 20,000 expired leases",
      target: "≥ 20× faster than BullMQ, no single Redis call over 10 ms",
      measured: `${r === undefined ? "n/a" : `${f1(r)}×`}, longest call ${maxCall === undefined ? "n/a" : `${f1(maxCall)} ms`}`,
      reached: r === undefined || maxCall === undefined ? undefined : r >= 20 && maxCall <= 10,
    })
  }
  {
    const k = `${sizes.healthy / 1000}k`
    const call = med(`healthy.${k}.maxcall`, "leaseq")
    const wall = med(`healthy.${k}`, "leaseq")
    rows.push({
      what: `sweep with nothing expired, ${k} in flight${sizes.healthy !== 50_000 ? " (quick mode size; the target is at 50k)" : ""}`,
      target: "under 1 ms",
      measured:
        call === undefined
          ? "n/a"
          : `${f1(call)} ms in Redis (the sweep call); ${wall === undefined ? "n/a" : f1(wall)} ms wall, round trip included`,
      reached: call === undefined ? undefined : call < 1,
    })
  }
  {
    const k = `${sizes.completeBig / 1000}k`
    const big = med(`complete.${k}`, "leaseq")
    const small = med("complete.1k", "leaseq")
    const r = big !== undefined && small !== undefined && small > 0 ? big / small : undefined
    rows.push({
      what: `complete at ${k} in flight${sizes.completeBig !== 100_000 ? " (quick mode size; the target is at 100k)" : ""}`,
      target: "within 1.2× of its cost at 1,000",
      measured:
        r === undefined || big === undefined || small === undefined
          ? "n/a"
          : `${f1(r)}× (${f1(big)} µs vs ${f1(small)} µs of Redis time per completion)`,
      reached: r === undefined ? undefined : r <= 1.2,
    })
  }
  {
    const l = med("memory.waiting", "leaseq")
    const b = med("memory.waiting", "bullmq")
    const r = l !== undefined && b !== undefined && b > 0 ? l / b : undefined
    rows.push({
      what: "Redis memory per waiting job",
      target: "≤ 0.5× BullMQ",
      measured:
        r === undefined || l === undefined || b === undefined
          ? "n/a"
          : `${f1(r)}× (${l.toFixed(0)} vs ${b.toFixed(0)} bytes)`,
      reached: r === undefined ? undefined : r <= 0.5,
    })
  }
  {
    const l = med("pickup.p99", "leaseq")
    const b = med("pickup.p99", "bullmq")
    rows.push({
      what: "pickup latency p99",
      target: "≤ BullMQ's",
      measured: l === undefined || b === undefined ? "n/a" : `${f1(l)} ms vs ${f1(b)} ms`,
      reached: l === undefined || b === undefined ? undefined : l <= b,
    })
  }
  {
    const l = med("process.c100", "leaseq")
    const floor = med("floor.process", "floor")
    const batched = med("floor.process.batched", "floor")
    const pct = l !== undefined && floor !== undefined ? (100 * l) / floor : undefined
    const pctB = l !== undefined && batched !== undefined ? (100 * l) / batched : undefined
    rows.push({
      what: "throughput at concurrency 100",
      target: "≥ 40 % of the Redis floor",
      measured:
        pct === undefined
          ? "n/a"
          : `${pct.toFixed(0)} % of the per-job floor${pctB === undefined ? "" : `; ${pctB.toFixed(0)} % of the batched floor`}`,
      reached: pct === undefined ? undefined : pct >= 40,
    })
  }
  return rows
}

export const targetsTable = (rows: ReadonlyArray<TargetRow>): string[] => [
  "| what | target | measured | |",
  "|---|---|---|---|",
  ...rows.map(
    (r) =>
      `| ${r.what} | ${r.target} | ${r.measured} | ${r.reached === undefined ? "n/a" : r.reached ? "reached" : "missed"} |`,
  ),
]
