/**
 * The limits of a partitioned queue on a real 3-master Redis Cluster, its partitions on
 * different masters: a rate limit of 100 per second over 4 partitions lets at most 100
 * leases into any second (lease starts as each partition's reserve stored them, on its
 * master's clock: one host, one clock, so the documented slack is 0), a cap of 2 runs at most 2 at
 * once, and a group's concurrency of 2 holds (its jobs meet in its partition).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { partitionKeys, type QueueKeys } from "../../src/engine/model/Keys.ts"
import { keySlot } from "../../src/redis/Slot.ts"
import { hasRedisCli, type LocalCluster, startCluster } from "../support/cluster.ts"
import { report } from "../support/figures.ts"
import { busiestWindow, leaseStart } from "../support/partitioned-leases.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

let cluster: LocalCluster
const conn = () => ({ cluster: cluster.startup })
const N = 4
const prefix = "plim"

beforeAll(async () => {
  cluster = await startCluster({ masters: 3 })
}, 60_000)
afterAll(async () => {
  await cluster?.stop()
})

const keysOf = (q: string) => Array.from({ length: N }, (_, i) => partitionKeys(q, i, prefix))
/** A raw client to the master holding the partition of `k`. */
const home = async (k: QueueKeys) => cluster.raw(await cluster.masterOfSlot(keySlot(k.meta)))
/** Leases held now over every partition (one read per partition: a sample, not a snapshot). */
const activeNow = async (q: string) =>
  (await Promise.all(keysOf(q).map(async (k) => (await home(k)).zcard(k.active)))).reduce((a, b) => a + b, 0)

describe.skipIf(!hasRedisCli())("limits of a partitioned queue on a 3-master cluster", () => {
  it("rate limit 100/s over 4 partitions on several masters: at most 100 leases in any second", async () => {
    const q = "rate"
    const queue = useQueue<number>(q, { connection: conn(), prefix, partitions: N })
    const masters = new Set(await Promise.all(keysOf(q).map((k) => cluster.masterOfSlot(keySlot(k.meta)))))
    expect(masters.size).toBeGreaterThan(1)
    await queue.setRateLimit({ max: 100, perMs: 1000 })
    await queue.addBulk(Array.from({ length: 300 }, (_, n) => ({ payload: n })))
    const times: number[] = []
    useWorker<number>(q, async (job) => void times.push(await leaseStart(home, keysOf(q), job.id)), {
      connection: conn(),
      prefix,
      partitions: N,
      concurrency: 40,
    })
    await until("all 300 jobs started", () => times.length === 300, { timeoutMs: 30_000 })
    times.sort((a, b) => a - b)
    const busiest = busiestWindow(times, 1000)
    // per partition (the old way) 4 × 100 would start in the first second
    expect(busiest).toBeLessThanOrEqual(100)
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(2000)
    report("cluster-partitioned-rate-limit", { limit: 100, partitions: N, masters: masters.size, busiest })
  })

  it("concurrency 2 over 4 partitions on several masters: never more than 2 active at once", async () => {
    const q = "cap"
    const queue = useQueue<number>(q, { connection: conn(), prefix, partitions: N })
    await queue.setConcurrency(2)
    await queue.addBulk(Array.from({ length: 40 }, (_, n) => ({ payload: n })))
    let running = 0
    let most = 0
    let sampledMost = 0
    let done = 0
    useWorker<number>(
      q,
      async () => {
        most = Math.max(most, ++running)
        sampledMost = Math.max(sampledMost, await activeNow(q))
        await new Promise((r) => setTimeout(r, 5))
        running--
        done++
      },
      { connection: conn(), prefix, partitions: N, concurrency: 16 },
    )
    await until("all 40 jobs completed", () => done === 40, { timeoutMs: 30_000 })
    expect(most).toBeLessThanOrEqual(2)
    expect(sampledMost).toBeLessThanOrEqual(2)
    expect(most).toBe(2)
  })

  it("a group with concurrency 2 among other work over 4 partitions: never more than 2 of its jobs active at once", async () => {
    const q = "grp"
    const queue = useQueue<{ g: string }>(q, { connection: conn(), prefix, partitions: N })
    await queue.setGroupLimits("t", { concurrency: 2 })
    await queue.addBulk([
      ...Array.from({ length: 30 }, () => ({ payload: { g: "t" }, options: { group: "t" } })),
      ...Array.from({ length: 30 }, () => ({ payload: { g: "" } })),
    ])
    let running = 0
    let most = 0
    let done = 0
    useWorker<{ g: string }>(
      q,
      async (job) => {
        if (job.payload.g === "t") most = Math.max(most, ++running)
        await new Promise((r) => setTimeout(r, 5))
        if (job.payload.g === "t") running--
        done++
      },
      { connection: conn(), prefix, partitions: N, concurrency: 16 },
    )
    await until("all 60 jobs completed", () => done === 60, { timeoutMs: 30_000 })
    expect(most).toBe(2)
  })
})
