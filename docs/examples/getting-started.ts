// docs/getting-started.md, "A first queue". Run: npm run example docs/examples/getting-started.ts
import { Queue, Worker } from "leaseq"

interface Email {
  readonly to: string
  readonly subject: string
}

const queue = new Queue<Email>("getting-started", { connection: process.env.REDIS_URL })
const id = await queue.add({ to: "ada@example.com", subject: "hello" })
console.log("added", id)

const worker = new Worker<Email, string>(
  "getting-started",
  async (job) => {
    console.log(`sending "${job.payload.subject}" to ${job.payload.to} (attempt ${job.attempt}, token ${job.token})`)
    return "sent"
  },
  { connection: process.env.REDIS_URL, concurrency: 4 },
)
worker.on("completed", async (job, result) => {
  console.log("completed", job.id, result)
  await worker.close()
  await queue.obliterate() // a sample: remove its queue, jobs and all
  await queue.close()
})
