// docs/flow-control.md, "Priorities". Run: npm run example docs/examples/flow-priorities.ts
import { JobNotWaiting, Queue, Worker } from "leaseq"

const connection = process.env.REDIS_URL
const queue = new Queue<string>("flow-priorities", { connection })

// #region priorities
await queue.addBulk([
  { payload: "report", options: { priority: 5 } },
  { payload: "thumbnail", options: { priority: 5 } },
  { payload: "invoice" }, // priority 0, the default: before every other
])
await queue.add("password-reset", { priority: 1 }) // ahead of the priority-5 backlog
const late = await queue.add("export", { priority: 9 })
await queue.add("retry-me-first", { priority: 5, lifo: true }) // the front of priority 5
await queue.changePriority(late, 2) // moves to the back of priority 2
// run order: invoice, password-reset, export, retry-me-first, report, thumbnail
// #endregion

const order: string[] = []
let allDone!: () => void
const done = new Promise<void>((resolve) => {
  allDone = resolve
})
const worker = new Worker<string>(
  "flow-priorities",
  async (job) => {
    order.push(job.payload)
    if (order.length === 6) allDone()
  },
  { connection, concurrency: 1, prefetch: 0 },
)
await done
console.log("ran:", order.join(", "))
if (order.join() !== "invoice,password-reset,export,retry-me-first,report,thumbnail") {
  throw new Error(`unexpected order: ${order.join(", ")}`)
}

// #region not-waiting
try {
  await queue.changePriority(late, 0) // it ran: only a waiting or delayed job can move
} catch (e) {
  if (!(e instanceof JobNotWaiting)) throw e
  console.log(e.state) // "missing": completed and not retained
}
// #endregion

await worker.close()
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
