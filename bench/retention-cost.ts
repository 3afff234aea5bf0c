/**
 * What retention costs (bench/HISTORY.md, round "retention"): the Redis memory each retained
 * completed job holds, and Redis CPU per job of a drain with and without retention. Adds
 * `jobs` jobs (payload `{ n, s: "x".repeat(32) }`, the bench's payload), runs them through
 * one Promise `Worker` at concurrency 16 whose handler returns `{ ok: true, n }`, once with
 * the queue's retention set to keep none (`completed: { count: 0 }`) and once to keep them
 * all (`count: 1_000_000`, 1 hour), each on a FLUSHALLed Redis, and prints per job: the
 * `used_memory` left after the drain (less the same figure of the run that keeps none), the
 * `MEMORY USAGE` of the keys a retained job is in (data, done, result), Redis CPU (INFO cpu)
 * and script calls. Alternate the two by running it twice; read the second.
 *
 *   node bench/retention-cost.ts <redis port> [jobs=10000]
 *
 * `PAYLOAD=<bytes>` (default 32) sets the length of each payload's string (10240: what a
 * retained 10 KB job holds).
 * The Redis at `<port>` is FLUSHALLed.
 */
import { execFileSync } from "node:child_process"
import { Queue, Worker } from "../src/index.ts"

const [port = "6379", jobsArg = "10000"] = process.argv.slice(2)
const jobs = Number(jobsArg)
const payloadBytes = Number(process.env.PAYLOAD ?? 32)
const connection = `redis://127.0.0.1:${port}`
const cli = (...args: string[]) =>
  execFileSync("redis-cli", ["-p", port, ...args])
    .toString()
    .trim()
const info = (section: string, k: string) => Number(new RegExp(`${k}:([\\d.]+)`).exec(cli("INFO", section))?.[1] ?? 0)
const redisCpuSeconds = () => info("cpu", "used_cpu_sys") + info("cpu", "used_cpu_user")
const scriptCalls = () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(cli("INFO", "commandstats"))?.[1] ?? 0)
const usage = (key: string) => Number(cli("MEMORY", "USAGE", key, "SAMPLES", "0") || 0)

/** One drain with the retention count `keep`: memory left per job, Redis CPU per job, the retained keys' bytes per job. */
const drain = async (keep: number) => {
  cli("FLUSHALL")
  const name = "retention-cost"
  const queue = new Queue<{ n: number; s: string }>(name, { connection })
  await queue.setRetention({ completed: { count: keep, ageMs: 3_600_000 } })
  await queue.setEventRetention(0) // the events stream is the same either way: leave it out of the figure
  const base = info("memory", "used_memory")
  for (let i = 0; i < jobs; i += 1000) {
    await queue.addBulk(
      Array.from({ length: Math.min(1000, jobs - i) }, (_, k) => ({
        payload: { n: i + k, s: "x".repeat(payloadBytes) },
      })),
    )
  }
  const waiting = info("memory", "used_memory")
  let done = 0
  let allDone: () => void = () => {}
  const finished = new Promise<void>((r) => {
    allDone = r
  })
  cli("CONFIG", "RESETSTAT")
  const cpu0 = redisCpuSeconds()
  const worker = new Worker<{ n: number; s: string }>(name, async (job) => ({ ok: true, n: job.payload.n }), {
    connection,
    concurrency: 16,
  })
  worker.on("completed", () => {
    if (++done === jobs) allDone()
  })
  await finished
  const cpu = redisCpuSeconds() - cpu0
  const calls = scriptCalls()
  await worker.close()
  const after = info("memory", "used_memory")
  const k = (s: string) => `leaseq:{${name}}:${s}`
  const keys = { data: usage(k("data")), done: usage(k("done")), result: usage(k("result")) }
  await queue.close()
  return { keep, waiting: (waiting - base) / jobs, left: (after - base) / jobs, cpu: (cpu * 1e6) / jobs, calls, keys }
}

const none = await drain(0)
const all = await drain(1_000_000)
const per = (x: number) => x.toFixed(1)
for (const r of [none, all]) {
  console.log(
    `keep ${r.keep}: waiting ${per(r.waiting)} B/job, left after the drain ${per(r.left)} B/job, ` +
      `redis ${per(r.cpu)} us/job, script calls/job ${(r.calls / jobs).toFixed(3)}, ` +
      `keys/job data ${per(r.keys.data / jobs)} done ${per(r.keys.done / jobs)} result ${per(r.keys.result / jobs)}`,
  )
}
console.log(`retained completed job: ${per(all.left - none.left)} B/job (used_memory), ${jobs} jobs`)
