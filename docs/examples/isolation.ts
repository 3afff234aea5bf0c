// docs/workers.md, "Isolation". Run: npm run example docs/examples/isolation.ts
import { Queue, Worker } from "leaseq"

const connection = process.env.REDIS_URL
const queue = new Queue<{ ms: number }>("isolation-example", { connection })
await queue.obliterate({ force: true })

// #region worker
const worker = new Worker("isolation-example", new URL("./handlers/blocking.ts", import.meta.url), {
  connection,
  isolation: "thread", // or "process"
  concurrency: 2, // two threads
  leaseMs: 3000, // shorter than a job: the heartbeats run here, not in the handler's thread
})
// #endregion
const lost: string[] = []
worker.on("lease-lost", (job, reason) => lost.push(`${job.id} ${reason}`))
await worker.ready

const ids = await queue.addBulk(Array.from({ length: 2 }, () => ({ payload: { ms: 4000 } })))
const results = await Promise.all(ids.map((id) => queue.waitFor(id)))
if (lost.length > 0 || results.some((r) => r.state !== "completed")) throw new Error(`leases lost: ${lost}`)
console.log(
  "2 jobs held their threads, each longer than its lease:",
  results.map((r) => r.result),
)
await worker.close()
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
