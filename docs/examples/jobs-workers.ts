// docs/jobs.md, "Timeouts", "Progress" and "Workers". Run: npm run example docs/examples/jobs-workers.ts
import { JobTimedOut, Queue, Worker } from "leaseq"

const queue = new Queue<{ pages: number }>("jobs-workers", { connection: process.env.REDIS_URL })

let slowStarted = false
const worker = new Worker<{ pages: number }>(
  "jobs-workers",
  async (job) => {
    if (job.payload.pages > 100) {
      // a handler that honours its signal stops when the timeout aborts it
      slowStarted = true
      await new Promise((_, reject) => job.signal.addEventListener("abort", () => reject(job.signal.reason)))
    }
    // #region progress
    for (let page = 1; page <= job.payload.pages; page++) {
      job.progress({ page, of: job.payload.pages }) // any JSON value, stored within 250 ms
    }
    // #endregion
    return job.payload.pages
  },
  { concurrency: 2, timeoutMs: 60_000, heartbeatMs: 200, backoff: { type: "fixed", delayMs: 0 } },
)
await worker.ready

// the registry: every live worker, kept fresh by its heartbeat
// #region workers
for (const w of await queue.workers()) {
  console.log(`worker ${w.id}: ${w.state}, ${w.running}/${w.concurrency} running, seen ${new Date(w.lastSeenAt)}`)
}
// #endregion

const finished = new Promise<void>((resolve) => {
  let left = 2
  const one = () => {
    if (--left === 0) resolve()
  }
  worker.on("completed", (job, pages) => {
    console.log(`job ${job.id} done: ${pages} pages`)
    one()
  })
  worker.on("dead", (job, reason, error) => {
    console.log(`job ${job.id} dead: ${reason} (${error instanceof JobTimedOut ? error.message : error})`)
    one()
  })
})
await queue.add({ pages: 3 })
// its own timeoutMs beats the worker's default; one attempt only, so a timeout makes it dead
await queue.add({ pages: 1_000 }, { timeoutMs: 300, maxAttempts: 1 })
await finished
console.log("the slow job ran:", slowStarted)

await worker.close()
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
