/**
 * The pool choice for isolated handlers (issue 32; bench/HISTORY.md, "Isolation: the
 * pool"): per-job overhead of a no-op task, one at a time, and the hard stop of one
 * running task that never yields (abort → its promise settled; → a next task done on a
 * replacement), for piscina, tinypool and leaseq's own pool over node:worker_threads
 * (src/engine/isolation/Pool.ts), alternating rounds in one run.
 *
 * piscina and tinypool are not dependencies: install them elsewhere and name the folder.
 *   mkdir /tmp/poolbench && cd /tmp/poolbench && npm init -y && npm i piscina tinypool
 *   node --conditions=leaseq-source bench/pools.ts /tmp/poolbench/node_modules [tasks=3000] [stops=20]
 */
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { startPool } from "../src/engine/isolation/Pool.ts"
import { JobTimedOut } from "../src/engine/model/Errors.ts"
import type { Job } from "../src/engine/queue/Job.ts"

const [modules = "/tmp/poolbench/node_modules", tasksArg = "3000", stopsArg = "20"] = process.argv.slice(2)
const TASKS = Number(tasksArg)
const STOPS = Number(stopsArg)
const SPIN = new URL("./lib/isolation-spin.mjs", import.meta.url)
const load = async (file: string) => (await import(pathToFileURL(join(modules, file)).href)) as never
const { Piscina } = (await load("piscina/dist/esm-wrapper.mjs")) as { Piscina: new (o: object) => PoolLike }
const { Tinypool } = (await load("tinypool/dist/index.js")) as { Tinypool: new (o: object) => PoolLike }

interface PoolLike {
  run: (task: unknown, o?: { signal?: AbortSignal }) => Promise<unknown>
  destroy: () => Promise<void>
}

/** One pool under test: run a task (aborted by `signal`), and stop it. */
interface Candidate {
  readonly name: string
  readonly run: (payload: { spin: boolean }, signal?: AbortSignal) => Promise<unknown>
  readonly close: () => Promise<void>
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!

const fakeJob = (i: number, payload: unknown, signal: AbortSignal) =>
  ({
    id: `j${i}`,
    payload,
    attempt: 1,
    maxAttempts: 1,
    token: i,
    signal,
    progress: () => {},
  }) as unknown as Job<unknown>

const leaseq = async (): Promise<Candidate> => {
  const pool = startPool({
    isolation: "thread",
    module: SPIN.href,
    size: 1,
    queue: "b",
    abortGraceMs: 0,
    onError: () => {},
  })
  await pool.ready
  let i = 0
  return {
    name: "leaseq (worker_threads)",
    run: (payload, signal) => pool.run(fakeJob(++i, payload, signal ?? new AbortController().signal)),
    close: () => pool.close(),
  }
}

const library = async (name: string, make: () => PoolLike): Promise<Candidate> => {
  const pool = make()
  await pool.run({ payload: { spin: false } }) // its thread is up
  return {
    name,
    run: (payload, signal) => pool.run({ payload }, signal ? { signal } : {}),
    close: () => pool.destroy(),
  }
}

const candidates = [
  leaseq,
  () => library("piscina", () => new Piscina({ filename: SPIN.href, minThreads: 1, maxThreads: 1 })),
  () => library("tinypool", () => new Tinypool({ filename: SPIN.href, minThreads: 1, maxThreads: 1 })),
]

/** µs per no-op task, one at a time. */
const overhead = async (c: Candidate) => {
  for (let i = 0; i < 200; i++) await c.run({ spin: false })
  const t = performance.now()
  for (let i = 0; i < TASKS; i++) await c.run({ spin: false })
  return ((performance.now() - t) / TASKS) * 1000
}

/** Abort a spinning task: ms until its promise settles, and until a next task is done (on a replacement). */
const hardStop = async (c: Candidate) => {
  const settled: number[] = []
  const next: number[] = []
  let stuck = 0
  for (let i = 0; i < STOPS; i++) {
    const controller = new AbortController()
    const running = c.run({ spin: true }, controller.signal).then(
      () => "returned",
      () => "rejected",
    )
    await new Promise((r) => setTimeout(r, 20)) // let it spin
    const t = performance.now()
    controller.abort(new JobTimedOut({ queue: "b", jobId: `s${i}`, token: i, timeoutMs: 1 }))
    const outcome = await Promise.race([running, new Promise((r) => setTimeout(() => r("stuck"), 2000))])
    if (outcome === "stuck") {
      stuck++
      break
    }
    settled.push(performance.now() - t)
    await c.run({ spin: false })
    next.push(performance.now() - t)
  }
  return { settled, next, stuck }
}

const rows = new Map<string, { us: number[]; settled: number[]; next: number[]; stuck: number }>()
for (let round = 1; round <= 2; round++) {
  for (const make of candidates) {
    const c = await make()
    const row = rows.get(c.name) ?? { us: [], settled: [], next: [], stuck: 0 }
    row.us.push(await overhead(c))
    const s = await hardStop(c)
    row.settled.push(...s.settled)
    row.next.push(...s.next)
    row.stuck += s.stuck
    rows.set(c.name, row)
    await c.close()
  }
}
for (const [name, r] of rows) {
  const stop = r.settled.length
    ? `abort → settled p50 ${pct(r.settled, 0.5).toFixed(1)} / p99 ${pct(r.settled, 0.99).toFixed(1)} ms, → next task done p50 ${pct(r.next, 0.5).toFixed(0)} / p99 ${pct(r.next, 0.99).toFixed(0)} ms`
    : "no stop measured"
  console.log(
    `${name}: no-op ${r.us.map((u) => u.toFixed(1)).join(" / ")} µs/task; ${stop}${r.stuck ? `; ${r.stuck} abort(s) left the task running past 2 s` : ""}`,
  )
}
process.exit(0)
