/**
 * priority.plain.c16, priority.levels10.c16 (and .c100): a filled queue drained by one
 * worker with a no-op handler (jobs/s). leaseq only: "plain" adds every job without a
 * priority (the wait list alone); "levels10" gives job i the priority i % 10, so nine
 * jobs in ten wait in the prioritized set and keep a priority field until they complete.
 * One untimed warm-up first; then the two alternate within each repetition, Redis emptied
 * before each. Each run also records Node and Redis CPU and Redis commands per job (less
 * disturbed than wall time on a shared machine).
 */
import { payload } from "../adapters/types.ts"
import { wanted } from "../config.ts"
import type { BenchContext } from "../context.ts"
import { fresh, measureServer, QUEUE, type Section, withDeadline } from "../harness.ts"
import { fmt } from "../lib/stats.ts"

type Lq = typeof import("../../src/index.ts")
const entry = new URL("../../src/index.ts", import.meta.url)
const MODES = ["plain", "levels10"] as const
const CONCURRENCY = [16, 100] as const

/** Add `n` jobs in bulks of 1000, job i at priority i % 10 when `levels`. */
const fillQueue = async (lq: Lq, url: string, n: number, levels: boolean): Promise<void> => {
  const queue = new lq.Queue(QUEUE, { connection: url })
  try {
    for (let from = 0; from < n; from += 1000) {
      const batch = []
      for (let i = from; i < Math.min(n, from + 1000); i++) {
        batch.push({ payload: payload(i), options: levels ? { priority: i % 10 } : {} })
      }
      await queue.addBulk(batch)
    }
  } finally {
    await queue.close()
  }
}

/** Drain the queue (`n` jobs) at `concurrency`: jobs per second from the first handler call. */
const drainRate = async (lq: Lq, url: string, n: number, concurrency: number): Promise<number> => {
  let first = 0
  let done = 0
  let finish: (t: number) => void = () => {}
  const finished = new Promise<number>((resolve) => {
    finish = resolve
  })
  const worker = new lq.Worker(
    QUEUE,
    async () => {
      if (first === 0) first = performance.now()
    },
    { connection: url, concurrency },
  )
  worker.on("completed", () => {
    if (++done === n) finish(performance.now())
  })
  try {
    const end = await withDeadline("leaseq priority drain", 300_000, finished)
    return n / ((end - first) / 1000)
  } finally {
    await worker.close()
  }
}

export const prioritySection: Section = {
  name: "priority",
  async run(ctx: BenchContext) {
    if (!ctx.config.libs.includes("leaseq")) return
    const n = ctx.config.sizes.processJobs
    const ids = CONCURRENCY.flatMap((c) => MODES.map((mode) => `priority.${mode}.c${c}`))
    const scenarios = new Map(
      ids
        .filter((id) => wanted(ctx.config, id))
        .map((id) => {
          const [, mode, c] = id.split(".")
          const title = `priority ${mode === "plain" ? "none" : "10 levels"}: process, no-op handler, concurrency ${c!.slice(1)} (${fmt(n)} jobs)`
          return [id, ctx.results.scenario(id, title, "jobs/s", "higher")] as const
        }),
    )
    if (scenarios.size === 0) return
    for (const s of scenarios.values()) ctx.log(s.title)
    const lq = (await import(entry.href)) as Lq
    for (const mode of MODES) {
      await fresh(ctx)
      await fillQueue(lq, ctx.url, 1000, mode === "levels10")
      await drainRate(lq, ctx.url, 1000, 16)
    }
    for (let rep = 0; rep < ctx.config.sizes.reps; rep++) {
      for (const c of CONCURRENCY) {
        for (const mode of MODES) {
          const s = scenarios.get(`priority.${mode}.c${c}`)
          if (!s) continue
          await fresh(ctx)
          await fillQueue(lq, ctx.url, n, mode === "levels10")
          const cpu0 = process.cpuUsage()
          const { value: rate, server } = await measureServer(ctx, () => drainRate(lq, ctx.url, n, c), {
            slowlog: false,
          })
          const cpu = process.cpuUsage(cpu0)
          ctx.results.record(s, "leaseq", rate, {
            nodeCpuUsPerJob: (cpu.user + cpu.system) / n,
            redisCpuUsPerJob: server.cpuUs / n,
            redisCmdsPerJob: server.commands / n,
          })
        }
      }
    }
    await fresh(ctx)
  },
}
