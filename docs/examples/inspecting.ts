// docs/getting-started.md, "Inspecting". Run: npm run example docs/examples/inspecting.ts
import { Queue, Worker } from "leaseq"

const connection = process.env.REDIS_URL
const queue = new Queue("inspecting", { connection })
await queue.addBulk([
  { payload: "a", options: { maxAttempts: 1 } },
  { payload: "b", options: { maxAttempts: 1 } },
])
// a worker whose every job fails once: with maxAttempts 1, both go to dead
const worker = new Worker("inspecting", async () => Promise.reject(new Error("downstream refused")), { connection })
await new Promise<void>((resolve) => {
  let dead = 0
  worker.on("dead", () => {
    if (++dead === 2) resolve()
  })
})
await worker.close()

// #region inspect
const stats = await queue.stats()
// { waiting, active, expired, delayed, dead, retained, oldestWaitingAgeMs, counters: { added, completed, failed, lostLeases, dead, released, … } }
const { total, jobs } = await queue.deadJobs({ offset: 0, count: 100 }) // with their last error
console.log(`${stats.dead} dead, ${total} listed`)
await queue.retryDead([jobs[0]!.id]) // fresh attempts, back of the queue
await queue.purgeDead([jobs[1]!.id]) // gone for good
await queue.verify() // every job in exactly one state (page by page: { maxLines, pageSize })
// #endregion

const after = await queue.stats()
console.log(`after retry and purge: ${after.waiting} waiting, ${after.dead} dead`)
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
