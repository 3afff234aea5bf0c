// docs/scaling.md. Run: npm run example docs/examples/scaling.ts
// A partitioned queue runs here. Cluster connections and durability are type-checked, not
// called: the suite's Redis is one server without replicas (test/cluster*.test.ts run them
// on a real cluster).
import { Cluster } from "ioredis"
import { type Job, Queue, Worker } from "leaseq"

interface Order {
  readonly id: number
}

export const clusterQueues = () => {
  // #region cluster
  const queue = new Queue("emails", { connection: { cluster: ["redis://10.0.0.1:7000"] } })
  // or your own ioredis Cluster (borrowed: leaseq never closes it)
  const queue2 = new Queue("emails", { connection: new Cluster([{ host: "10.0.0.1", port: 7000 }]) })
  // #endregion
  return [queue, queue2]
}

export const durableOrders = (connection: string, handle: (job: Job<Order>) => Promise<void>) => {
  // #region durability
  const queue = new Queue("orders", { connection, durability: { replicas: 1, timeoutMs: 1000 } })
  const worker = new Worker("orders", handle, { connection, durability: { replicas: 1, timeoutMs: 1000 } })
  // #endregion
  return { queue, worker }
}

const connection = process.env.REDIS_URL
const handled = new Set<number>()
let allHandled = () => {}
const all = new Promise<void>((resolve) => {
  allHandled = resolve
})
const handle = async (job: Job<Order>) => {
  handled.add(job.payload.id)
  if (handled.size === 16) allHandled()
}
// #region partitions
const queue = new Queue<Order>("orders", { connection, partitions: 8 })
const worker = new Worker<Order>("orders", handle, { connection, partitions: 8, concurrency: 64 })
// #endregion
await queue.addBulk(Array.from({ length: 16 }, (_, id) => ({ payload: { id } })))
await all
console.log(`${handled.size} orders handled; left waiting over the 8 partitions: ${(await queue.stats()).waiting}`)
await worker.close()
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
