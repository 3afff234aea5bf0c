/**
 * add.seq, add.c16, add.c64, add.bulk100: producer throughput, one job at a time, 16
 * and 64 adds in flight, and bulk calls of 100. Clock starts after a first add has
 * connected the producer and loaded its scripts.
 */
import type { Producer } from "../adapters/types.ts"
import { payload } from "../adapters/types.ts"
import { wanted } from "../config.ts"
import type { BenchContext } from "../context.ts"
import { eachRun, measureServer, QUEUE, type Section } from "../harness.ts"
import { fmt } from "../lib/stats.ts"

interface Kind {
  readonly id: string
  readonly title: string
  readonly n: number
  /** Adds awaited at once (`bulk` 0 only). */
  readonly inFlight: number
  /** Jobs per bulk call; 0 adds one job per call. */
  readonly bulk: number
}

const addAll = async (p: Producer, k: Kind): Promise<void> => {
  if (k.bulk > 0) {
    for (let from = 0; from < k.n; from += k.bulk) {
      const batch = []
      for (let i = from; i < Math.min(k.n, from + k.bulk); i++) batch.push(payload(i))
      await p.addBulk(batch)
    }
    return
  }
  let next = 0
  await Promise.all(
    Array.from({ length: k.inFlight }, async () => {
      while (next < k.n) await p.add(payload(next++))
    }),
  )
}

const runKind = async (ctx: BenchContext, k: Kind): Promise<void> => {
  const s = ctx.results.scenario(k.id, `${k.title} (${fmt(k.n)} jobs)`, "jobs/s", "higher")
  ctx.log(s.title)
  await eachRun(
    ctx,
    ctx.config.sizes.reps,
    async (a, lib) => {
      const p = await a.producer(QUEUE)
      await p.add(payload(-1)) // connect and load scripts before the clock starts
      const cpu0 = process.cpuUsage()
      const t0 = performance.now()
      const { server } = await measureServer(ctx, () => addAll(p, k), { slowlog: false })
      const secs = (performance.now() - t0) / 1000
      const cpu = process.cpuUsage(cpu0)
      await p.close()
      ctx.results.record(s, lib, k.n / secs, {
        nodeCpuUsPerJob: (cpu.user + cpu.system) / k.n,
        redisCpuUsPerJob: server.cpuUs / k.n,
        redisCmdsPerJob: server.commands / k.n,
      })
    },
    (lib, reason) => ctx.results.markNa(s, lib, reason),
  )
}

export const addSection: Section = {
  name: "add",
  async run(ctx) {
    const { sizes } = ctx.config
    const kinds: Kind[] = [
      { id: "add.seq", title: "add, one at a time", n: sizes.addSeqJobs, inFlight: 1, bulk: 0 },
      { id: "add.c16", title: "add, 16 in flight", n: sizes.addConcurrentJobs, inFlight: 16, bulk: 0 },
      { id: "add.c64", title: "add, 64 in flight", n: sizes.addConcurrentJobs, inFlight: 64, bulk: 0 },
      { id: "add.bulk100", title: "add, bulk 100", n: sizes.addBulkJobs, inFlight: 1, bulk: 100 },
    ]
    for (const k of kinds) if (wanted(ctx.config, k.id)) await runKind(ctx, k)
  },
}
