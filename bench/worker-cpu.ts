/**
 * The worker's CPU per job, for comparing two source trees side by side (the figures of
 * bench/HISTORY.md, round five). Adds `jobs` no-op jobs, runs them through one Promise
 * `Worker` at `concurrency`, twice, and prints for each round: jobs/s, the Node process's
 * CPU per job (process.cpuUsage) and Redis's (INFO cpu), and script calls per job.
 * Round 0 includes warm-up; read round 1.
 *
 *   node bench/worker-cpu.ts <tree> <redis port> [jobs=40000] [concurrency=100]
 *
 * `<tree>`: a checkout of leaseq (its src/index.ts is imported), e.g. `.` and a worktree
 * of an older commit; alternate the two. The Redis at `<port>` is FLUSHALLed. With
 * CPU_PROFILE=<file>, round 1 is profiled (node:inspector) into that file. A tree with
 * queue retention (setRetention) keeps no finished job here, like the trees before it; with
 * KEEP=default it keeps its default retention. PAYLOAD=<bytes> (default 32) sets the length
 * of each payload's string.
 */
import { execFileSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import { resolve } from "node:path"

const [tree = ".", port = "6379", jobsArg = "40000", concurrencyArg = "100"] = process.argv.slice(2)
const jobs = Number(jobsArg)
const concurrency = Number(concurrencyArg)
const profile = process.env.CPU_PROFILE
const connection = `redis://127.0.0.1:${port}`
const cli = (...args: string[]) => execFileSync("redis-cli", ["-p", port, ...args]).toString()
const redisCpuSeconds = () => {
  const info = cli("INFO", "cpu")
  const field = (k: string) => Number(new RegExp(`${k}:([\\d.]+)`).exec(info)?.[1] ?? 0)
  return field("used_cpu_sys") + field("used_cpu_user")
}
const scriptCalls = () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(cli("INFO", "commandstats"))?.[1] ?? 0)

const leaseq = await import(resolve(tree, "src/index.ts"))
const session = new Session()
session.connect()
cli("FLUSHALL")
const queue = new leaseq.Queue("worker-cpu", { connection })
if (typeof queue.setRetention === "function" && process.env.KEEP !== "default")
  await queue.setRetention({ completed: { count: 0 }, cancelled: { count: 0 } })
for (let round = 0; round < 2; round++) {
  for (let i = 0; i < jobs; i += 1000) {
    const batch = Array.from({ length: Math.min(1000, jobs - i) }, (_, k) => ({
      payload: { n: i + k, s: "x".repeat(Number(process.env.PAYLOAD ?? 32)) },
    }))
    await queue.addBulk(batch)
  }
  let done = 0
  let allDone: () => void = () => {}
  const finished = new Promise<void>((r) => {
    allDone = r
  })
  const worker = new leaseq.Worker("worker-cpu", async () => {}, { connection, concurrency })
  worker.on("completed", () => {
    if (++done === jobs) allDone()
  })
  cli("CONFIG", "RESETSTAT")
  const profiled = round === 1 && profile !== undefined
  if (profiled) {
    await session.post("Profiler.enable")
    await session.post("Profiler.start")
  }
  const redis0 = redisCpuSeconds()
  const node0 = process.cpuUsage()
  const t0 = performance.now()
  await finished
  const ms = performance.now() - t0
  const node = process.cpuUsage(node0)
  const redis = redisCpuSeconds() - redis0
  if (profiled) writeFileSync(profile, JSON.stringify((await session.post("Profiler.stop")).profile))
  const perJob = (us: number) => (us / jobs).toFixed(1)
  console.log(
    `${tree} c${concurrency} round ${round}: ${Math.round((jobs / ms) * 1000)} jobs/s, ` +
      `node ${perJob(node.user + node.system)} us/job, redis ${perJob(redis * 1e6)} us/job, ` +
      `script calls/job ${(scriptCalls() / jobs).toFixed(3)}`,
  )
  await worker.close()
}
await queue.close()
session.disconnect()
