// docs/flow-control.md: rate limits, global concurrency, RateLimited and Snooze. Run: npm run example docs/examples/flow-control.ts
import { Queue, RateLimited, Snooze, Worker } from "leaseq"

const connection = process.env.REDIS_URL
const queue = new Queue<{ n: number }>("flow-control", { connection })

// #region limits
// at most 5 jobs leased per second, and at most 2 running at once, over every worker
await queue.setRateLimit({ max: 5, perMs: 1000 })
await queue.setConcurrency(2)
console.log("limits:", await queue.rateLimit(), await queue.concurrency())
// #endregion

/** A stand-in for a downstream API: it answers 429 once, then 200. */
let calls = 0
const callApi = async () => (++calls === 2 ? { status: 429, retryAfterMs: 200 } : { status: 200, retryAfterMs: 0 })
const ready = (n: number) => n !== 3 || calls > 4

let done = 0
let allDone!: () => void
const finished = new Promise<void>((resolve) => {
  allDone = resolve
})
// #region errors
const worker = new Worker<{ n: number }>(
  "flow-control",
  async (job) => {
    // not ready yet: run again in 100 ms, without spending an attempt
    if (!ready(job.payload.n)) throw new Snooze({ delayMs: 100 })
    const res = await callApi()
    // the API said "too many": back to the front, and the queue leases nothing for that long
    if (res.status === 429) throw new RateLimited({ retryAfterMs: res.retryAfterMs })
  },
  { connection, concurrency: 4 },
)
// #endregion
worker.on("completed", () => {
  if (++done === 6) allDone()
})
await queue.addBulk([1, 2, 3, 4, 5, 6].map((n) => ({ payload: { n } })))
await finished
const { counters, limits } = await queue.stats()
console.log("completed:", counters.completed, "snoozed:", counters.snoozed, "rate-limited:", counters.rateLimited)
console.log("stats limits:", limits)

// #region clear
await queue.setRateLimit(null)
await queue.setConcurrency(null)
// #endregion

await worker.close()
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
