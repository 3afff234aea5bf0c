// docs/jobs.md, "Pause and resume". Run: npm run example docs/examples/jobs-pause.ts
import { Queue, Worker } from "leaseq"

const connection = process.env.REDIS_URL
const queue = new Queue<number>("jobs-pause", { connection })

// #region pause
await queue.pause() // workers lease nothing from now on; adds still go in
await queue.addBulk([{ payload: 1 }, { payload: 2 }, { payload: 3 }])
console.log("paused:", await queue.isPaused(), "waiting:", (await queue.stats()).waiting)
// #endregion

let ran = 0
let allDone!: () => void
const done = new Promise<void>((resolve) => {
  allDone = resolve
})
const worker = new Worker<number>(
  "jobs-pause",
  async () => {
    if (++ran === 3) allDone()
  },
  { connection },
)
await queue.resume() // idle workers wake at once (through the queue's marker)
await done
console.log("ran after resume:", ran)

await worker.close()
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
