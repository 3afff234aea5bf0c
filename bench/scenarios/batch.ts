/**
 * batch.c100, batch.b100: a filled queue (`processJobs` jobs) drained by one worker with a
 * no-op handler: at concurrency 100 with a one-job handler, and with `batch: { size: 100 }`
 * (concurrency 100, one batch at a time) (jobs/s, from the first handler call to the last
 * completion). leaseq only; the two alternate within each repetition, Redis emptied before
 * each, after one untimed warm-up of each. Each run also records Node CPU per job.
 */
import { payload } from "../adapters/types.ts"
import { wanted } from "../config.ts"
import type { BenchContext } from "../context.ts"
import { fresh, QUEUE, type Section, withDeadline } from "../harness.ts"
import { fmt } from "../lib/stats.ts"

type Lq = typeof import("../../src/index.ts")
const entry = new URL("../../src/index.ts", import.meta.url)

/** Add `n` jobs in bulks of 1000. */
const fillQueue = async (lq: Lq, url: string, n: number): Promise<void> => {
  const queue = new lq.Queue(QUEUE, { connection: url })
  try {
    for (let from = 0; from < n; from += 1000) {
      const bulk = []
      for (let i = from; i < Math.min(n, from + 1000); i++) bulk.push({ payload: payload(i) })
      await queue.addBulk(bulk)
    }
  } finally {
    await queue.close()
  }
}

/** Drain `n` jobs with a one-job (`batched` false) or a batch handler: jobs per second from the first handler call. */
const drainRate = async (lq: Lq, url: string, n: number, batched: boolean): Promise<number> => {
  let first = 0
  let done = 0
  let finish: (t: number) => void = () => {}
  const finished = new Promise<number>((resolve) => {
    finish = resolve
  })
  const started = () => {
    if (first === 0) first = performance.now()
  }
  const worker = batched
    ? new lq.Worker(QUEUE, async () => started(), { connection: url, batch: { size: 100 } })
    : new lq.Worker(QUEUE, async () => started(), { connection: url, concurrency: 100 })
  worker.on("completed", () => {
    if (++done === n) finish(performance.now())
  })
  try {
    const end = await withDeadline("leaseq batch drain", 300_000, finished)
    return n / ((end - first) / 1000)
  } finally {
    await worker.close()
  }
}

const MODES = [
  ["c100", false, "process, no-op handler, concurrency 100"],
  ["b100", true, "process, no-op batch handler, batch of 100"],
] as const

export const batchSection: Section = {
  name: "batch",
  async run(ctx: BenchContext) {
    if (!ctx.config.libs.includes("leaseq")) return
    const n = ctx.config.sizes.processJobs
    const modes = MODES.filter(([id]) => wanted(ctx.config, `batch.${id}`))
    if (modes.length === 0) return
    const lq = (await import(entry.href)) as Lq
    const scenarios = new Map(
      modes.map(([id, , what]) => {
        const s = ctx.results.scenario(`batch.${id}`, `batch: ${what} (${fmt(n)} jobs)`, "jobs/s", "higher")
        ctx.log(s.title)
        return [id, s] as const
      }),
    )
    for (const [, batched] of modes) {
      await fresh(ctx)
      await fillQueue(lq, ctx.url, 1000)
      await drainRate(lq, ctx.url, 1000, batched)
    }
    for (let rep = 0; rep < ctx.config.sizes.reps; rep++) {
      for (const [id, batched] of modes) {
        await fresh(ctx)
        await fillQueue(lq, ctx.url, n)
        const cpu0 = process.cpuUsage()
        const rate = await drainRate(lq, ctx.url, n, batched)
        const cpu1 = process.cpuUsage()
        const nodeCpuUsPerJob = (cpu1.user + cpu1.system - cpu0.user - cpu0.system) / n
        ctx.results.record(scenarios.get(id)!, "leaseq", rate, { nodeCpuUsPerJob })
      }
    }
    await fresh(ctx)
  },
}
