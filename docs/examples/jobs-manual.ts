// docs/jobs.md, "Manual processing" and "A job's own backoff". Run: npm run example docs/examples/jobs-manual.ts
import { LeaseLost, Queue } from "leaseq"

const queue = new Queue<{ to: string }>("jobs-manual", { connection: process.env.REDIS_URL })

const send = async (to: string) => {
  if (to.endsWith("@down.example")) throw new Error(`${to}: mail server down`)
  return { sent: to }
}

await queue.add({ to: "a@example.com" })
// #region backoff
// this job's retries wait 5 s each, whatever the worker's (or manual fail's default) backoff
await queue.add({ to: "b@down.example" }, { backoff: { type: "fixed", delayMs: 5_000 } })
// #endregion

// #region manual
const jobs = await queue.reserve({ count: 10, leaseMs: 30_000 })
for (const job of jobs) {
  try {
    await queue.complete(job.id, job.token, await send(job.payload.to))
    console.log(`${job.id}: completed`)
  } catch (error) {
    if (error instanceof LeaseLost) continue // the lease ran out: someone else has the job now
    // an attempt spent: retried after the job's backoff, or dead once its attempts are used up
    console.log(`${job.id}: ${await queue.fail(job.id, job.token, error)}`) // "retry"
  }
}
// #endregion

// a settled lease's token is refused, and changes nothing
const again = await queue.complete(jobs[0]!.id, jobs[0]!.token).catch((e: unknown) => e)
console.log("complete again:", again instanceof LeaseLost ? "LeaseLost" : again)
console.log("reserved while it waits:", (await queue.reserve()).length) // 0: its backoff runs
const stats = await queue.stats()
console.log("delayed:", stats.delayed, "completed:", stats.counters.completed, "failed:", stats.counters.failed)
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
