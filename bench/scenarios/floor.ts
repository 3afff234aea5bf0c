/**
 * floor.add, floor.process (+ .batched): the Redis floor, the fewest raw
 * commands for the same job lifecycle (bench/lib/floor.ts), pipelined from
 * one Node process. No library: what a queue on this Redis cannot beat.
 */
import { wanted } from "../config.ts"
import { fresh, type Section } from "../harness.ts"
import { floorAdd, floorAddBatched, floorProcess, floorProcessBatched } from "../lib/floor.ts"
import { connect } from "../lib/redis.ts"
import { fmt } from "../lib/stats.ts"

export const floorSection: Section = {
  name: "floor",
  async run(ctx) {
    if (!wanted(ctx.config, "floor")) return
    const n = ctx.config.sizes.floorJobs
    const r = ctx.results
    const perJob = `per job, pipelined (${fmt(n)} jobs)`
    const sAdd = r.scenario("floor.add", `Redis floor: add = LPUSH+HSET, ${perJob}`, "jobs/s", "higher")
    const sProc = r.scenario(
      "floor.process",
      `Redis floor: claim (RPOP+ZADD) + ack (ZREM+HDEL), ${perJob}`,
      "jobs/s",
      "higher",
    )
    const batched = "Redis floor, batched: the same commands, variadic over 100 jobs, add"
    const sAddB = r.scenario("floor.add.batched", batched, "jobs/s", "higher")
    const sProcB = r.scenario(
      "floor.process.batched",
      "Redis floor, batched: claim + ack, variadic over 100 jobs",
      "jobs/s",
      "higher",
    )
    ctx.log("Redis floor (raw commands, pipelines of 100 jobs, 4 in flight, one Node process)")
    for (let rep = 0; rep < ctx.config.sizes.reps; rep++) {
      await fresh(ctx)
      const clients = Array.from({ length: 4 }, () => connect(ctx.url))
      try {
        await Promise.all(clients.map((c) => c.ping()))
        const add = await floorAdd(clients, n)
        const proc = await floorProcess(clients, n)
        await fresh(ctx)
        const addB = await floorAddBatched(clients, n)
        const procB = await floorProcessBatched(clients, n)
        r.recordFloor(sAdd, add)
        r.recordFloor(sProc, proc)
        r.recordFloor(sAddB, addB)
        r.recordFloor(sProcB, procB)
      } finally {
        for (const c of clients) c.disconnect()
      }
    }
    await fresh(ctx)
  },
}
