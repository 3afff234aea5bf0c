/**
 * leaseq adapter: the Promise API (src/index.ts). Loaded dynamically so the
 * harness still runs the peers while the engine is being written.
 */
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import type { Adapter, Counts, Payload, Producer, Recovery, RunningWorker, WorkerOptions } from "./types.ts"

interface LqJob {
  readonly id: string
  readonly payload: Payload
  readonly signal: AbortSignal
}
interface LqQueue {
  add(payload: Payload, options?: object): Promise<string>
  addBulk(jobs: ReadonlyArray<{ payload: Payload }>): Promise<ReadonlyArray<string>>
  stats(): Promise<{ waiting: number; active: number }>
  sweep(options?: { limit?: number }): Promise<{ reclaimed: number; dead: number; promoted: number; more: boolean }>
  close(): Promise<void>
}
interface LqWorker {
  on(event: "completed", fn: (job: LqJob, result: unknown) => void): unknown
  on(event: "error", fn: (error: unknown) => void): unknown
  close(): Promise<void>
}
interface LqModule {
  Queue: new (name: string, options?: object) => LqQueue
  Worker: new (name: string, handler: (job: LqJob) => Promise<unknown>, options?: object) => LqWorker
}

const entry = new URL("../../src/index.ts", import.meta.url)

/** Why leaseq cannot be benchmarked yet, or undefined when it can. */
export const leaseqUnavailable = async (): Promise<string | undefined> => {
  if (!existsSync(fileURLToPath(entry))) return "src/index.ts does not exist yet"
  try {
    const m = (await import(entry.href)) as Partial<LqModule>
    if (typeof m.Queue !== "function" || typeof m.Worker !== "function") return "src/index.ts exports no Queue/Worker"
    return undefined
  } catch (e) {
    return `src/index.ts failed to load: ${String(e).split("\n")[0]}`
  }
}

export const createLeaseq = async (url: string): Promise<Adapter & { dispose(): Promise<void> }> => {
  const m = (await import(entry.href)) as LqModule
  const queues = new Map<string, LqQueue>()
  const queueFor = (name: string): LqQueue => {
    let q = queues.get(name)
    if (!q) {
      q = new m.Queue(name, { connection: url })
      queues.set(name, q)
    }
    return q
  }

  return {
    name: "leaseq",
    async producer(name): Promise<Producer> {
      const q = new m.Queue(name, { connection: url })
      return {
        async add(p) {
          await q.add(p)
        },
        async addBulk(ps) {
          await q.addBulk(ps.map((payload) => ({ payload })))
        },
        close: () => q.close(),
      }
    },

    async worker(name, options: WorkerOptions): Promise<RunningWorker> {
      const w = new m.Worker(name, (job) => options.handler(job), {
        connection: url,
        concurrency: options.concurrency,
        ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
        ...(options.holder ? { sweep: false } : {}),
      })
      w.on("error", () => {})
      if (options.onCompleted) {
        const cb = options.onCompleted
        w.on("completed", (job) => cb(job.id))
      }
      return { close: () => w.close() }
    },

    async counts(name): Promise<Counts> {
      const s = await queueFor(name).stats()
      return { waiting: s.waiting, active: s.active }
    },

    /** leaseq's sweep, as a worker or `leaseq sweep` runs it: bounded calls until nothing more is expired. */
    async recovery(name): Promise<Recovery> {
      const q = new m.Queue(name, { connection: url })
      return {
        async pass() {
          let reclaimed = 0
          let calls = 0
          // Bounded: 10,000 calls of 1,000 is ten times the largest scenario.
          for (let i = 0; i < 10_000; i++) {
            const r = await q.sweep({ limit: 1000 })
            calls++
            reclaimed += r.reclaimed + r.dead
            if (!r.more) break
          }
          return { reclaimed, calls }
        },
        close: () => q.close(),
      }
    },

    async dispose() {
      await Promise.all([...queues.values()].map((q) => q.close()))
      queues.clear()
    },
  }
}
