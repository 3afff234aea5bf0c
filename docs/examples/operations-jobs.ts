// docs/operations.md, "Queue operations": list, promote, retry, drain, clean, obliterate. Run: npm run example docs/examples/operations-jobs.ts
import { Queue, WrongJobState } from "leaseq"

const connection = process.env.REDIS_URL
const queue = new Queue<{ orderId: number }>("operations-jobs", { connection })
await queue.obliterate({ force: true }) // a clean start for the example
await queue.addBulk([1, 2, 3].map((orderId) => ({ payload: { orderId } })))
const later = await queue.add({ orderId: 4 }, { delayMs: 3_600_000 })

// #region list
let cursor: string | undefined
do {
  const page = await queue.getJobs("waiting", { count: 2, cursor })
  for (const job of page.jobs) console.log(job.id, job.payload)
  cursor = page.cursor // absent on the last page
} while (cursor !== undefined)
// #endregion

// #region one-job
console.log(await queue.promote(later)) // "delayed": it is waiting now, at the back
try {
  await queue.retry(later) // only a completed, cancelled or dead job runs again
} catch (e) {
  if (e instanceof WrongJobState) console.log(e.state) // "waiting": nothing was changed
}
await queue.reschedule(later, { delayMs: 60_000 }) // delayed again, due in a minute
await queue.updatePayload(later, { orderId: 40 })
// #endregion

// #region bulk
console.log(await queue.drain({ delayed: true })) // { waiting: 3, delayed: 1, calls: 1 }
console.log(await queue.clean("dead", { olderThanMs: 24 * 3_600_000 })) // { deleted: 0, calls: 1 }
console.log(await queue.obliterate()) // { active: 0 }; refused (QueueHasActiveJobs) while jobs run
// #endregion
await queue.close()
