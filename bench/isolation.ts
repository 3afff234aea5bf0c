/**
 * Isolation figures (issue 32; bench/HISTORY.md, "Isolation"), one run each:
 *
 * 1. a CPU-bound handler (SHA-256 rounds calibrated to ~20 ms on one core here) at
 *    concurrency 2: leaseq `isolation: "thread"` vs BullMQ's sandboxed processors with
 *    `useWorkerThreads: true`, jobs/s, three rounds alternating (the machine may be shared:
 *    compare within a round), beside an in-process run at concurrency 1 (one core's pace);
 * 2. a no-op handler: per-job time of the pool alone (one job at a time, no Redis), and of a
 *    worker at concurrency 1 in-process vs thread (the difference is the overhead per job);
 * 3. hard stop: from a job's signal aborting (a timeout) to its thread (process) gone, p50/p99;
 *    with `ISO_BEFORE=<path of another Pool.ts>` (e.g. an older tree's), that pool's figures
 *    beside, rounds alternating. Also: abort → the run settled, and → the next job done.
 * 4. the ideal ceiling here and now: the same 20 ms loop in 2 bare worker_threads, jobs/s.
 *
 *   node bench/isolation.ts <redis port> [cpu jobs=200] [no-op jobs=2000]
 *
 * The Redis at `<port>` is FLUSHALLed.
 */
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { Worker as Thread } from "node:worker_threads"
import { Queue as BullQueue, Worker as BullWorker } from "bullmq"
import { startPool } from "../src/engine/isolation/Pool.ts"
import { JobTimedOut } from "../src/engine/model/Errors.ts"
import type { Job } from "../src/engine/queue/Job.ts"
import { Queue, Worker } from "../src/index.ts"

const [port = "6379", cpuArg = "200", noopArg = "2000"] = process.argv.slice(2)
const cpuJobs = Number(cpuArg)
const noopJobs = Number(noopArg)
const connection = `redis://127.0.0.1:${port}`
const HASH = new URL("./lib/isolation-hash.mjs", import.meta.url)
const SPIN = new URL("./lib/isolation-spin.mjs", import.meta.url)
execFileSync("redis-cli", ["-p", port, "FLUSHALL"])

/** The same handler, for the in-process runs. */
const hashInProcess = ((await import(HASH.href)) as { default: (job: unknown) => unknown }).default

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!

/** Rounds of SHA-256 that take about 20 ms on this core (median of 5 timings). */
const calibrate = (): number => {
  const time = (n: number) => {
    const t = performance.now()
    let h = Buffer.alloc(64, 1)
    for (let i = 0; i < n; i++) h = createHash("sha256").update(h).digest()
    return performance.now() - t
  }
  time(20_000)
  const per = pct(
    Array.from({ length: 5 }, () => time(20_000) / 20_000),
    0.5,
  )
  return Math.round(20 / per)
}

/** Jobs/s between the first completion and the last (start-up left out, for both libraries). */
const pace = (count: number) => {
  let done = 0
  let first = 0
  let resolve: () => void = () => {}
  const all = new Promise<void>((r) => (resolve = r))
  const completed = () => {
    if (++done === 1) first = performance.now()
    if (done === count) resolve()
  }
  return { completed, rate: () => all.then(() => ((count - 1) / (performance.now() - first)) * 1000) }
}

/** Run `count` jobs of payload `{ n }` through a leaseq worker. */
const leaseqRun = async (name: string, count: number, n: number, options: Record<string, unknown>) => {
  const queue = new Queue(name, { connection })
  await queue.addBulk(Array.from({ length: count }, () => ({ payload: { n } })))
  const p = pace(count)
  const handler = options.isolation ? HASH : hashInProcess
  const worker = new Worker(name, handler as never, { connection, ...options })
  worker.on("completed", p.completed)
  const perSecond = await p.rate()
  await worker.close()
  await queue.close()
  return { perSecond }
}

const bullRun = async (name: string, count: number, n: number, concurrency: number) => {
  const opts = { connection: { host: "127.0.0.1", port: Number(port) } }
  const queue = new BullQueue(name, opts)
  await queue.addBulk(
    Array.from({ length: count }, () => ({ name: "j", data: { n }, opts: { removeOnComplete: true } })),
  )
  const p = pace(count)
  const worker = new BullWorker(name, HASH, { ...opts, concurrency, useWorkerThreads: true })
  worker.on("completed", p.completed)
  const perSecond = await p.rate()
  await worker.close()
  await queue.close()
  return { perSecond }
}

/** A job the pool can run without Redis: its signal aborts with `abort()`. */
const fakeJob = (i: number, payload: unknown) => {
  const controller = new AbortController()
  const job = {
    id: `j${i}`,
    payload,
    attempt: 1,
    maxAttempts: 1,
    token: i,
    signal: controller.signal,
    progress: () => {},
  }
  return { job: job as unknown as Job<unknown>, controller }
}

const poolNoop = async (isolation: "thread" | "process", count: number) => {
  const pool = startPool({ isolation, module: HASH.href, size: 1, queue: "bench", abortGraceMs: 0, onError: () => {} })
  await pool.ready
  for (let i = 0; i < 200; i++) await pool.run(fakeJob(i, { n: 0 }).job)
  const t = performance.now()
  for (let i = 0; i < count; i++) await pool.run(fakeJob(i, { n: 0 }).job)
  const us = ((performance.now() - t) / count) * 1000
  await pool.close()
  return us
}

type StartPool = typeof startPool

/** Stops of a spinning job: abort → member gone (kill → exit), → its run settled, → the next job done. */
const hardStop = async (start: StartPool, isolation: "thread" | "process", count: number) => {
  const stops: number[] = []
  const settled: number[] = []
  const next: number[] = []
  let stopped: () => void = () => {}
  const pool = start({
    isolation,
    module: SPIN.href,
    size: 1,
    queue: "bench",
    abortGraceMs: 0,
    onError: () => {},
    onStopped: (ms) => {
      stops.push(ms)
      stopped()
    },
  })
  await pool.ready
  for (let i = 0; i < count; i++) {
    await pool.run(fakeJob(i, { spin: false }).job) // a member is up
    await new Promise((r) => setTimeout(r, 100)) // and the spare (processes), if any
    const { job, controller } = fakeJob(i, { spin: true })
    const running = pool.run(job).catch(() => undefined)
    await new Promise((r) => setTimeout(r, 20)) // let it start spinning
    const gone = new Promise<void>((r) => (stopped = r))
    const t = performance.now()
    controller.abort(new JobTimedOut({ queue: "bench", jobId: job.id, token: i, timeoutMs: 1 }))
    await running
    settled.push(performance.now() - t)
    await pool.run(fakeJob(i, { spin: false }).job)
    next.push(performance.now() - t)
    await gone
  }
  await pool.close()
  return { stops, settled, next }
}

/** The ideal ceiling now: `jobs` runs of the 20 ms loop over 2 bare worker_threads (no queue, no pool), jobs/s. */
const bareThreads = async (jobs: number, n: number) => {
  const code = `
    const { parentPort, workerData } = require("node:worker_threads")
    const { createHash } = require("node:crypto")
    parentPort.on("message", (count) => {
      for (let j = 0; j < count; j++) {
        let h = Buffer.alloc(64, 1)
        for (let i = 0; i < workerData; i++) h = createHash("sha256").update(h).digest()
      }
      parentPort.postMessage("done")
    })`
  const threads = [0, 1].map(() => new Thread(code, { eval: true, workerData: n }))
  await Promise.all(threads.map((t) => new Promise((r) => t.once("online", r))))
  const t = performance.now()
  await Promise.all(
    threads.map(
      (th) =>
        new Promise((r) => {
          th.once("message", r)
          th.postMessage(jobs / 2)
        }),
    ),
  )
  const perSecond = (jobs / (performance.now() - t)) * 1000
  await Promise.all(threads.map((th) => th.terminate()))
  return perSecond
}

const n = calibrate()
console.log(`calibrated: ${n} SHA-256 rounds ≈ 20 ms on one core`)
for (let round = 1; round <= 3; round++) {
  const single = await leaseqRun(`iso-cpu-inproc-${round}`, 25, n, { concurrency: 1 })
  const lt = await leaseqRun(`iso-cpu-thread-${round}`, cpuJobs, n, { isolation: "thread", concurrency: 2 })
  const bt = await bullRun(`iso-cpu-bull-${round}`, cpuJobs, n, 2)
  const bare = await bareThreads(Math.min(cpuJobs, 100), n)
  const ideal = 2 * single.perSecond
  console.log(
    `cpu round ${round}, ${cpuJobs} jobs, concurrency 2: leaseq thread ${lt.perSecond.toFixed(1)} jobs/s, ` +
      `BullMQ useWorkerThreads ${bt.perSecond.toFixed(1)} jobs/s (×${(lt.perSecond / bt.perSecond).toFixed(2)}); ` +
      `2 × one core in-process ${ideal.toFixed(1)} (${(1000 / single.perSecond).toFixed(1)} ms/job): ${((lt.perSecond / ideal) * 100).toFixed(0)} %; ` +
      `2 bare threads now ${bare.toFixed(1)}: ${((lt.perSecond / bare) * 100).toFixed(0)} %`,
  )
}

for (const isolation of ["thread", "process"] as const)
  console.log(`pool alone, no-op, one at a time, ${isolation}: ${(await poolNoop(isolation, 5000)).toFixed(1)} µs/job`)
const inproc = await leaseqRun("iso-noop-inproc", noopJobs, 0, { concurrency: 1 })
const thread = await leaseqRun("iso-noop-thread", noopJobs, 0, { isolation: "thread", concurrency: 1 })
const overhead = (1 / thread.perSecond - 1 / inproc.perSecond) * 1e6
console.log(
  `no-op ${noopJobs} jobs, concurrency 1: in-process ${inproc.perSecond.toFixed(0)} jobs/s, thread ${thread.perSecond.toFixed(0)} jobs/s: +${overhead.toFixed(0)} µs/job`,
)
const before = process.env.ISO_BEFORE
  ? ((await import(new URL(process.env.ISO_BEFORE, `file://${process.cwd()}/`).href)) as { startPool: StartPool })
      .startPool
  : undefined
const pools: Array<[string, StartPool]> = [
  ["now", startPool],
  ...(before ? [["before", before] as [string, StartPool]] : []),
]
const p = (xs: number[]) => `p50 ${pct(xs, 0.5).toFixed(1)} ms, p99 ${pct(xs, 0.99).toFixed(1)} ms`
for (const isolation of ["thread", "process"] as const) {
  const all = new Map(
    pools.map(([label]) => [label, { stops: [] as number[], settled: [] as number[], next: [] as number[] }]),
  )
  for (let round = 0; round < 3; round++)
    for (const [label, start] of pools) {
      const s = await hardStop(start, isolation, 10)
      const into = all.get(label)!
      into.stops.push(...s.stops)
      into.settled.push(...s.settled)
      into.next.push(...s.next)
    }
  for (const [label, s] of all)
    console.log(
      `hard stop (timeout), ${isolation}, ${label}, ${s.stops.length} stops: → ${isolation} gone ${p(s.stops)}; → run settled ${p(s.settled)}; → next job done ${p(s.next)}`,
    )
}
process.exit(0)
