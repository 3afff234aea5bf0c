// docs/flow-control.md, "Batches". Run: npm run example docs/examples/batches.ts
import { Queue, Worker } from "leaseq"

const connection = process.env.REDIS_URL
const queue = new Queue<{ email: string }>("batches-example", { connection })
// one attempt each, so the bad row goes to dead at once
await queue.addBulk(
  ["a@example.com", "not-an-email", "b@example.com"].map((email) => ({
    payload: { email },
    options: { maxAttempts: 1 },
  })),
)

/** Stands for one bulk write of many rows (one round trip for the whole batch). */
const insertMany = async (rows: ReadonlyArray<{ email: string }>) => rows.length

let completed = 0
let failed = 0
const done = new Promise<void>((resolve) => {
  // #region worker
  const worker = new Worker<{ email: string }>(
    "batches-example",
    async (jobs) => {
      // one job of the batch fails on its own (retried with backoff, or dead), the others go on
      for (const job of jobs) if (!job.payload.email.includes("@")) job.fail(new Error("not an email"))
      await insertMany(jobs.filter((job) => job.payload.email.includes("@")).map((job) => job.payload))
      // resolving completes every job not failed; throwing would fail them all
    },
    { batch: { size: 100, waitMs: 50 }, concurrency: 200 },
  )
  // #endregion
  const end = () => {
    if (completed + failed === 3) void worker.close().then(resolve)
  }
  worker.on("completed", () => {
    completed++
    end()
  })
  worker.on("failed", () => {
    failed++
    end()
  })
})
await done
console.log(`completed ${completed}, failed ${failed}`)
if (completed !== 2 || failed !== 1) throw new Error("expected 2 completed and 1 failed")
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
