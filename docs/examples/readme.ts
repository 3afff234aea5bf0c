// README.md, "Use it". Run: npm run example docs/examples/readme.ts
// The process stops itself with a real SIGTERM, as a process manager would.
const sendEmail = async (to: string, options: { signal: AbortSignal }) => {
  options.signal.throwIfAborted()
  console.log("sent to", to)
}

// #region use-it
import { Queue, Worker } from "leaseq"

const queue = new Queue<{ to: string }>("emails", { connection: process.env.REDIS_URL })
await queue.add({ to: "ada@example.com" }, { maxAttempts: 5 })

const worker = new Worker<{ to: string }>(
  "emails",
  async (job) => {
    // job.signal aborts if the lease is lost; job.token fences downstream writes
    await sendEmail(job.payload.to, { signal: job.signal })
  },
  { connection: process.env.REDIS_URL, concurrency: 10, leaseMs: 30_000 },
)
worker.on("dead", (job, reason) => console.error("job", job.id, "is dead:", reason))

// on shutdown: unfinished jobs are released and run again at once elsewhere
process.once("SIGTERM", async () => {
  await worker.close()
  await queue.close()
})
// #endregion

await new Promise((resolve) => worker.once("completed", resolve))
await queue.obliterate() // remove what this example made (its worker is idle, and closes next)
process.kill(process.pid, "SIGTERM")
