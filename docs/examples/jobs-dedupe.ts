// docs/jobs.md, "Dedupe". Run: npm run example docs/examples/jobs-dedupe.ts
import { Queue } from "leaseq"

const queue = new Queue<{ invoice: number }>("jobs-dedupe", { connection: process.env.REDIS_URL })
await queue.clearDedupe("invoice-7") // start clean if an earlier run left the key held

// held while the job exists: adding again returns the first id and adds nothing
// #region dedupe
const first = await queue.add({ invoice: 7 }, { dedupeKey: "invoice-7", dedupeUntil: "finished" })
const again = await queue.add({ invoice: 7 }, { dedupeKey: "invoice-7", dedupeUntil: "finished" })
console.log("deduplicated:", first === again) // true
console.log("dedupe key:", (await queue.getJob(first))?.dedupeKey) // invoice-7
// #endregion

// freed when the job completes, dies or is cancelled
await queue.cancel(first)
const next = await queue.add({ invoice: 7 }, { dedupeKey: "invoice-7", dedupeUntil: "finished" })
console.log("accepted after the cancel:", next !== first) // true

// or freed by hand, whatever holds it (a TTL or "until finished")
console.log("cleared:", await queue.clearDedupe("invoice-7")) // true
await queue.cancel(next)
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
