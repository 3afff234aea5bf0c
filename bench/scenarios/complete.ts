/**
 * complete.<k> (+ .latency, .maxcall) and healthy.<k> (+ .maxcall): k jobs held
 * in flight by live in-process workers (long leases, nothing expires). First one
 * recovery tick on this healthy set (k ≥ 20k), then the cost of completing
 * probe jobs: half the oldest in flight, half the newest.
 */
import type { DisposableAdapter } from "../adapters/index.ts"
import type { LibName } from "../adapters/types.ts"
import { kilo, repsFor, wanted } from "../config.ts"
import type { BenchContext } from "../context.ts"
import { eachRun, fill, fresh, measureServer, never, QUEUE, type Section, withDeadline } from "../harness.ts"
import { runTicks } from "../in-flight.ts"
import { median, quantile, waitFor } from "../lib/stats.ts"
import { startWorkers } from "../lib/workers.ts"
import type { ScenarioResult } from "../results.ts"

interface CompleteScenarios {
  readonly redisUs: ScenarioResult
  readonly latency: ScenarioResult
  readonly maxCall: ScenarioResult
  /** Present when this size also measures a recovery tick on the healthy set. */
  readonly healthy: { readonly tick: ScenarioResult; readonly maxCall: ScenarioResult } | undefined
}

const scenariosFor = (ctx: BenchContext, size: number, healthy: boolean): CompleteScenarios => {
  const k = kilo(size)
  const id = `complete.${k}`
  const r = ctx.results
  return {
    redisUs: r.scenario(
      id,
      `Redis time per completed job, ${k} other jobs in flight`,
      "µs",
      "lower",
      "execution time of every Redis command in the window (SLOWLOG at threshold 0) / completions; half the probes are the oldest jobs in flight, half the newest",
    ),
    latency: r.scenario(`${id}.latency`, `complete round trip p50, ${k} in flight`, "ms", "lower"),
    maxCall: r.scenario(`${id}.maxcall`, `longest single Redis call while completing, ${k} in flight`, "ms", "lower"),
    healthy: healthy
      ? {
          tick: r.scenario(
            `healthy.${k}`,
            `recovery tick on a healthy in-flight set (${k} leased, none expired)`,
            "ms",
            "lower",
            "wall time of one tick of the library's own recovery in its steady state (leaseq sweep; BullMQ stalled checker; Bee-Queue checkStalledJobs)",
          ),
          maxCall: r.scenario(
            `healthy.${k}.maxcall`,
            `longest single Redis call of that tick, ${k} healthy`,
            "ms",
            "lower",
          ),
        }
      : undefined,
  }
}

/** One recovery tick on the healthy set: nothing should come back. */
const healthyTick = async (ctx: BenchContext, sc: CompleteScenarios, a: DisposableAdapter, lib: LibName) => {
  if (!sc.healthy) return
  const r = ctx.results
  if (!a.recovery) {
    r.markNa(sc.healthy.tick, lib, "the library has no recovery for lost jobs")
    r.markNa(sc.healthy.maxCall, lib, "the library has no recovery for lost jobs")
    return
  }
  const t = await runTicks(ctx, a, 0, 1, true)
  r.record(sc.healthy.tick, lib, median(t.tickMs), t.reclaimed > 0 ? { wronglyReclaimed: t.reclaimed } : {})
  r.record(sc.healthy.maxCall, lib, t.server.maxUs / 1000, { call: t.server.maxLabel })
}

/** One run: fill, hold everything, (healthy tick,) then let the probes complete one by one. */
const completeOnce = async (
  ctx: BenchContext,
  sc: CompleteScenarios,
  a: DisposableAdapter,
  lib: LibName,
  size: number,
): Promise<void> => {
  const probes = ctx.config.sizes.completeProbes
  const total = size + probes
  // Oldest probes first, then the fillers, then the newest probes.
  await fill(a, total, (i) => i < probes / 2 || i >= total - probes / 2)
  const resolvers: (() => void)[] = []
  let completed: () => void = () => {}
  const w = await startWorkers(a, QUEUE, total, {
    leaseMs: 120_000,
    holder: true,
    handler: (job) => (job.payload.probe ? new Promise<void>((resolve) => resolvers.push(resolve)) : never(job)),
    onCompleted: () => completed(),
  })
  try {
    await waitFor(`${total} in flight`, async () => (await a.counts(QUEUE)).active >= total, 300_000, 100)
    await waitFor("probe handlers", () => resolvers.length >= probes, 30_000)
    await healthyTick(ctx, sc, a, lib)
    const lat: number[] = []
    const { server } = await measureServer(ctx, async () => {
      for (const resolve of resolvers.splice(0, probes)) {
        const done = new Promise<void>((r) => {
          completed = r
        })
        const t0 = performance.now()
        resolve()
        await withDeadline("completion", 30_000, done)
        lat.push(performance.now() - t0)
      }
    })
    const [oldest, newest] = [lat.slice(0, probes / 2), lat.slice(probes / 2)]
    const r = ctx.results
    r.record(sc.redisUs, lib, server.sumUs / probes, {
      redisCpuUsPerJob: server.cpuUs / probes,
      redisCmdsPerJob: server.commands / probes,
    })
    r.record(sc.latency, lib, quantile(lat, 0.5), {
      oldestP50: quantile(oldest, 0.5),
      newestP50: quantile(newest, 0.5),
    })
    r.record(sc.maxCall, lib, server.maxUs / 1000, { call: server.maxLabel })
  } finally {
    await fresh(ctx)
    await w.close()
  }
}

const runSize = async (ctx: BenchContext, size: number, healthy: boolean): Promise<void> => {
  const sc = scenariosFor(ctx, size, healthy)
  const probes = ctx.config.sizes.completeProbes
  ctx.log(
    `${kilo(size)} jobs in flight: ${healthy ? "healthy recovery tick, then " : ""}complete cost (${probes} probes)`,
  )
  const na = (lib: LibName, reason: string) => {
    for (const s of [sc.redisUs, sc.latency, sc.maxCall, sc.healthy?.tick, sc.healthy?.maxCall])
      if (s) ctx.results.markNa(s, lib, reason)
  }
  await eachRun(ctx, repsFor(ctx.config.sizes, size, "complete"), (a, lib) => completeOnce(ctx, sc, a, lib, size), na)
}

export const completeSection: Section = {
  name: "in flight / complete",
  async run(ctx) {
    for (const size of ctx.config.sizes.completeInFlight) {
      const k = kilo(size)
      const healthy = size >= 20_000 && wanted(ctx.config, `healthy.${k}`)
      if (wanted(ctx.config, `complete.${k}`) || healthy) await runSize(ctx, size, healthy)
    }
  },
}
