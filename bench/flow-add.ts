/**
 * Where a flow's add spends its time (bench/HISTORY.md, "Flows, the add figure"): flows of
 * 1 parent × 1,000 children added one after another, this tree's leaseq and another tree's
 * (`--before`) alternating, each call's wall time, this process's CPU (`process.cpuUsage`)
 * and Redis's (`INFO cpu`, the script and the reading of its arguments), medians a tree.
 *
 *   node --conditions=leaseq-source bench/flow-add.ts <redis port> [flows=60] [--before <path of another tree's src/index.ts>]
 *
 * Without `--before` this tree runs alone. The Redis at `<port>` is FLUSHALLed every 10 flows.
 */
import * as current from "../src/index.ts"
import { connect, flushAll, info } from "./lib/redis.ts"
import { fmt, median } from "./lib/stats.ts"

const args = process.argv.slice(2)
const at = args.indexOf("--before")
const beforePath = at >= 0 ? args.splice(at, 2)[1] : undefined
const [port = "6379", flowsArg = "60"] = args
const flows = Number(flowsArg)
const url = `redis://127.0.0.1:${port}`
const admin = connect(url)
const trees: Array<{ name: string; lib: typeof current }> = [{ name: "this tree", lib: current }]
if (beforePath) trees.push({ name: "before", lib: (await import(beforePath)) as typeof current })
const payload = (n: number) => ({ n, s: "x".repeat(32) })
const flow = { payload: payload(0), children: Array.from({ length: 1000 }, (_, i) => ({ payload: payload(i + 1) })) }
const redisCpuUs = async () => {
  const cpu = await info(admin, "cpu")
  return (Number(cpu.used_cpu_user) + Number(cpu.used_cpu_sys)) * 1e6
}

await flushAll(admin)
const runs = trees.map((t, i) => ({ ...t, queue: new t.lib.Queue(`flow-add-${i}`, { connection: url }) }))
const samples = runs.map(() => ({ wall: [] as number[], client: [] as number[], redis: [] as number[] }))
for (const r of runs) await r.queue.addFlow(flow) // connected, scripts loaded
for (let f = 0; f < flows; f++) {
  const order = f % 2 === 0 ? runs.keys() : [...runs.keys()].reverse()
  for (const i of order) {
    const redis0 = await redisCpuUs()
    const cpu0 = process.cpuUsage()
    const t = performance.now()
    await runs[i]!.queue.addFlow(flow)
    const wall = performance.now() - t
    const cpu = process.cpuUsage(cpu0)
    samples[i]!.wall.push(wall)
    samples[i]!.client.push((cpu.user + cpu.system) / 1000)
    samples[i]!.redis.push(((await redisCpuUs()) - redis0) / 1000)
  }
  if (f % 10 === 9) await flushAll(admin)
}
for (const [i, r] of runs.entries()) {
  const s = samples[i]!
  console.log(
    `${r.name.padEnd(10)} wall ${fmt(median(s.wall))} ms/flow (${fmt(1001 / (median(s.wall) / 1000))} jobs/s), client CPU ${fmt(median(s.client))} ms, Redis CPU ${fmt(median(s.redis))} ms`,
  )
}
for (const r of runs) await r.queue.close()
admin.disconnect()
process.exit(0)
