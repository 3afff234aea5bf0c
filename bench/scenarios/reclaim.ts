/**
 * reclaim.<k>, reclaim.<k>.maxcall (and in the full run keepalive.<k>,
 * keepalive.<k>.maxcall): a child process holds k jobs, is SIGKILLed, the leases
 * or locks run out, and the library's own recovery brings every job back.
 * Before the kill, the keep-alive figures measure what renewing k leases costs Redis.
 */
import type { DisposableAdapter } from "../adapters/index.ts"
import type { LibName } from "../adapters/types.ts"
import { kilo, repsFor, wanted } from "../config.ts"
import type { BenchContext } from "../context.ts"
import { eachRun, fill, measureServer, QUEUE, type Section } from "../harness.ts"
import { busiestCalls, runTicks, startHolder } from "../in-flight.ts"
import { sleep } from "../lib/stats.ts"
import type { ScenarioResult } from "../results.ts"

interface ReclaimScenarios {
  readonly total: ScenarioResult
  readonly maxCall: ScenarioResult
  /** Present when this size also measures keeping the leases alive. */
  readonly keepalive: { readonly load: ScenarioResult; readonly maxCall: ScenarioResult } | undefined
}

const scenariosFor = (ctx: BenchContext, size: number, keepalive: boolean): ReclaimScenarios => {
  const k = kilo(size)
  const r = ctx.results
  return {
    total: r.scenario(
      `reclaim.${k}`,
      `mass reclaim, ${k} jobs with expired leases/locks`,
      "ms",
      "lower",
      "sum of the recovery ticks needed to move every job back (BullMQ/Bee-Queue: a marking tick + a moving tick; the stalledInterval between them is not counted)",
    ),
    maxCall: r.scenario(`reclaim.${k}.maxcall`, `longest single Redis call during mass reclaim ${k}`, "ms", "lower"),
    keepalive: keepalive
      ? {
          load: r.scenario(
            `keepalive.${k}`,
            `keeping ${k} leases alive (lease ${ctx.config.sizes.holdLeaseMs} ms): Redis time per second`,
            "ms/s",
            "lower",
            "execution time of every command in a window of one lease / the window, while a live holder only renews",
          ),
          maxCall: r.scenario(
            `keepalive.${k}.maxcall`,
            `longest single Redis call keeping ${k} leases alive`,
            "ms",
            "lower",
          ),
        }
      : undefined,
  }
}

/** One run: fill, hold, (measure the keep-alive,) kill, wait for the leases, recover. */
const reclaimOnce = async (
  ctx: BenchContext,
  sc: ReclaimScenarios,
  a: DisposableAdapter,
  lib: LibName,
  size: number,
): Promise<void> => {
  const leaseMs = ctx.config.sizes.holdLeaseMs
  const r = ctx.results
  await fill(a, size)
  const holder = await startHolder(ctx, lib, size, leaseMs)
  try {
    if (sc.keepalive) {
      const { server } = await measureServer(ctx, () => sleep(leaseMs))
      r.record(sc.keepalive.load, lib, server.sumUs / leaseMs, { top: busiestCalls(server) })
      r.record(sc.keepalive.maxCall, lib, server.maxUs / 1000, { call: server.maxLabel })
    }
    await holder.kill()
    await sleep(leaseMs + 300) // every lease/lock has now run out (they expire on the clock: no event to wait on)
    const t = await runTicks(ctx, a, size, 4)
    const left = await a.counts(QUEUE)
    // a run that recovered less than it held measured nothing: say so, record no figure
    if (t.reclaimed < size) throw new Error(`${lib} recovered ${t.reclaimed} of ${size} held jobs in 4 ticks`)
    r.record(
      sc.total,
      lib,
      t.tickMs.reduce((x, y) => x + y, 0),
      {
        ticks: t.tickMs.length,
        calls: t.calls,
        recovered: t.reclaimed,
        ...(left.active > 0 ? { stillActive: left.active } : {}),
      },
    )
    r.record(sc.maxCall, lib, t.server.maxUs / 1000, { call: t.server.maxLabel })
  } finally {
    await holder.kill()
  }
}

const runSize = async (ctx: BenchContext, size: number): Promise<void> => {
  const { config } = ctx
  const k = kilo(size)
  const keepalive = config.sizes.keepaliveAt.includes(size) && wanted(config, `keepalive.${k}`)
  const sc = scenariosFor(ctx, size, keepalive)
  const skip = config.quick && config.sizes.quickSkipReclaim.includes(size) ? config.sizes.quickSkipReclaimLibs : []
  ctx.log(
    `mass reclaim ${k} (holder lease ${config.sizes.holdLeaseMs} ms${keepalive ? ", keep-alive window first" : ""})`,
  )
  const na = (lib: LibName, reason: string) => {
    for (const s of [sc.total, sc.maxCall, sc.keepalive?.load, sc.keepalive?.maxCall])
      if (s) ctx.results.markNa(s, lib, reason)
  }
  await eachRun(
    ctx,
    repsFor(config.sizes, size, "reclaim"),
    async (a, lib) => {
      if (!a.recovery) return na(lib, "the library has no recovery for lost jobs")
      if (skip.includes(lib)) return na(lib, "not run in quick mode: one run takes ~10 s; see the full run")
      await reclaimOnce(ctx, sc, a, lib, size)
    },
    na,
  )
}

export const reclaimSection: Section = {
  name: "reclaim",
  async run(ctx) {
    for (const size of ctx.config.sizes.reclaim) {
      const k = kilo(size)
      if (wanted(ctx.config, `reclaim.${k}`) || wanted(ctx.config, `keepalive.${k}`)) await runSize(ctx, size)
    }
  },
}
