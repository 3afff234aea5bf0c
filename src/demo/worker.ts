/**
 * A demo worker process: `node src/demo/worker.ts <url> <queue> <label>`.
 * Each job takes 5–25 ms. Prints "started <id>" and "done <id>" lines for the demo to count.
 */
import { Worker } from "../index.ts"

const [url, queue, label] = process.argv.slice(2)
const worker = new Worker<{ n: number }>(
  queue!,
  async (job) => {
    process.stdout.write(`started ${job.id} ${job.attempt}\n`)
    await new Promise((r) => setTimeout(r, 5 + (job.payload.n % 21)))
    return job.payload.n
  },
  { connection: url, concurrency: 8, leaseMs: 1500 },
)
worker.on("completed", (job) => process.stdout.write(`done ${job.id}\n`))
worker.on("error", (e) => process.stderr.write(`[${label}] ${String(e)}\n`))
process.on("SIGTERM", () => {
  void worker.close().then(() => process.exit(0))
})
