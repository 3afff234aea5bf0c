/** memory.waiting: Redis memory (INFO used_memory) per waiting job, added in bulk calls of 100. */
import { payload } from "../adapters/types.ts"
import { wanted } from "../config.ts"
import { eachRun, QUEUE, type Section } from "../harness.ts"
import { memoryByKey, usedMemory } from "../lib/redis.ts"
import { fmt } from "../lib/stats.ts"

/**
 * Where the bytes are: per job, each of the queue's keys that holds ≥ 1 byte a job (a
 * library with a key per job shows none). Counted over every job added, warm-up included.
 */
const perKey = async (admin: Parameters<typeof usedMemory>[0], jobs: number): Promise<Record<string, number>> => {
  const byKey = await memoryByKey(admin, QUEUE)
  const out: Record<string, number> = {}
  for (const [key, bytes] of byKey ?? []) {
    const perJob = Math.round(bytes / jobs)
    if (perJob >= 1) out[key.slice(key.lastIndexOf(":") + 1)] = perJob
  }
  return out
}

export const memorySection: Section = {
  name: "memory",
  async run(ctx) {
    if (!wanted(ctx.config, "memory")) return
    const n = ctx.config.sizes.memoryJobs
    const title = `memory per waiting job (${fmt(n)} jobs, INFO used_memory)`
    const s = ctx.results.scenario("memory.waiting", title, "bytes", "lower")
    ctx.log(s.title)
    await eachRun(
      ctx,
      ctx.config.sizes.reps,
      async (a, lib) => {
        const p = await a.producer(QUEUE)
        // 100 jobs first, so the queue's own keys and structures are not counted per job
        const warm = []
        for (let i = 0; i < 100; i++) warm.push(payload(-i - 1))
        await p.addBulk(warm)
        const before = await usedMemory(ctx.admin)
        for (let from = 0; from < n; from += 100) {
          const batch = []
          for (let i = from; i < Math.min(n, from + 100); i++) batch.push(payload(i))
          await p.addBulk(batch)
        }
        const after = await usedMemory(ctx.admin)
        await p.close()
        ctx.results.record(s, lib, (after - before) / n, await perKey(ctx.admin, n + 100))
      },
      (lib, reason) => ctx.results.markNa(s, lib, reason),
    )
  },
}
