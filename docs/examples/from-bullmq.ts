// docs/from-bullmq.md, "A worked port": the app of from-bullmq-original.ts on leaseq. Run: npm run example docs/examples/from-bullmq.ts
import { Queue, Worker } from "leaseq"

const connection = process.env.REDIS_URL // a URL, ioredis options or an ioredis client; default 127.0.0.1:6379

// #region leaseq
interface Order {
  readonly id: string
  readonly cents: number
}

// the result type is the queue's second parameter
const queue = new Queue<Order, { receipt: string }>("leaseq-orders", {
  connection,
  defaultJobOptions: { maxAttempts: 5 }, // backoff is the worker's; retention the queue's (setRetention)
})

const worker = new Worker<Order, { receipt: string }>(
  "leaseq-orders",
  async (job) => {
    job.progress(50) // stored within 250 ms
    return { receipt: `r-${job.payload.id}` }
  },
  { connection, concurrency: 10, leaseMs: 30_000, backoff: { type: "exponential", delayMs: 1000 } },
)
worker.on("failed", (job, error) => console.error(job.id, error))

// the order id as the job id: a second add of o-1 writes nothing and answers the same id
const id = await queue.add({ id: "o-1", cents: 4200 }, { name: "charge", id: "o-1", delayMs: 100 })
const done = await queue.waitFor(id, { timeoutMs: 30_000 }) // no QueueEvents object: any Queue can wait
console.log("charged", done.result?.receipt)

await worker.close()
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
// #endregion
