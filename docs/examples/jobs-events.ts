// docs/jobs.md, "Events" and "Wait for a job". Run: REDIS_URL=… node --conditions=leaseq-source docs/examples/jobs-events.ts
import { Queue, WaitForTimeout, Worker } from "leaseq"

const connection = process.env.REDIS_URL
const queue = new Queue<{ n: number }>("jobs-events", { connection })
const worker = new Worker<{ n: number }>("jobs-events", async (job) => ({ square: job.payload.n ** 2 }), {
  connection,
  keepCompleted: 100, // retained results: waitFor answers with them
})

// follow the queue's events (from any process): "now" is this call, so the add below is seen
const events = queue.events()
const id = await queue.add({ n: 7 })
for await (const event of events) {
  if (event.jobId !== id) continue
  console.log(event.kind, event.kind === "active" ? `token ${event.token} on ${event.workerId}` : "")
  if (event.kind === "completed" || event.kind === "dead") break // leaving the loop closes its connection
}

// wait for a job to end: completed, dead or cancelled
const other = await queue.add({ n: 8 })
const done = await queue.waitFor(other, { timeoutMs: 30_000 })
console.log(done.state, done.result) // completed { square: 64 }

// a job that does not end in time: WaitForTimeout (the job is not changed)
const later = await queue.add({ n: 9 }, { delayMs: 3_600_000 })
await queue.waitFor(later, { timeoutMs: 100 }).catch((e) => console.log(e instanceof WaitForTimeout))

// how many events the queue keeps (about; 0 records none)
console.log("retention:", await queue.eventRetention())

await worker.close()
await queue.close()
