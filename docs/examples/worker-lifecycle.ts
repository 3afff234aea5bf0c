// docs/workers.md, "Graceful shutdown". Run: npm run example docs/examples/worker-lifecycle.ts
import { Queue, Worker } from "leaseq"

const connection = process.env.REDIS_URL
const queue = new Queue<{ n: number }>("worker-lifecycle", { connection })
await queue.addBulk(Array.from({ length: 20 }, (_, n) => ({ payload: { n } })))

let seen = 0
const worker = new Worker<{ n: number }, number>(
  "worker-lifecycle",
  async (job) => {
    if (job.payload.n === 7 && job.attempt === 1) throw new Error("flaky downstream") // retried after backoff
    // long work should watch job.signal: it aborts when the lease is lost or on shutdown
    await new Promise((resolve) => setTimeout(resolve, 10))
    job.signal.throwIfAborted()
    return job.payload.n * 2
  },
  {
    connection,
    concurrency: 5,
    leaseMs: 10_000, // heartbeats every ~3.3 s keep it; a crashed worker's jobs come back after 10 s
    backoff: { type: "fixed", delayMs: 50 },
    shutdownGraceMs: 5_000,
  },
)
worker.on("failed", (job, error, willRetry) =>
  console.log(`job ${job.payload.n} failed: ${error}; retry: ${willRetry}`),
)
worker.on("lease-lost", (job, reason) => console.log(`lost the lease of ${job.id}: ${reason}`))
worker.on("dead", (job, reason) => console.log(`job ${job.id} is dead: ${reason}`))
worker.on("error", (error) => console.log("worker error (it keeps going):", error))

await new Promise<void>((resolve) => {
  worker.on("completed", () => {
    if (++seen === 20) resolve()
  })
})
console.log("completed", seen, "state", worker.state)
await queue.obliterate() // remove what this example made (its worker is idle, and closes next)
await queue.close()

// #region shutdown
process.on("SIGTERM", async () => {
  await worker.close() // stop reserving, let handlers finish, release the rest
  process.exit(0)
})
// #endregion
process.kill(process.pid, "SIGTERM") // what a process manager sends to stop the service
