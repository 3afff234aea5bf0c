// docs/schedules.md. Run: npm run example docs/examples/schedules.ts
import { Queue, Worker } from "leaseq"

const connection = process.env.REDIS_URL
const queue = new Queue<{ report: string }>("schedules-example", { connection })

// #region schedule
// every 1 s (on whole seconds), and every day at 03:30 in New York, daylight saving included
await queue.schedule("heartbeat", { every: 1000 }, { payload: { report: "beat" } })
await queue.schedule(
  "nightly-report",
  { cron: "30 3 * * *", tz: "America/New_York" },
  { payload: { report: "daily" }, options: { maxAttempts: 5 } },
)
for (const s of await queue.schedules()) console.log(s.name, "next run", new Date(s.nextRunAt).toISOString())
// #endregion

// #region worker
let firstBeat!: (at: number) => void
const beat = new Promise<number>((resolve) => {
  firstBeat = resolve
})
const worker = new Worker<{ report: string }>(
  "schedules-example",
  async (job) => {
    // job.id is "<schedule>@<tick>"; job.scheduledFor is the tick (ms, Redis clock)
    if (job.scheduledFor !== undefined) firstBeat(job.scheduledFor)
  },
  { connection }, // default options: a worker ticks due schedules as it starts, then at each tick
)
console.log("a tick ran, scheduled for", new Date(await beat).toISOString())
// #endregion

// #region unschedule
await queue.unschedule("heartbeat") // no later tick makes a job
await queue.unschedule("nightly-report")
// #endregion
await worker.close()
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
