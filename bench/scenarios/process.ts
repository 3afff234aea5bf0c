/**
 * process.c1, process.c16, process.c100: a filled queue drained by one worker
 * with a no-op handler; process.kb10.c16: the same at concurrency 16 with payloads of
 * 10 KB. Timed from the first handler call to the last acknowledged completion, so
 * start-up and connection are not counted.
 */
import type { DisposableAdapter } from "../adapters/index.ts"
import type { LibName } from "../adapters/types.ts"
import { wanted } from "../config.ts"
import type { BenchContext } from "../context.ts"
import { eachRun, fill, measureServer, QUEUE, type Section, withDeadline } from "../harness.ts"
import { fmt } from "../lib/stats.ts"
import type { ScenarioResult } from "../results.ts"

const CONCURRENCY = [1, 16, 100] as const

/** Drain `n` jobs at concurrency `c`: milliseconds from the first handler call to the n-th completion. */
const drain = async (a: DisposableAdapter, lib: LibName, c: number, n: number): Promise<number> => {
  let first = 0
  let done = 0
  let finish: (t: number) => void = () => {}
  const finished = new Promise<number>((resolve) => {
    finish = resolve
  })
  const w = await a.worker(QUEUE, {
    concurrency: c,
    handler: async () => {
      if (first === 0) first = performance.now()
      return undefined
    },
    onCompleted: () => {
      if (++done === n) finish(performance.now())
    },
  })
  try {
    const end = await withDeadline(`${lib} process c${c}`, 300_000, finished)
    return end - first
  } finally {
    await w.close()
  }
}

const runOne = async (ctx: BenchContext, s: ScenarioResult, c: number, n: number, chars?: number): Promise<void> => {
  await eachRun(
    ctx,
    ctx.config.sizes.reps,
    async (a, lib) => {
      await fill(a, n, undefined, chars)
      const cpu0 = process.cpuUsage()
      const { value: elapsed, server } = await measureServer(ctx, () => drain(a, lib, c, n), { slowlog: false })
      const cpu = process.cpuUsage(cpu0)
      const left = await a.counts(QUEUE)
      ctx.results.record(s, lib, n / (elapsed / 1000), {
        nodeCpuUsPerJob: (cpu.user + cpu.system) / n,
        redisCpuUsPerJob: server.cpuUs / n,
        redisCmdsPerJob: server.commands / n,
        ...(left.waiting + left.active > 0 ? { left: left.waiting + left.active } : {}),
      })
    },
    (lib, reason) => ctx.results.markNa(s, lib, reason),
  )
}

export const processSection: Section = {
  name: "process",
  async run(ctx) {
    const n = ctx.config.sizes.processJobs
    for (const c of CONCURRENCY) {
      const id = `process.c${c}`
      if (!wanted(ctx.config, id)) continue
      const mode = ctx.config.quick ? ", quick mode" : ""
      const title = `process, no-op handler, concurrency ${c} (${fmt(n)} jobs${mode})`
      const s = ctx.results.scenario(id, title, "jobs/s", "higher")
      ctx.log(s.title)
      await runOne(ctx, s, c, n)
    }
    if (wanted(ctx.config, "process.kb10.c16")) {
      const s = ctx.results.scenario(
        "process.kb10.c16",
        `process, 10 KB payloads, no-op handler, concurrency 16 (${fmt(n)} jobs)`,
        "jobs/s",
        "higher",
      )
      ctx.log(s.title)
      await runOne(ctx, s, 16, n, 10 * 1024)
    }
  },
}
