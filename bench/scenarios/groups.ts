/**
 * groups.plain.c16, groups.g1000.c16: a filled queue drained by one worker at concurrency
 * 16 with a no-op handler (jobs/s), leaseq only: "plain" adds its jobs without a group,
 * "g1000" spreads the same jobs over 1,000 groups (add's `group` option, round robin
 * between them on every reserve). Plain and grouped alternate within each repetition,
 * Redis emptied before each; each run also records Node and Redis CPU per job and Redis
 * commands per job.
 */
import { payload } from "../adapters/types.ts"
import { wanted } from "../config.ts"
import type { BenchContext } from "../context.ts"
import { fresh, measureServer, QUEUE, type Section, withDeadline } from "../harness.ts"
import { fmt } from "../lib/stats.ts"

type Lq = typeof import("../../src/index.ts")
const entry = new URL("../../src/index.ts", import.meta.url)

/** Groups the grouped scenario spreads its jobs over. */
const GROUPS = 1000

/** Add `n` jobs in bulks of 1,000, each in group `i % groups` (none when groups is 0). */
const fillGroups = async (lq: Lq, url: string, n: number, groups: number): Promise<void> => {
  const queue = new lq.Queue(QUEUE, { connection: url })
  try {
    for (let from = 0; from < n; from += 1000) {
      const jobs = []
      for (let i = from; i < Math.min(n, from + 1000); i++) {
        jobs.push({ payload: payload(i), ...(groups > 0 ? { options: { group: `tenant-${i % groups}` } } : {}) })
      }
      await queue.addBulk(jobs)
    }
  } finally {
    await queue.close()
  }
}

/** Drain `n` jobs at concurrency 16: jobs per second from the first handler call. */
const drain = async (lq: Lq, url: string, n: number): Promise<number> => {
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
    { connection: url, concurrency: 16 },
  )
  worker.on("completed", () => {
    if (++done === n) finish(performance.now())
  })
  try {
    const end = await withDeadline("leaseq groups drain", 300_000, finished)
    return n / ((end - first) / 1000)
  } finally {
    await worker.close()
  }
}

export const groupsSection: Section = {
  name: "groups",
  async run(ctx: BenchContext) {
    if (!ctx.config.libs.includes("leaseq")) return
    const n = ctx.config.sizes.groupsJobs
    const modes = [
      { id: "groups.plain.c16", groups: 0, what: "no group" },
      { id: "groups.g1000.c16", groups: GROUPS, what: `${fmt(GROUPS)} groups` },
    ].filter((m) => wanted(ctx.config, m.id))
    if (modes.length === 0) return
    const lq = (await import(entry.href)) as Lq
    const scenarios = new Map(
      modes.map((m) => {
        const title = `groups: process, ${m.what}, no-op handler, concurrency 16 (${fmt(n)} jobs)`
        return [m.id, ctx.results.scenario(m.id, title, "jobs/s", "higher")] as const
      }),
    )
    for (const s of scenarios.values()) ctx.log(s.title)
    for (let rep = 0; rep < ctx.config.sizes.reps; rep++) {
      for (const m of modes) {
        await fresh(ctx)
        await fillGroups(lq, ctx.url, n, m.groups)
        const cpu0 = process.cpuUsage()
        const { value: rate, server } = await measureServer(ctx, () => drain(lq, ctx.url, n), { slowlog: false })
        const cpu = process.cpuUsage(cpu0)
        ctx.results.record(scenarios.get(m.id)!, "leaseq", rate, {
          nodeCpuUsPerJob: (cpu.user + cpu.system) / n,
          redisCpuUsPerJob: server.cpuUs / n,
          redisCmdsPerJob: server.commands / n,
        })
      }
    }
    await fresh(ctx)
  },
}
