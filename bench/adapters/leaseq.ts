/**
 * leaseq adapter: the Promise API (src/index.ts). Loaded dynamically so the
 * harness still runs the peers while the engine is being written.
 */
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import type { Adapter, Counts, Payload, Producer, Recovery, RunningWorker, WorkerOptions } from "./types.ts"

type LqModule = typeof import("../../src/index.ts")
type LqQueue = InstanceType<LqModule["Queue"]>

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
      q = new m.Queue<Payload>(name, { connection: url })
      queues.set(name, q)
    }
    return q
  }

  return {
    name: "leaseq",
    async producer(name): Promise<Producer> {
      const q = new m.Queue<Payload>(name, { connection: url })
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
      // jobs removed on completion, as the peers are configured (leaseq keeps 1,000 for an
      // hour by default: its cost is in bench/HISTORY.md, "Retention by default")
      await queueFor(name).setRetention({ completed: { count: 0 }, cancelled: { count: 0 } })
      const w = new m.Worker<Payload>(name, (job) => options.handler(job), {
        connection: url,
        concurrency: options.concurrency,
        // The harness flushes Redis before closing workers whose handlers never finish.
        shutdownGraceMs: 0,
        ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
        // a holder's leases must run out after leaseMs, as the peers' locks do: no server-side grace
        ...(options.holder ? { sweep: false, leaseGraceMs: 0 } : {}),
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

    /** leaseq's sweep pass, as a worker or `leaseq sweep` runs it: bounded calls of the default limit (500) until nothing expired is left. */
    async recovery(name): Promise<Recovery> {
      const q = new m.Queue<Payload>(name, { connection: url })
      await q.stats() // connected and scripts checked before the first timed tick
      return {
        async pass() {
          const r = await q.sweep()
          return { reclaimed: r.reclaimed + r.dead, calls: r.calls }
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
