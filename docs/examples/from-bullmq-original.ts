// docs/from-bullmq.md, "A worked port": the BullMQ app before the port (bullmq is a devDependency of this repo). Run: npm run example docs/examples/from-bullmq-original.ts
import { Queue, QueueEvents, Worker } from "bullmq"

const url = new URL(process.env.REDIS_URL ?? "redis://127.0.0.1:6379")
const connection = { host: url.hostname, port: Number(url.port || 6379) }

// #region bullmq
interface Order {
  readonly id: string
  readonly cents: number
}

const queue = new Queue<Order, { receipt: string }>("bullmq-orders", {
  connection,
  defaultJobOptions: { attempts: 5, backoff: { type: "exponential", delay: 1000 }, removeOnComplete: 100 },
})
const events = new QueueEvents("bullmq-orders", { connection })
await events.waitUntilReady()

const worker = new Worker<Order, { receipt: string }>(
  "bullmq-orders",
  async (job) => {
    await job.updateProgress(50)
    return { receipt: `r-${job.data.id}` }
  },
  { connection, concurrency: 10, lockDuration: 30_000 },
)
worker.on("failed", (job, error) => console.error(job?.id, error.message))

const job = await queue.add("charge", { id: "o-1", cents: 4200 }, { jobId: "o-1", delay: 100 })
const result = await job.waitUntilFinished(events, 30_000)
console.log("charged", result.receipt)

await worker.close()
await events.close()
await queue.close()
// #endregion
