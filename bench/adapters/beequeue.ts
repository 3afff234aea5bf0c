/** Bee-Queue 2.0 adapter: jobs not stored after success, no events, no delayed-job timers. */
import BeeQueue from "bee-queue"
import { connect } from "../lib/redis.ts"
import type { Adapter, Counts, Payload, Producer, Recovery, RunningWorker, WorkerOptions } from "./types.ts"

/** The options every Bee-Queue instance of the bench gets. */
const commonOptions = (url: string) => {
  const u = new URL(url)
  return {
    redis: { host: u.hostname, port: Number(u.port) },
    getEvents: false,
    sendEvents: false,
    activateDelayedJobs: false,
    removeOnSuccess: true,
    removeOnFailure: true,
  }
}

/** One tick of Bee-Queue's checkStalledJobs (reset jobs marked last tick, then mark every active job). */
const stalledCheck = async (url: string, common: ReturnType<typeof commonOptions>, name: string): Promise<Recovery> => {
  const q = new BeeQueue<Payload>(name, { ...common, isWorker: false })
  q.on("error", () => {})
  await q.ready()
  const client = connect(url)
  await client.ping() // connected before the first timed tick
  const guardKey = `bq:${name}:stallBlock`
  return {
    async pass() {
      await client.del(guardKey)
      const reclaimed = await q.checkStalledJobs()
      return { reclaimed, calls: 1 }
    },
    async close() {
      client.disconnect()
      await q.close()
    },
  }
}

export const createBeequeue = (url: string): Adapter & { dispose(): Promise<void> } => {
  const common = commonOptions(url)
  const queues = new Map<string, BeeQueue<Payload>>()
  const queueFor = (name: string): BeeQueue<Payload> => {
    let q = queues.get(name)
    if (!q) {
      q = new BeeQueue<Payload>(name, { ...common, isWorker: false })
      q.on("error", () => {})
      queues.set(name, q)
    }
    return q
  }

  return {
    name: "beequeue",
    async producer(name): Promise<Producer> {
      const q = new BeeQueue<Payload>(name, { ...common, isWorker: false, storeJobs: false })
      q.on("error", () => {})
      await q.ready()
      return {
        async add(p) {
          await q.createJob(p).save()
        },
        async addBulk(ps) {
          const errors = await q.saveAll(ps.map((p) => q.createJob(p)))
          if (errors.size > 0) throw [...errors.values()][0]
        },
        close: () => q.close(),
      }
    },

    async worker(name, options: WorkerOptions): Promise<RunningWorker> {
      const q = new BeeQueue<Payload>(name, {
        ...common,
        isWorker: true,
        ...(options.leaseMs !== undefined ? { stallInterval: options.leaseMs } : {}),
      })
      q.on("error", () => {})
      if (options.onCompleted) {
        const cb = options.onCompleted
        q.on("succeeded", (job) => cb(String(job.id)))
      }
      await q.ready()
      q.process(options.concurrency, (job) => options.handler({ id: String(job.id), payload: job.data }))
      return {
        async close() {
          // Handlers that never settle would hold close() for its whole timeout.
          await q.close(50).catch(() => {})
        },
      }
    },

    async counts(name): Promise<Counts> {
      const h = await queueFor(name).checkHealth()
      return { waiting: h.waiting, active: h.active }
    },

    recovery: (name) => stalledCheck(url, common, name),

    async dispose() {
      await Promise.all([...queues.values()].map((q) => q.close()))
      queues.clear()
    },
  }
}
