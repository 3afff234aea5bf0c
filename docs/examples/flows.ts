// docs/flows.md, the worked example (BullMQ #3403). Run: npm run example docs/examples/flows.ts
import { Queue, Worker } from "leaseq"

const connection = process.env.REDIS_URL
const queue = new Queue<string>("flows-example", { connection })
const ran: string[] = []
const worker = new Worker<string>("flows-example", async (job) => void ran.push(job.payload), { connection })

// #region open
// the end job waits, open, for children that arrive while it waits
const end = await queue.add("end", { open: true })
for (const part of ["part-1", "part-2", "part-3"]) {
  await queue.addChildren(end, [{ payload: part }], { onChildFailure: "fail" })
}
await queue.seal(end) // no more children: "end" runs once all three completed
// #endregion

await queue.waitFor(end, { timeoutMs: 30_000 })
console.log("ran:", ran.join(", "))
if (ran.at(-1) !== "end" || ran.length !== 4) throw new Error(`unexpected: ${ran.join(", ")}`)

// #region tree
const tree = await queue.addFlow({
  payload: "report",
  children: [{ payload: "fetch-a" }, { payload: "fetch-b", queue: "flows-example" }],
})
await queue.waitFor(tree.id, { timeoutMs: 30_000 })
const deps = await queue.getDependencies(tree.id) // each child: queue, id, state, result
// #endregion
console.log("children:", deps.children.map((c) => c.state).join(", "))

await worker.close()
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
