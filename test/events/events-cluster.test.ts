/**
 * Events of a partitioned queue on a real 3-master Redis Cluster: one XREAD cannot span
 * slots, so the reader follows each partition on its own connection and merges them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Queue, Worker } from "../../src/index.ts"
import { onCleanup } from "../support/cleanup.ts"
import { type LocalCluster, startCluster } from "../support/cluster.ts"
import { queueNamer } from "../support/redis.ts"

const name = queueNamer("events-cluster")
let cluster: LocalCluster
beforeAll(async () => {
  cluster = await startCluster({ masters: 3 })
}, 60_000)
afterAll(async () => {
  await cluster?.stop()
})

describe("events on a cluster", () => {
  it("follows every partition of a partitioned queue across masters; waitFor finds jobs in any partition", async () => {
    const q = name()
    const connection = { cluster: cluster.startup }
    const producer = new Queue<number>(q, { connection, partitions: 6 })
    onCleanup(() => producer.close())
    const events = producer.events()
    const ids = await producer.addBulk(Array.from({ length: 30 }, (_, i) => ({ payload: i })))
    const waits = ids.slice(0, 5).map((id) => producer.waitFor(id, { timeoutMs: 60_000 }))
    const worker = new Worker<number>(q, async () => {}, { connection, partitions: 6 })
    onCleanup(() => worker.close())
    const completed = new Set<string>()
    const queues = new Set<string>()
    for await (const e of events) {
      queues.add(e.queue)
      if (e.kind === "completed") completed.add(e.jobId)
      if (completed.size === ids.length) break
    }
    expect(completed).toEqual(new Set(ids))
    expect(queues.size).toBe(6)
    expect((await Promise.all(waits)).map((j) => j.state)).toEqual(Array(5).fill("completed"))
  })
})
