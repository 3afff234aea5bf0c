// docs/getting-started.md, "Adding jobs". Run: npm run example docs/examples/job-options.ts
import { Queue } from "leaseq"

// #region add
const queue = new Queue<{ orderId: number }>("job-options", {
  connection: process.env.REDIS_URL,
  defaultJobOptions: { maxAttempts: 5 },
})
await queue.add({ orderId: 1 }, { delayMs: 600_000 }) // due in 10 minutes (Redis clock)
const first = await queue.add({ orderId: 2 }, { dedupeKey: "order-2" }) // dedupe for 1 h (dedupeTtlMs)
const again = await queue.add({ orderId: 2 }, { dedupeKey: "order-2" }) // === first, nothing added
const ids = await queue.addBulk([{ payload: { orderId: 3 } }, { payload: { orderId: 4 }, options: { maxAttempts: 1 } }])
// #endregion
console.log("deduplicated:", first === again, "bulk ids:", ids.length)

const stats = await queue.stats()
console.log(`waiting ${stats.waiting}, delayed ${stats.delayed}`)

await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
