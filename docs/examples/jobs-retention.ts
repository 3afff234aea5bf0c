// docs/jobs.md, "Retention". Run: npm run example docs/examples/jobs-retention.ts
import { Queue, Worker } from "leaseq"

const connection = process.env.REDIS_URL
const queue = new Queue<{ orderId: number }, { receipt: string }>("jobs-retention", { connection })

// #region policy
// stored in Redis, for every process using the queue; what is not given takes its default
await queue.setRetention({
  completed: { count: 10_000, ageMs: 24 * 3_600_000 }, // the newest 10,000, for a day
  dead: { ageMs: 7 * 24 * 3_600_000 }, // dead jobs a week (default: until retried or purged)
})
console.log(await queue.retention())
// { completed: { count: 10000, ageMs: 86400000 }, cancelled: { count: 1000, ageMs: 3600000 }, dead: { ageMs: 604800000 } }
// #endregion

const worker = new Worker<{ orderId: number }, { receipt: string }>(
  "jobs-retention",
  async (job) => ({ receipt: `r-${job.payload.orderId}` }),
  { connection },
)

// #region later
const id = await queue.add({ orderId: 7 })
await queue.waitFor(id, { timeoutMs: 30_000 })
// any process, later (within the retention): the job answers with its result
const info = await queue.getJob(id)
console.log(info?.state, info?.result, info?.finishedAt) // completed { receipt: 'r-7' } <ms, Redis clock>
// #endregion

await worker.close()
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
