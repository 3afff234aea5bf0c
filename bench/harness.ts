/**
 * How every scenario runs: libraries alternate within each repetition
 * (leaseq, bullmq, beequeue, leaseq, …) on an emptied Redis, so a slow
 * stretch of a shared machine hits every library rather than one. Also the
 * small tools the scenarios share: filling a queue, a deadline, a server probe.
 */
import type { DisposableAdapter } from "./adapters/index.ts"
import { type BenchJob, type LibName, payload } from "./adapters/types.ts"
import type { BenchContext } from "./context.ts"
import { flushAll, type ProbeResult, probe } from "./lib/redis.ts"

/** The queue name every scenario uses (Redis is emptied between runs). */
export const QUEUE = "bench"

/** Empty Redis (FLUSHALL). */
export const fresh = async (ctx: BenchContext): Promise<void> => {
  await flushAll(ctx.admin)
}

const firstLines = (e: unknown): string =>
  String((e as Error)?.stack ?? e)
    .split("\n")
    .slice(0, 3)
    .join(" | ")

/**
 * Run `body` once per repetition per library, alternating libraries, Redis
 * emptied before each run and after the last. A library that cannot be measured,
 * or a run that throws, goes to `onNa` with the reason (the other runs go on).
 */
export const eachRun = async (
  ctx: BenchContext,
  reps: number,
  body: (a: DisposableAdapter, lib: LibName, rep: number) => Promise<void>,
  onNa?: (lib: LibName, reason: string) => void,
): Promise<void> => {
  for (let rep = 0; rep < reps; rep++) {
    for (const lib of ctx.config.libs) {
      const reason = ctx.unavailable.get(lib)
      if (reason) {
        onNa?.(lib, reason)
        continue
      }
      const a = ctx.adapters.get(lib)
      if (!a) continue
      await fresh(ctx)
      try {
        await body(a, lib, rep)
      } catch (e) {
        ctx.log(`  ! ${lib} rep ${rep + 1}: ${firstLines(e)}`)
        onNa?.(lib, `error: ${String((e as Error)?.message ?? e).slice(0, 120)}`)
      }
    }
  }
  await fresh(ctx)
}

/**
 * Fill the queue with `n` jobs (untimed), in bulk calls of 1,000; `probeAt(i)` marks the jobs a
 * scenario times; `chars` (default 32) is the length of each payload's string.
 */
export const fill = async (
  a: DisposableAdapter,
  n: number,
  probeAt?: (i: number) => boolean,
  chars?: number,
): Promise<void> => {
  const p = await a.producer(QUEUE)
  try {
    for (let from = 0; from < n; from += 1000) {
      const batch = []
      for (let i = from; i < Math.min(n, from + 1000); i++) batch.push(payload(i, probeAt?.(i), chars))
      await p.addBulk(batch)
    }
  } finally {
    await p.close()
  }
}

/** `p`, or a rejection naming `what` after `ms`: a stuck library fails its run instead of hanging the bench. */
export const withDeadline = <A>(what: string, ms: number, p: Promise<A>): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p,
    new Promise<A>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no result after ${ms} ms`)), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}

/** A handler that never finishes (but gives up when the library aborts it). */
export const never = (job: BenchJob): Promise<unknown> =>
  new Promise((_, reject) => {
    job.signal?.addEventListener("abort", () => reject(new Error("aborted")))
  })

/**
 * What Redis does while `fn` runs: commands, main-thread CPU and (with the
 * slowlog, the default) every call's own execution time. `slowlog: false` for
 * throughput runs, where logging every command would slow Redis down.
 */
export const measureServer = <A>(
  ctx: BenchContext,
  fn: () => Promise<A>,
  options: { slowlog?: boolean } = {},
): Promise<{ value: A; server: ProbeResult }> => probe(ctx.admin, ctx.scriptNames, fn, options)

/**
 * One entry of the scenario registry (bench/scenarios/index.ts): a family of
 * scenarios measured together, e.g. every `process.c*`.
 */
export interface Section {
  /** Printed in the per-section timing line and stored under `sectionSeconds`. */
  readonly name: string
  /** Measure and record; skips each scenario id that `wanted(ctx.config, id)` rejects. */
  readonly run: (ctx: BenchContext) => Promise<void>
}
