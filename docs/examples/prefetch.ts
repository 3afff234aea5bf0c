// docs/workers.md, "Prefetch". Run: npm run example docs/examples/prefetch.ts
import { Queue, Worker } from "leaseq"

const connection = process.env.REDIS_URL
const queue = new Queue<{ n: number }>("prefetch-example", { connection })

/** Run `count` jobs through a worker with these options; returns the most jobs active at once that a handler saw. */
const drain = async (count: number, options: { prefetch?: number | "auto" }) => {
  await queue.addBulk(Array.from({ length: count }, (_, n) => ({ payload: { n } })))
  let done = 0
  let mostActive = 0
  const finished = new Promise<void>((resolve) => {
    const worker = new Worker<{ n: number }>(
      "prefetch-example",
      async (job) => {
        // every 20th job looks at the queue: how many jobs does this worker hold?
        if (job.payload.n % 20 === 0) mostActive = Math.max(mostActive, (await queue.stats()).active)
      },
      { connection, concurrency: 1, ...options },
    )
    worker.on("completed", () => {
      if (++done === count) void worker.close().then(resolve)
    })
  })
  await finished
  return mostActive
}

// the default ("auto"): quick handlers, so the worker holds a few more jobs than it runs
console.log("auto: most active at once", await drain(200, {}))
// prefetch 0: never more than `concurrency` (1) held
const strict = await drain(200, { prefetch: 0 })
console.log("prefetch 0: most active at once", strict)
if (strict > 1) throw new Error("prefetch 0 held more than concurrency")

await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
