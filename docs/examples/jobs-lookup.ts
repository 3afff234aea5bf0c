// docs/jobs.md, "Look up a job" and "Cancel". Run: npm run example docs/examples/jobs-lookup.ts
import { Queue, Worker } from "leaseq"

const connection = process.env.REDIS_URL
const queue = new Queue<{ orderId: number }>("jobs-lookup", { connection })

// a waiting job, looked up by id from any process
// #region lookup
const id = await queue.add({ orderId: 1 }, { maxAttempts: 5 })
const info = await queue.getJob(id)
console.log(info?.state, info?.payload, `attempt ${info?.attempt} of ${info?.maxAttempts}`)
// waiting { orderId: 1 } attempt 1 of 5
// #endregion

// cancel it before it runs: it leaves the queue for good
console.log("cancelled a job that was", await queue.cancel(id)) // waiting

// cancel a running job: the server revokes its lease at once, the handler's signal
// aborts within one heartbeat, and its late complete is refused (it is not retried)
const running = await queue.add({ orderId: 2 })
let started!: () => void
const isRunning = new Promise<void>((resolve) => {
  started = resolve
})
const worker = new Worker<{ orderId: number }>(
  "jobs-lookup",
  async (job) => {
    started()
    await new Promise((resolve) => job.signal.addEventListener("abort", resolve))
  },
  { connection, leaseMs: 3_000 },
)
await isRunning
console.log("state while it runs:", (await queue.getJob(running))?.state) // active
// #region cancel
console.log("cancelled a job that was", await queue.cancel(running)) // active
await worker.close()
console.log("cancel again:", await queue.cancel(running)) // undefined: already finished
// #endregion

await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
