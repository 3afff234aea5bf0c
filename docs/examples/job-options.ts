// docs/getting-started.md, "Adding jobs". Run: REDIS_URL=… node docs/examples/job-options.ts
import { Queue } from "leaseq"

const queue = new Queue<{ orderId: number }>("job-options", {
  connection: process.env.REDIS_URL,
  defaultJobOptions: { maxAttempts: 5 },
})

// run in 10 minutes (the Redis clock decides when it is due)
await queue.add({ orderId: 1 }, { delayMs: 600_000 })

// deduplicate: while the key holds (1 h by default), adding again returns the first id
const first = await queue.add({ orderId: 2 }, { dedupeKey: "order-2", dedupeTtlMs: 60_000 })
const again = await queue.add({ orderId: 2 }, { dedupeKey: "order-2", dedupeTtlMs: 60_000 })
console.log("deduplicated:", first === again)

// many jobs in one Redis call (all validated first: all or nothing)
const ids = await queue.addBulk([{ payload: { orderId: 3 } }, { payload: { orderId: 4 }, options: { maxAttempts: 1 } }])
console.log("bulk ids:", ids.length)

const stats = await queue.stats()
console.log(`waiting ${stats.waiting}, delayed ${stats.delayed}`)

// clean up what this example made (the delayed job is still there): a real app would not
await queue.close()
