// docs/jobs.md, "Events" and "Wait for a job". Run: npm run example docs/examples/jobs-events.ts
import { Queue, WaitForTimeout, Worker } from "leaseq"

const connection = process.env.REDIS_URL
const queue = new Queue<{ n: number }>("jobs-events", { connection })
const worker = new Worker<{ n: number }>("jobs-events", async (job) => ({ square: job.payload.n ** 2 }), {
  connection,
})

{
  // #region follow
  const events = queue.events() // from "now": this call
  const id = await queue.add({ n: 7 })
  for await (const event of events) {
    if (event.jobId !== id) continue
    console.log(event.kind, event.kind === "active" ? `token ${event.token} on ${event.workerId}` : "")
    if (event.kind === "completed" || event.kind === "dead") break // leaving the loop closes its connection
  }
  // #endregion
}

{
  // #region wait
  const id = await queue.add({ n: 8 })
  const done = await queue.waitFor(id, { timeoutMs: 30_000 })
  console.log(done.state, done.result) // completed { square: 64 }
  // #endregion
}

// a job that does not end in time: WaitForTimeout (the job is not changed)
const later = await queue.add({ n: 9 }, { delayMs: 3_600_000 })
await queue.waitFor(later, { timeoutMs: 100 }).catch((e) => console.log(e instanceof WaitForTimeout))

// #region retention
await queue.setEventRetention(100_000) // 0 records no events at all
await queue.eventRetention() // 100000
// #endregion
console.log("retention:", await queue.eventRetention())

await worker.close()
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
