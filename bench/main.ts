/**
 * leaseq benchmark: leaseq, BullMQ and Bee-Queue side by side on one Redis.
 *
 *   node bench/main.ts [--quick] [--only <id-prefix>[,…]] [--libs leaseq,bullmq,beequeue]
 *
 * Starts a throw-away redis-server on 127.0.0.1 (or uses REDIS_URL, which it
 * FLUSHALLs between runs). For every scenario it runs the libraries in turn —
 * leaseq, bullmq, beequeue, repeat — with the same payload and concurrency,
 * several repetitions, FLUSHALL before each run, and reports median and
 * min–max. Writes bench/results/<date>-<mode>.json and latest-<mode>.json.
 * The last line printed is the headline: leaseq against BullMQ.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { availableParallelism, cpus, loadavg, totalmem } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Redis } from "ioredis"
import { startRedisServer } from "../src/testing/RedisServer.ts"
import { createAdapter, type DisposableAdapter } from "./adapters/index.ts"
import { leaseqUnavailable } from "./adapters/leaseq.ts"
import { type BenchJob, LIBS, type LibName, payload } from "./adapters/types.ts"
import { renderChart } from "./chart.ts"
import { floorAdd, floorAddBatched, floorProcess, floorProcessBatched } from "./floor.ts"
import { connect, flushAll, info, type ProbeResult, probe, scriptNames, usedMemory } from "./lib/redis.ts"
import { fmt, max, median, min, quantile, sleep, waitFor } from "./lib/stats.ts"
import { startWorkers } from "./lib/workers.ts"
import { evaluateTargets, targetsTable } from "./targets.ts"

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, "..")
const Q = "bench"

// ---------------------------------------------------------------- config

const args = process.argv.slice(2)
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : undefined
}
const quick = args.includes("--quick")
const mode = quick ? "quick" : "full"
const only = flag("--only")?.split(",")
const libsWanted = (flag("--libs")?.split(",") as LibName[] | undefined) ?? [...LIBS]

const config = quick
  ? {
      reps: 2,
      /** Runs of the scenarios that hold thousands of jobs in flight (each run fills, holds, recovers). */
      inFlightReps: 1,
      addSeqJobs: 2_000,
      addConcurrentJobs: 5_000,
      addBulkJobs: 10_000,
      processJobs: 3_000,
      pickupSamples: 100,
      pickupGapMs: 5,
      memoryJobs: 10_000,
      holdLeaseMs: 2_000,
      reclaim: [20_000],
      keepaliveAt: [] as number[],
      quickSkipReclaim: [20_000],
      quickSkipReclaimLibs: ["beequeue"] as LibName[],
      completeInFlight: [1_000, 20_000],
      completeProbes: 100,
      floorJobs: 10_000,
    }
  : {
      reps: 5,
      inFlightReps: 5,
      addSeqJobs: 10_000,
      addConcurrentJobs: 20_000,
      addBulkJobs: 50_000,
      processJobs: 20_000,
      pickupSamples: 200,
      pickupGapMs: 10,
      memoryJobs: 10_000,
      holdLeaseMs: 4_000,
      reclaim: [20_000, 100_000],
      keepaliveAt: [20_000],
      quickSkipReclaim: [] as number[],
      quickSkipReclaimLibs: [] as LibName[],
      completeInFlight: [1_000, 50_000, 100_000],
      completeProbes: 200,
      floorJobs: 100_000,
    }
/** Repetitions of an in-flight scenario: one run at 100k (a peer's quadratic reclaim takes minutes), else inFlightReps. */
const repsFor = (size: number, what: "reclaim" | "complete"): number =>
  what === "reclaim" && size >= 100_000 ? 1 : size >= 100_000 ? Math.min(config.inFlightReps, 2) : config.inFlightReps

// ---------------------------------------------------------------- results model

interface Cell {
  runs: number[]
  median?: number
  min?: number
  max?: number
  na?: string
  extra: Record<string, unknown>[]
}
interface Scenario {
  id: string
  title: string
  unit: string
  better: "higher" | "lower"
  note?: string
  libs: Partial<Record<LibName, Cell>>
  floor?: Cell
}
const scenarios: Scenario[] = []
const scenario = (id: string, title: string, unit: string, better: "higher" | "lower", note?: string): Scenario => {
  let s = scenarios.find((x) => x.id === id)
  if (!s) {
    s = { id, title, unit, better, libs: {}, ...(note ? { note } : {}) }
    scenarios.push(s)
  }
  return s
}
const cellOf = (s: Scenario, lib: LibName): Cell => {
  let c = s.libs[lib]
  if (!c) {
    c = { runs: [], extra: [] }
    s.libs[lib] = c
  }
  return c
}
const record = (s: Scenario, lib: LibName, value: number, extra: Record<string, unknown> = {}): void => {
  const c = cellOf(s, lib)
  c.runs.push(value)
  c.extra.push(extra)
  log(`  ${s.id.padEnd(22)} ${lib.padEnd(9)} ${fmt(value).padStart(10)} ${s.unit}${extraText(extra)}`)
}
const markNa = (s: Scenario, lib: LibName, reason: string): void => {
  const c = cellOf(s, lib)
  if (!c.na) {
    c.na = reason
    log(`  ${s.id.padEnd(22)} ${lib.padEnd(9)}        n/a (${reason})`)
  }
}
const extraText = (e: Record<string, unknown>): string => {
  const parts = Object.entries(e)
    .filter(([, v]) => typeof v === "number" || typeof v === "string")
    .map(([k, v]) => `${k}=${typeof v === "number" ? fmt(v) : v}`)
  return parts.length ? `  (${parts.join(", ")})` : ""
}
const log = (line: string): void => {
  process.stdout.write(`${line}\n`)
}

// ---------------------------------------------------------------- harness state

let admin: Redis
let url: string
let names: Map<string, string>
const adapters = new Map<LibName, DisposableAdapter>()
const unavailable = new Map<LibName, string>()

const wanted = (id: string): boolean => !only || only.some((p) => id.startsWith(p))

const fresh = async (): Promise<void> => {
  await flushAll(admin)
}

/** Fill the queue with `n` jobs (untimed), in bulk calls of 1,000. */
const fill = async (a: DisposableAdapter, n: number, probeAt?: (i: number) => boolean): Promise<void> => {
  const p = await a.producer(Q)
  try {
    for (let from = 0; from < n; from += 1000) {
      const batch = []
      for (let i = from; i < Math.min(n, from + 1000); i++) batch.push(payload(i, probeAt?.(i)))
      await p.addBulk(batch)
    }
  } finally {
    await p.close()
  }
}

const withDeadline = <A>(what: string, ms: number, p: Promise<A>): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p,
    new Promise<A>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no result after ${ms} ms`)), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}

/** A handler that never finishes (but gives up when the library aborts it). */
const never = (job: BenchJob): Promise<unknown> =>
  new Promise((_, reject) => {
    job.signal?.addEventListener("abort", () => reject(new Error("aborted")))
  })

/** Run `body` once per repetition per library, alternating libraries. */
const eachRun = async (
  reps: number,
  body: (a: DisposableAdapter, lib: LibName, rep: number) => Promise<void>,
  onNa?: (lib: LibName, reason: string) => void,
): Promise<void> => {
  for (let rep = 0; rep < reps; rep++) {
    for (const lib of libsWanted) {
      const reason = unavailable.get(lib)
      if (reason) {
        onNa?.(lib, reason)
        continue
      }
      const a = adapters.get(lib)
      if (!a) continue
      await fresh()
      try {
        await body(a, lib, rep)
      } catch (e) {
        log(
          `  ! ${lib} rep ${rep + 1}: ${String((e as Error)?.stack ?? e)
            .split("\n")
            .slice(0, 3)
            .join(" | ")}`,
        )
        onNa?.(lib, `error: ${String((e as Error)?.message ?? e).slice(0, 120)}`)
      }
    }
  }
  await fresh()
}

// ---------------------------------------------------------------- scenarios

const addScenarios = async (): Promise<void> => {
  const kinds = [
    { id: "add.seq", title: "add, one at a time", n: config.addSeqJobs, inFlight: 1, bulk: 0 },
    { id: "add.c64", title: "add, 64 in flight", n: config.addConcurrentJobs, inFlight: 64, bulk: 0 },
    { id: "add.bulk100", title: "add, bulk 100", n: config.addBulkJobs, inFlight: 1, bulk: 100 },
  ]
  for (const k of kinds) {
    if (!wanted(k.id)) continue
    const s = scenario(k.id, `${k.title} (${fmt(k.n)} jobs)`, "jobs/s", "higher")
    log(`${s.title}`)
    await eachRun(
      config.reps,
      async (a, lib) => {
        const p = await a.producer(Q)
        await p.add(payload(-1)) // connect and load scripts before the clock starts
        let next = 0
        const cpu0 = process.cpuUsage()
        const t0 = performance.now()
        const { server } = await probe(
          admin,
          names,
          async () => {
            if (k.bulk > 0) {
              for (let from = 0; from < k.n; from += k.bulk) {
                const batch = []
                for (let i = from; i < Math.min(k.n, from + k.bulk); i++) batch.push(payload(i))
                await p.addBulk(batch)
              }
            } else {
              await Promise.all(
                Array.from({ length: k.inFlight }, async () => {
                  while (next < k.n) await p.add(payload(next++))
                }),
              )
            }
          },
          { slowlog: false },
        )
        const secs = (performance.now() - t0) / 1000
        const cpu = process.cpuUsage(cpu0)
        await p.close()
        record(s, lib, k.n / secs, {
          nodeCpuUsPerJob: (cpu.user + cpu.system) / k.n,
          redisCpuUsPerJob: server.cpuUs / k.n,
          redisCmdsPerJob: server.commands / k.n,
        })
      },
      (lib, reason) => markNa(s, lib, reason),
    )
  }
}

const processScenarios = async (): Promise<void> => {
  for (const c of [1, 16, 100]) {
    const id = `process.c${c}`
    if (!wanted(id)) continue
    const n = config.processJobs
    const s = scenario(
      id,
      `process, no-op handler, concurrency ${c} (${fmt(n)} jobs${quick ? ", quick mode" : ""})`,
      "jobs/s",
      "higher",
    )
    log(s.title)
    await eachRun(
      config.reps,
      async (a, lib) => {
        await fill(a, n)
        let first = 0
        let done = 0
        const cpu0 = process.cpuUsage()
        let finish: (t: number) => void = () => {}
        const finished = new Promise<number>((resolve) => {
          finish = resolve
        })
        const { value: elapsed, server } = await probe(
          admin,
          names,
          async () => {
            const w = await a.worker(Q, {
              concurrency: c,
              handler: async () => {
                if (first === 0) first = performance.now()
                return undefined
              },
              onCompleted: () => {
                if (++done === n) finish(performance.now())
              },
            })
            try {
              const end = await withDeadline(`${lib} process c${c}`, 300_000, finished)
              return end - first
            } finally {
              await w.close()
            }
          },
          { slowlog: false },
        )
        const cpu = process.cpuUsage(cpu0)
        const left = await a.counts(Q)
        record(s, lib, n / (elapsed / 1000), {
          nodeCpuUsPerJob: (cpu.user + cpu.system) / n,
          redisCpuUsPerJob: server.cpuUs / n,
          redisCmdsPerJob: server.commands / n,
          ...(left.waiting + left.active > 0 ? { left: left.waiting + left.active } : {}),
        })
      },
      (lib, reason) => markNa(s, lib, reason),
    )
  }
}

const pickupScenario = async (): Promise<void> => {
  if (!wanted("pickup")) return
  const samples = config.pickupSamples
  const p50 = scenario("pickup.p50", `pickup latency p50, idle worker (${samples} samples)`, "ms", "lower")
  const p99 = scenario("pickup.p99", `pickup latency p99, idle worker (${samples} samples)`, "ms", "lower")
  log(`pickup latency (${samples} samples, ${config.pickupGapMs} ms gap)`)
  await eachRun(
    config.reps,
    async (a, lib) => {
      const producer = await a.producer(Q)
      let started: (t: number) => void = () => {}
      let completed: () => void = () => {}
      const w = await a.worker(Q, {
        concurrency: 1,
        handler: async () => {
          started(performance.now())
          return undefined
        },
        onCompleted: () => completed(),
      })
      const lat: number[] = []
      try {
        // Warm-up job: connections up and scripts loaded.
        const warm = new Promise<void>((resolve) => {
          completed = resolve
        })
        await producer.add(payload(-1))
        await withDeadline("warm-up", 10_000, warm)
        await sleep(100)
        for (let i = 0; i < samples; i++) {
          const start = new Promise<number>((resolve) => {
            started = resolve
          })
          const done = new Promise<void>((resolve) => {
            completed = resolve
          })
          const t0 = performance.now()
          await producer.add(payload(i))
          const t = await withDeadline(`pickup sample ${i}`, 10_000, start)
          lat.push(t - t0)
          await withDeadline(`completion ${i}`, 10_000, done)
          await sleep(config.pickupGapMs)
        }
      } finally {
        await w.close()
        await producer.close()
      }
      record(p50, lib, quantile(lat, 0.5))
      record(p99, lib, quantile(lat, 0.99), { max: max(lat) })
    },
    (lib, reason) => {
      markNa(p50, lib, reason)
      markNa(p99, lib, reason)
    },
  )
}

const memoryScenario = async (): Promise<void> => {
  if (!wanted("memory")) return
  const n = config.memoryJobs
  const s = scenario("memory.waiting", `memory per waiting job (${fmt(n)} jobs, INFO used_memory)`, "bytes", "lower")
  log(s.title)
  await eachRun(
    config.reps,
    async (a, lib) => {
      const p = await a.producer(Q)
      const warm = []
      for (let i = 0; i < 100; i++) warm.push(payload(-i - 1))
      await p.addBulk(warm)
      const before = await usedMemory(admin)
      for (let from = 0; from < n; from += 100) {
        const batch = []
        for (let i = from; i < Math.min(n, from + 100); i++) batch.push(payload(i))
        await p.addBulk(batch)
      }
      const after = await usedMemory(admin)
      await p.close()
      record(s, lib, (after - before) / n)
    },
    (lib, reason) => markNa(s, lib, reason),
  )
}

// ---- jobs in flight, held by a child process that is then SIGKILLed

interface Holder {
  child: ChildProcess
  kill(): Promise<void>
}

const startHolder = async (lib: LibName, n: number, leaseMs: number): Promise<Holder> => {
  const child = spawn(process.execPath, [join(here, "holder.ts"), lib, url, Q, String(n), String(leaseMs)], {
    stdio: ["pipe", "pipe", "inherit"],
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL")
      await exited
    }
  }
  let out = ""
  try {
    await withDeadline(
      `${lib} holder (${n} jobs)`,
      300_000,
      new Promise<void>((resolve, reject) => {
        child.stdout?.on("data", (d: Buffer) => {
          out += d.toString()
          if (out.includes("held")) resolve()
        })
        child.once("exit", (code) => reject(new Error(`holder exited with code ${code}`)))
      }),
    )
  } catch (e) {
    await kill()
    throw e
  }
  return { child, kill }
}

interface Ticks {
  /** Wall time of each recovery tick (ms). */
  tickMs: number[]
  reclaimed: number
  calls: number
  server: ProbeResult
}

/** Run recovery ticks until `target` jobs are recovered (at most `maxTicks`), optionally sleeping between ticks. */
const runTicks = async (a: DisposableAdapter, target: number, maxTicks: number, gapMs = 0): Promise<Ticks> => {
  const recovery = a.recovery ? await a.recovery(Q) : undefined
  if (!recovery) throw new Error("no recovery")
  try {
    const { value, server } = await probe(admin, names, async () => {
      const tickMs: number[] = []
      let reclaimed = 0
      let calls = 0
      for (let i = 0; i < maxTicks; i++) {
        if (i > 0 && gapMs > 0) await sleep(gapMs)
        const t0 = performance.now()
        const r = await recovery.pass()
        tickMs.push(performance.now() - t0)
        reclaimed += r.reclaimed
        calls += r.calls
        if (target > 0 && reclaimed >= target) break
      }
      return { tickMs, reclaimed, calls }
    })
    return { ...value, server }
  } finally {
    await recovery.close()
  }
}

const labelsText = (server: ProbeResult): string =>
  Object.entries(server.byLabel)
    .sort((x, y) => y[1].maxUs - x[1].maxUs)
    .slice(0, 3)
    .map(([k, v]) => `${k} ${fmt(v.maxUs / 1000)}ms×${v.count}`)
    .join("; ")

/** Mass reclaim: a child process holds N jobs, is SIGKILLed, leases run out, the library's recovery brings them back. */
const reclaimScenarios = async (): Promise<void> => {
  const leaseMs = config.holdLeaseMs
  for (const size of config.reclaim) {
    const k = `${size / 1000}k`
    if (!wanted(`reclaim.${k}`) && !wanted(`keepalive.${k}`)) continue
    const keepalive = config.keepaliveAt.includes(size) && wanted(`keepalive.${k}`)
    const rTotal = scenario(
      `reclaim.${k}`,
      `mass reclaim, ${k} jobs with expired leases/locks`,
      "ms",
      "lower",
      "sum of the recovery ticks needed to move every job back (BullMQ/Bee-Queue: a marking tick + a moving tick; the stalledInterval between them is not counted)",
    )
    const rMax = scenario(`reclaim.${k}.maxcall`, `longest single Redis call during mass reclaim ${k}`, "ms", "lower")
    const kaLoad = keepalive
      ? scenario(
          `keepalive.${k}`,
          `keeping ${k} leases alive (lease ${leaseMs} ms): Redis time per second`,
          "ms/s",
          "lower",
          "execution time of every command in a window of one lease / the window, while a live holder only renews",
        )
      : undefined
    const kaMax = keepalive
      ? scenario(`keepalive.${k}.maxcall`, `longest single Redis call keeping ${k} leases alive`, "ms", "lower")
      : undefined
    const skip = quick && config.quickSkipReclaim.includes(size) ? config.quickSkipReclaimLibs : []
    log(`mass reclaim ${k} (holder lease ${leaseMs} ms${keepalive ? ", keep-alive window first" : ""})`)
    const na = (lib: LibName, reason: string) => {
      markNa(rTotal, lib, reason)
      markNa(rMax, lib, reason)
      if (kaLoad && kaMax) {
        markNa(kaLoad, lib, reason)
        markNa(kaMax, lib, reason)
      }
    }
    await eachRun(
      repsFor(size, "reclaim"),
      async (a, lib) => {
        if (!a.recovery) return na(lib, "the library has no recovery for lost jobs")
        if (skip.includes(lib)) return na(lib, "not run in quick mode: one run takes ~10 s; see the full run")
        await fill(a, size)
        const holder = await startHolder(lib, size, leaseMs)
        try {
          if (kaLoad && kaMax) {
            const { server } = await probe(admin, names, () => sleep(leaseMs))
            record(kaLoad, lib, server.sumUs / leaseMs, { top: labelsText(server) })
            record(kaMax, lib, server.maxUs / 1000, { call: server.maxLabel })
          }
          await holder.kill()
          await sleep(leaseMs + 300) // every lease/lock has now run out
          const t = await runTicks(a, size, 4)
          const left = await a.counts(Q)
          // a run that recovered less than it held measured nothing: say so, record no figure
          if (t.reclaimed < size) throw new Error(`${lib} recovered ${t.reclaimed} of ${size} held jobs in 4 ticks`)
          record(
            rTotal,
            lib,
            t.tickMs.reduce((x, y) => x + y, 0),
            {
              ticks: t.tickMs.length,
              calls: t.calls,
              recovered: t.reclaimed,
              ...(left.active > 0 ? { stillActive: left.active } : {}),
            },
          )
          record(rMax, lib, t.server.maxUs / 1000, { call: t.server.maxLabel })
        } finally {
          await holder.kill()
        }
      },
      na,
    )
  }
}

/**
 * K jobs held in flight by live in-process workers (long leases, nothing
 * expires). First one recovery tick on this healthy set (K ≥ 20k), then the
 * cost of completing probe jobs — half the oldest in flight, half the newest.
 */
const completeScenarios = async (): Promise<void> => {
  const probes = config.completeProbes
  for (const k of config.completeInFlight) {
    const kk = `${k / 1000}k`
    const id = `complete.${kk}`
    const healthy = k >= 20_000 && wanted(`healthy.${kk}`)
    if (!wanted(id) && !healthy) continue
    const sUs = scenario(
      id,
      `Redis time per completed job, ${kk} other jobs in flight`,
      "µs",
      "lower",
      "execution time of every Redis command in the window (SLOWLOG at threshold 0) / completions; half the probes are the oldest jobs in flight, half the newest",
    )
    const sLat = scenario(`${id}.latency`, `complete round trip p50, ${kk} in flight`, "ms", "lower")
    const sMax = scenario(`${id}.maxcall`, `longest single Redis call while completing, ${kk} in flight`, "ms", "lower")
    const hTick = healthy
      ? scenario(
          `healthy.${kk}`,
          `recovery tick on a healthy in-flight set (${kk} leased, none expired)`,
          "ms",
          "lower",
          "wall time of one tick of the library's own recovery in its steady state (leaseq sweep; BullMQ stalled checker; Bee-Queue checkStalledJobs)",
        )
      : undefined
    const hMax = healthy
      ? scenario(`healthy.${kk}.maxcall`, `longest single Redis call of that tick, ${kk} healthy`, "ms", "lower")
      : undefined
    log(`${kk} jobs in flight: ${healthy ? "healthy recovery tick, then " : ""}complete cost (${probes} probes)`)
    const na = (lib: LibName, reason: string) => {
      markNa(sUs, lib, reason)
      markNa(sLat, lib, reason)
      markNa(sMax, lib, reason)
      if (hTick && hMax) {
        markNa(hTick, lib, reason)
        markNa(hMax, lib, reason)
      }
    }
    await eachRun(
      repsFor(k, "complete"),
      async (a, lib) => {
        const total = k + probes
        // Oldest probes first, then the fillers, then the newest probes.
        await fill(a, total, (i) => i < probes / 2 || i >= total - probes / 2)
        const resolvers: (() => void)[] = []
        let completed: () => void = () => {}
        const w = await startWorkers(a, Q, total, {
          leaseMs: 120_000,
          holder: true,
          handler: (job) =>
            job.payload.probe
              ? new Promise<void>((resolve) => {
                  resolvers.push(resolve)
                })
              : never(job),
          onCompleted: () => completed(),
        })
        try {
          await waitFor(`${total} in flight`, async () => (await a.counts(Q)).active >= total, 300_000, 100)
          await waitFor("probe handlers", () => resolvers.length >= probes, 30_000)
          if (hTick && hMax) {
            if (a.recovery) {
              const t = await runTicks(a, 0, 1)
              record(hTick, lib, median(t.tickMs), t.reclaimed > 0 ? { wronglyReclaimed: t.reclaimed } : {})
              record(hMax, lib, t.server.maxUs / 1000, { call: t.server.maxLabel })
            } else {
              markNa(hTick, lib, "the library has no recovery for lost jobs")
              markNa(hMax, lib, "the library has no recovery for lost jobs")
            }
          }
          const lat: number[] = []
          const { server } = await probe(admin, names, async () => {
            for (const resolve of resolvers.splice(0, probes)) {
              const done = new Promise<void>((r) => {
                completed = r
              })
              const t0 = performance.now()
              resolve()
              await withDeadline("completion", 30_000, done)
              lat.push(performance.now() - t0)
            }
          })
          const oldest = lat.slice(0, probes / 2)
          const newest = lat.slice(probes / 2)
          record(sUs, lib, server.sumUs / probes, {
            redisCpuUsPerJob: server.cpuUs / probes,
            redisCmdsPerJob: server.commands / probes,
          })
          record(sLat, lib, quantile(lat, 0.5), { oldestP50: quantile(oldest, 0.5), newestP50: quantile(newest, 0.5) })
          record(sMax, lib, server.maxUs / 1000, { call: server.maxLabel })
        } finally {
          await fresh()
          await w.close()
        }
      },
      na,
    )
  }
}

const floorScenario = async (): Promise<void> => {
  if (!wanted("floor")) return
  const n = config.floorJobs
  const sAdd = scenario(
    "floor.add",
    `Redis floor: add = LPUSH+HSET, per job, pipelined (${fmt(n)} jobs)`,
    "jobs/s",
    "higher",
  )
  const sProc = scenario(
    "floor.process",
    `Redis floor: claim (RPOP+ZADD) + ack (ZREM+HDEL), per job, pipelined (${fmt(n)} jobs)`,
    "jobs/s",
    "higher",
  )
  const sAddB = scenario(
    "floor.add.batched",
    `Redis floor, batched: the same commands, variadic over 100 jobs, add`,
    "jobs/s",
    "higher",
  )
  const sProcB = scenario(
    "floor.process.batched",
    `Redis floor, batched: claim + ack, variadic over 100 jobs`,
    "jobs/s",
    "higher",
  )
  log("Redis floor (raw commands, pipelines of 100 jobs, 4 in flight, one Node process)")
  for (let rep = 0; rep < config.reps; rep++) {
    await fresh()
    const clients = Array.from({ length: 4 }, () => connect(url))
    try {
      await Promise.all(clients.map((c) => c.ping()))
      const add = await floorAdd(clients, n)
      const proc = await floorProcess(clients, n)
      await fresh()
      const addB = await floorAddBatched(clients, n)
      const procB = await floorProcessBatched(clients, n)
      for (const [s, v] of [
        [sAdd, add],
        [sProc, proc],
        [sAddB, addB],
        [sProcB, procB],
      ] as const) {
        s.floor ??= { runs: [], extra: [] }
        s.floor.runs.push(v)
        log(`  ${s.id.padEnd(22)} ${"floor".padEnd(9)} ${fmt(v).padStart(10)} jobs/s`)
      }
    } finally {
      for (const c of clients) c.disconnect()
    }
  }
  await fresh()
}

// ---------------------------------------------------------------- summary

const summarize = (c: Cell | undefined): void => {
  if (!c || c.runs.length === 0) return
  c.median = median(c.runs)
  c.min = min(c.runs)
  c.max = max(c.runs)
}

const med = (id: string, lib: LibName | "floor"): number | undefined => {
  const s = scenarios.find((x) => x.id === id)
  const c = lib === "floor" ? s?.floor : s?.libs[lib]
  return c && c.runs.length > 0 ? median(c.runs) : undefined
}

/** How many times better leaseq is than `peer` on scenario `id` (>1 = leaseq better). */
export const ratio = (id: string, peer: LibName | "floor"): number | undefined => {
  const s = scenarios.find((x) => x.id === id)
  const l = med(id, "leaseq")
  const p = med(id, peer)
  if (!s || l === undefined || p === undefined || l <= 0 || p <= 0) return undefined
  return s.better === "higher" ? l / p : p / l
}

const x = (r: number | undefined): string => (r === undefined ? "n/a" : `${r >= 10 ? r.toFixed(0) : r.toFixed(1)}x`)

const headline = (): string => {
  const parts: string[] = []
  const want: [string, string][] = [
    ["process.c100", "process c100"],
    ["process.c16", "c16"],
    ["process.c1", "c1"],
    ["add.bulk100", "bulk add"],
    ["add.c64", "add c64"],
    ["add.seq", "add seq"],
    ["pickup.p99", "pickup p99"],
    ...config.reclaim.map((n): [string, string] => [`reclaim.${n / 1000}k`, `reclaim ${n / 1000}k`]),
    ...config.completeInFlight
      .filter((n) => n >= 20_000)
      .map((n): [string, string] => [`healthy.${n / 1000}k.maxcall`, `healthy ${n / 1000}k sweep`]),
    ...config.completeInFlight
      .filter((n) => n >= 20_000)
      .map((n): [string, string] => [`complete.${n / 1000}k`, `complete at ${n / 1000}k`]),
    ["memory.waiting", "memory/job"],
  ]
  for (const [id, label] of want) {
    if (!scenarios.some((s) => s.id === id)) continue
    parts.push(`${label} ${x(ratio(id, "bullmq"))}${parts.length === 0 ? " bullmq" : ""}`)
  }
  const c100 = med("process.c100", "leaseq")
  const floor = med("floor.process", "floor")
  const floorB = med("floor.process.batched", "floor")
  if (c100 !== undefined && floor !== undefined)
    parts.push(
      `c100 = ${Math.round((100 * c100) / floor)}% of redis floor${floorB !== undefined ? ` (${Math.round((100 * c100) / floorB)}% of batched floor)` : ""}`,
    )
  const why = unavailable.get("leaseq")
  if (why) return `headline: leaseq not measured (${why}); peers only — see the table above`
  return `headline: ${parts.join(", ")}`
}

const table = (): string[] => {
  const libs = libsWanted
  const lines: string[] = []
  const head = ["scenario", "unit", ...libs, "floor", "leaseq/bullmq"]
  lines.push(`| ${head.join(" | ")} |`)
  lines.push(`|${head.map(() => "---").join("|")}|`)
  for (const s of scenarios) {
    const cell = (c: Cell | undefined): string => {
      if (!c) return ""
      if (c.runs.length === 0) return c.na ? "n/a" : ""
      const m = median(c.runs)
      return c.runs.length > 1 ? `${fmt(m)} (${fmt(min(c.runs))}–${fmt(max(c.runs))})` : fmt(m)
    }
    lines.push(
      `| ${s.title} | ${s.unit} | ${libs.map((l) => cell(s.libs[l])).join(" | ")} | ${cell(s.floor)} | ${x(ratio(s.id, "bullmq"))} |`,
    )
  }
  return lines
}

// ---------------------------------------------------------------- main

const sectionSeconds: Record<string, number> = {}

const git = (gitArgs: string[]): string => {
  const r = spawnSync("git", gitArgs, { cwd: root, encoding: "utf8" })
  return r.status === 0 ? r.stdout.trim() : "unknown"
}

const main = async (): Promise<void> => {
  const started = Date.now()
  const load0 = loadavg()[0] ?? 0
  const watchdog = setTimeout(
    () => {
      log(`benchmark: gave up after ${quick ? 5 : 120} minutes`)
      process.exit(1)
    },
    (quick ? 5 : 120) * 60_000,
  )
  watchdog.unref()

  const own = process.env.REDIS_URL ? undefined : await startRedisServer()
  url = process.env.REDIS_URL ?? own?.url ?? ""
  if (!/^redis:\/\/(127\.0\.0\.1|localhost)(:\d+)?/.test(url))
    throw new Error(`REDIS_URL must point at 127.0.0.1: ${url}`)
  admin = connect(url)
  names = await scriptNames(root)
  const server = await info(admin, "server")
  const machine = {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model ?? "unknown",
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    redis: server.redis_version ?? "unknown",
    redisUrl: own ? "local redis-server started by the harness" : "REDIS_URL",
    node: process.version,
    loadAverage1mAtStart: Math.round(load0 * 100) / 100,
    /** The leaseq code measured: commit, and whether src/ or lua/ had uncommitted changes. */
    // BENCH_COMMIT: set when running from an exported snapshot of a commit (no .git there).
    commit: process.env.BENCH_COMMIT ?? git(["rev-parse", "--short", "HEAD"]),
    uncommittedEngineChanges: process.env.BENCH_COMMIT
      ? false
      : git(["status", "--porcelain", "--", "src", "lua"]) !== "",
  }
  log(
    `leaseq bench (${mode}): ${machine.nproc} cores, ${machine.memoryGiB} GiB, ${machine.cpu}, redis ${machine.redis}, node ${machine.node}`,
  )
  log(
    `leaseq at ${machine.commit}${machine.uncommittedEngineChanges ? " + uncommitted changes in src/ or lua/" : ""}; libraries: ${libsWanted.join(", ")}; ${config.reps} repetitions (${config.inFlightReps} for the in-flight scenarios); FLUSHALL between runs`,
  )
  if (load0 > machine.nproc * 0.5)
    log(
      `warning: load average ${load0.toFixed(2)} on ${machine.nproc} cores before the run: other processes share the CPU, figures will be noisy`,
    )

  for (const lib of libsWanted) {
    if (lib === "leaseq") {
      const why = await leaseqUnavailable()
      if (why) {
        unavailable.set("leaseq", why)
        log(`leaseq: not measured — ${why}`)
        continue
      }
    }
    adapters.set(lib, await createAdapter(lib, url))
  }

  try {
    const sections: [string, () => Promise<void>][] = [
      ["add", addScenarios],
      ["process", processScenarios],
      ["pickup", pickupScenario],
      ["memory", memoryScenario],
      ["in flight / complete", completeScenarios],
      ["reclaim", reclaimScenarios],
      ["floor", floorScenario],
    ]
    for (const [name, run] of sections) {
      const t0 = Date.now()
      await run()
      sectionSeconds[name] = Math.round((Date.now() - t0) / 100) / 10
    }
    log(
      `sections (s): ${Object.entries(sectionSeconds)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}`,
    )
  } finally {
    for (const a of adapters.values()) await a.dispose().catch(() => {})
    admin.disconnect()
    await own?.stop()
  }

  for (const s of scenarios) {
    for (const c of Object.values(s.libs)) summarize(c)
    summarize(s.floor)
  }
  const seconds = Math.round((Date.now() - started) / 1000)
  const head = headline()
  const targets = evaluateTargets((id, lib) => med(id, lib), {
    healthy: config.completeInFlight.includes(50_000) ? 50_000 : (config.completeInFlight.at(-1) ?? 0),
    completeBig: config.completeInFlight.at(-1) ?? 0,
  })
  const date = new Date().toISOString().slice(0, 10)
  const result = {
    date: new Date().toISOString(),
    mode,
    seconds,
    sectionSeconds,
    loadAverage1mAtEnd: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    machine,
    config,
    libraries: Object.fromEntries(libsWanted.map((l) => [l, unavailable.get(l) ?? "measured"])),
    scenarios,
    ratiosVsBullmq: Object.fromEntries(scenarios.map((s) => [s.id, ratio(s.id, "bullmq") ?? null])),
    ratiosVsBeequeue: Object.fromEntries(scenarios.map((s) => [s.id, ratio(s.id, "beequeue") ?? null])),
    targets,
    headline: head,
  }
  const dir = join(here, "results")
  mkdirSync(dir, { recursive: true })
  const partial = only !== undefined || libsWanted.length !== LIBS.length
  const base = partial ? `${date}-${mode}-partial` : `${date}-${mode}`
  writeFileSync(join(dir, `${base}.json`), `${JSON.stringify(result, null, 2)}\n`)
  if (!partial) writeFileSync(join(dir, `latest-${mode}.json`), `${JSON.stringify(result, null, 2)}\n`)
  if (!partial && !quick) writeFileSync(join(root, "docs", "performance.svg"), renderChart(result))
  clearTimeout(watchdog)

  log("")
  for (const line of table()) log(line)
  log("")
  log("targets:")
  for (const line of targetsTable(targets)) log(line)
  log("")
  log(
    `${mode} run: ${seconds} s; results in bench/results/${base}.json${partial ? " (partial run: latest-* untouched)" : ""}`,
  )
  log(head)
}

await main()
// Everything is written. Bee-Queue 2.0 keeps the process alive for about a minute
// after closing a worker whose handlers never settled (complete-cost scenario).
process.exit(0)
