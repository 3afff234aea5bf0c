/** BullMQ 6.7 adapter: public Queue/Worker API, jobs removed on completion. */
import { Queue, Worker } from "bullmq"
import { connect } from "../lib/redis.ts"
import type { Adapter, BenchJob, Counts, Payload, Producer, Recovery, RunningWorker, WorkerOptions } from "./types.ts"

type Connection = { host: string; port: number; maxRetriesPerRequest: null }

/**
 * One tick of BullMQ's stalled-jobs checker: exactly what a Worker runs
 * every `stalledInterval` (script moveStalledJobsToWait: move the jobs
 * marked last tick whose lock is gone, then mark every active job).
 */
const stalledChecker = async (url: string, connection: Connection, name: string): Promise<Recovery> => {
  const w = new Worker(name, async () => undefined, { connection, autorun: false })
  w.on("error", () => {})
  let stalled = 0
  w.on("stalled", () => {
    stalled++
  })
  await w.waitUntilReady()
  const client = connect(url)
  await client.ping() // connected before the first timed tick
  const guardKey = w.keys["stalled-check"] as string
  const tick = w as unknown as { moveStalledJobsToWait(): Promise<void> }
  return {
    async pass() {
      await client.del(guardKey)
      stalled = 0
      await tick.moveStalledJobsToWait()
      return { reclaimed: stalled, calls: 1 }
    },
    async close() {
      client.disconnect()
      await w.close(true)
    },
  }
}

export const createBullmq = (url: string): Adapter & { dispose(): Promise<void> } => {
  const u = new URL(url)
  const connection: Connection = { host: u.hostname, port: Number(u.port), maxRetriesPerRequest: null }
  const queues = new Map<string, Queue>()
  const queueFor = (name: string): Queue => {
    let q = queues.get(name)
    if (!q) {
      q = new Queue(name, {
        connection,
        defaultJobOptions: { removeOnComplete: true, removeOnFail: true },
      })
      q.on("error", () => {})
      queues.set(name, q)
    }
    return q
  }

  return {
    name: "bullmq",
    async producer(name): Promise<Producer> {
      const q = new Queue(name, {
        connection,
        defaultJobOptions: { removeOnComplete: true, removeOnFail: true },
      })
      q.on("error", () => {})
      await q.waitUntilReady()
      return {
        async add(p: Payload) {
          await q.add("j", p)
        },
        async addBulk(ps) {
          await q.addBulk(ps.map((p) => ({ name: "j", data: p })))
        },
        close: () => q.close(),
      }
    },

    async worker(name, options: WorkerOptions): Promise<RunningWorker> {
      const w = new Worker<Payload>(
        name,
        (job) => options.handler({ id: String(job.id), payload: job.data } satisfies BenchJob),
        {
          connection,
          concurrency: options.concurrency,
          ...(options.leaseMs !== undefined ? { lockDuration: options.leaseMs } : {}),
          ...(options.holder ? { skipStalledCheck: true } : {}),
        },
      )
      w.on("error", () => {})
      if (options.onCompleted) {
        const cb = options.onCompleted
        w.on("completed", (job) => cb(String(job.id)))
      }
      return {
        close: () => w.close(true),
      }
    },

    async counts(name): Promise<Counts> {
      const c = await queueFor(name).getJobCounts("waiting", "active")
      return { waiting: c.waiting ?? 0, active: c.active ?? 0 }
    },

    recovery: (name) => stalledChecker(url, connection, name),

    async dispose() {
      await Promise.all([...queues.values()].map((q) => q.close()))
      queues.clear()
    },
  }
}
