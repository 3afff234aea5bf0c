/**
 * What a bench run measures: the command line (`--quick`, `--only`, `--libs`) and
 * the sizes of the quick and the full run. Nothing here touches Redis.
 */
import { LIBS, type LibName } from "./adapters/types.ts"

/** Sizes and repetitions of one mode. */
export interface Sizes {
  /** Repetitions of every scenario, libraries alternating within a repetition. */
  readonly reps: number
  /** Runs of the scenarios that hold thousands of jobs in flight (each run fills, holds, recovers). */
  readonly inFlightReps: number
  readonly addSeqJobs: number
  readonly addConcurrentJobs: number
  readonly addBulkJobs: number
  readonly processJobs: number
  readonly pickupSamples: number
  /** Pause between two pickup samples, so each finds an idle worker. */
  readonly pickupGapMs: number
  readonly memoryJobs: number
  /** Lease / lock of the jobs a holder process keeps in flight before it is killed. */
  readonly holdLeaseMs: number
  /** Jobs held then reclaimed, one scenario per size. */
  readonly reclaim: ReadonlyArray<number>
  /** Reclaim sizes that also measure keeping the leases alive before the kill. */
  readonly keepaliveAt: ReadonlyArray<number>
  /** Reclaim sizes where `quickSkipReclaimLibs` are not run (quick mode only). */
  readonly quickSkipReclaim: ReadonlyArray<number>
  readonly quickSkipReclaimLibs: ReadonlyArray<LibName>
  /** Jobs kept in flight while completes are timed, one scenario per size. */
  readonly completeInFlight: ReadonlyArray<number>
  /** Jobs whose completion is timed in each complete scenario. */
  readonly completeProbes: number
  readonly floorJobs: number
  /** Jobs added then processed in each tracing scenario (tracing off and on). */
  readonly tracingJobs: number
  /** Jobs drained in each groups scenario (no group, and over 1,000 groups). */
  readonly groupsJobs: number
}

export const QUICK: Sizes = {
  reps: 2,
  inFlightReps: 1,
  addSeqJobs: 2_000,
  addConcurrentJobs: 5_000,
  addBulkJobs: 10_000,
  processJobs: 3_000,
  pickupSamples: 100,
  pickupGapMs: 5,
  memoryJobs: 10_000,
  holdLeaseMs: 2_000,
  reclaim: [20_000],
  keepaliveAt: [],
  quickSkipReclaim: [20_000],
  quickSkipReclaimLibs: ["beequeue"],
  completeInFlight: [1_000, 20_000],
  completeProbes: 100,
  floorJobs: 10_000,
  tracingJobs: 3_000,
  groupsJobs: 5_000,
}

export const FULL: Sizes = {
  reps: 5,
  inFlightReps: 5,
  addSeqJobs: 10_000,
  addConcurrentJobs: 20_000,
  addBulkJobs: 50_000,
  processJobs: 20_000,
  pickupSamples: 200,
  pickupGapMs: 10,
  memoryJobs: 10_000,
  holdLeaseMs: 4_000,
  reclaim: [20_000, 100_000],
  keepaliveAt: [20_000],
  quickSkipReclaim: [],
  quickSkipReclaimLibs: [],
  completeInFlight: [1_000, 50_000, 100_000],
  completeProbes: 200,
  floorJobs: 100_000,
  tracingJobs: 20_000,
  groupsJobs: 20_000,
}

export type Mode = "quick" | "full"

export interface BenchConfig {
  readonly mode: Mode
  readonly quick: boolean
  readonly sizes: Sizes
  /** Scenario id prefixes from `--only`; undefined runs every scenario. */
  readonly only: ReadonlyArray<string> | undefined
  /** Libraries from `--libs`, in the order they alternate; default all three. */
  readonly libs: ReadonlyArray<LibName>
  /** True when `--only` or `--libs` narrowed the run: its result is not a full record. */
  readonly partial: boolean
  /** Minutes after which the run gives up (5 quick, 120 full). */
  readonly watchdogMinutes: number
}

const USAGE = "usage: node bench/main.ts [--quick] [--only <id-prefix>[,…]] [--libs leaseq,bullmq,beequeue]"

const isLib = (s: string): s is LibName => (LIBS as ReadonlyArray<string>).includes(s)

const listFlag = (args: ReadonlyArray<string>, i: number, name: string): string[] => {
  const value = args[i + 1]
  if (value === undefined || value.startsWith("--")) throw new Error(`${name} needs a comma-separated list. ${USAGE}`)
  return value.split(",").filter((x) => x !== "")
}

/** Parse the command line; throws with the flag, the value and the usage on anything it does not know. */
export const parseConfig = (args: ReadonlyArray<string>): BenchConfig => {
  let quick = false
  let only: string[] | undefined
  let libs: LibName[] = [...LIBS]
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    if (a === "--quick") quick = true
    else if (a === "--only") only = listFlag(args, i++, "--only")
    else if (a === "--libs") {
      const names = listFlag(args, i++, "--libs")
      const bad = names.filter((n) => !isLib(n))
      if (bad.length > 0) throw new Error(`--libs: unknown library ${bad.join(", ")}; choose from ${LIBS.join(", ")}`)
      libs = names.filter(isLib)
    } else throw new Error(`unknown argument ${JSON.stringify(a)}. ${USAGE}`)
  }
  return {
    mode: quick ? "quick" : "full",
    quick,
    sizes: quick ? QUICK : FULL,
    only,
    libs,
    partial: only !== undefined || libs.length !== LIBS.length,
    watchdogMinutes: quick ? 5 : 120,
  }
}

/** Whether scenario `id` runs: no `--only`, or `id` starts with one of its prefixes. */
export const wanted = (config: BenchConfig, id: string): boolean =>
  !config.only || config.only.some((p) => id.startsWith(p))

/** Repetitions of an in-flight scenario: one run at 100k (a peer's quadratic reclaim takes minutes), else inFlightReps. */
export const repsFor = (sizes: Sizes, size: number, what: "reclaim" | "complete"): number =>
  what === "reclaim" && size >= 100_000 ? 1 : size >= 100_000 ? Math.min(sizes.inFlightReps, 2) : sizes.inFlightReps

/** "20k" for 20,000: the size part of a scenario id. */
export const kilo = (n: number): string => `${n / 1000}k`
