/**
 * The rate limit and the concurrency cap of a partitioned queue hold for the queue as a
 * whole (docs/scaling.md, "Limits of a partitioned queue"): 100 per second over 4
 * partitions lets at most 100 leases into any second (lease starts as the reserves
 * stored them, Redis clock), a cap of 2 over 4 partitions runs at most 2 at once, and
 * the split's steps keep the shares within the limit however they interleave.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { runScript } from "../../src/engine/calls/Commands.ts"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { partitionKeys } from "../../src/engine/model/Keys.ts"
import { planShares, rebalance, splitEvenly } from "../../src/engine/partition/FlowSplit.ts"
import { busiestWindow, leaseStart } from "../support/partitioned-leases.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("flow-partitioned")
const shared = sharedClients()
const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)
const N = 4
const keysOf = (q: string) => Array.from({ length: N }, (_, i) => partitionKeys(q, i))
/** Each partition's stored share of a limit (meta field `field`). */
const shares = (q: string, field: string) =>
  Promise.all(keysOf(q).map(async (k) => Number(await shared.raw.hget(k.meta, field))))

describe("limits of a partitioned queue", () => {
  it("splits a limit evenly, remainder first, and plans the shares toward the partitions with jobs ready", () => {
    expect(splitEvenly(100, 4)).toEqual([25, 25, 25, 25])
    expect(splitEvenly(2, 4)).toEqual([1, 1, 0, 0])
    expect(splitEvenly(2, 4, 3)).toEqual([1, 0, 0, 1])
    const parts = [
      { share: 1, used: 1, ready: 0 },
      { share: 1, used: 0, ready: 5 },
      { share: 0, used: 0, ready: 5 },
      { share: 0, used: 0, ready: 0 },
    ]
    expect(planShares(2, parts, 0)).toEqual([0, 1, 1, 0])
  })

  it("rate limit 100/s over 4 partitions: at most 100 leases in any second of the Redis clock, the limit read back whole", async () => {
    const q = name()
    const queue = useQueue<number>(q, { partitions: N })
    await queue.setRateLimit({ max: 100, perMs: 1000 })
    expect(await queue.rateLimit()).toEqual({ max: 100, perMs: 1000 })
    expect(await shares(q, "rateMax")).toEqual([25, 25, 25, 25])
    await queue.addBulk(Array.from({ length: 300 }, (_, n) => ({ payload: n })))
    const times: number[] = []
    useWorker<number>(q, async (job) => void times.push(await leaseStart(() => shared.raw, keysOf(q), job.id)), {
      partitions: N,
      concurrency: 40,
    })
    await until("all 300 jobs started", () => times.length === 300, { timeoutMs: 30_000 })
    times.sort((a, b) => a - b)
    // the documented slack is 0 (one clock): per partition (the old way) 300 would start in the first second
    expect(busiestWindow(times, 1000)).toBeLessThanOrEqual(100)
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(2000)
    expect((await queue.stats()).limits.rateLimit).toEqual({ max: 100, perMs: 1000 })
  })

  it("concurrency 2 over 4 partitions: never more than 2 jobs active at once, and every partition's jobs run", async () => {
    const q = name()
    const queue = useQueue<number>(q, { partitions: N })
    await queue.setConcurrency(2)
    expect(await queue.concurrency()).toBe(2)
    await queue.addBulk(Array.from({ length: 40 }, (_, n) => ({ payload: n })))
    let running = 0
    let most = 0
    let sampledMost = 0
    let done = 0
    useWorker<number>(
      q,
      async () => {
        most = Math.max(most, ++running)
        const active = await Promise.all(keysOf(q).map((k) => shared.raw.zcard(k.active)))
        sampledMost = Math.max(
          sampledMost,
          active.reduce((a, b) => a + b, 0),
        )
        await new Promise((r) => setTimeout(r, 5))
        running--
        done++
      },
      { partitions: N, concurrency: 16 },
    )
    await until("all 40 jobs completed", () => done === 40, { timeoutMs: 30_000 })
    expect(most).toBeLessThanOrEqual(2)
    expect(sampledMost).toBeLessThanOrEqual(2)
    expect(most).toBe(2)
    expect((await queue.stats()).partitions!.map((p) => p.counters.completed)).toEqual([10, 10, 10, 10])
  })

  it("racing rebalances beside a busy worker: every atomic snapshot holds at most the cap active, and the shares held within it", async () => {
    const q = name()
    const queue = useQueue<number>(q, { partitions: N })
    await queue.setConcurrency(3)
    // custom ids spread the jobs by hash (unevenly), so the shares must move
    await queue.addBulk(Array.from({ length: 160 }, (_, n) => ({ payload: n, options: { id: `j${n}` } })))
    let done = 0
    useWorker<number>(q, async () => void done++, { partitions: N, concurrency: 16 })
    const keys = keysOf(q)
    let stop = false
    // three more rebalancers with no gap, racing the worker's own
    const racers = Array.from({ length: 3 }, async () => {
      while (!stop) await run(rebalance(shared.client, keys))
    })
    let snapshots = 0
    let mostActive = 0
    let mostHeld = 0
    while (done < 160) {
      const m = shared.raw.multi()
      for (const k of keys) m.zcard(k.active).hget(k.meta, "concurrency")
      const r = ((await m.exec()) ?? []).map(([, v]) => Number(v))
      let active = 0
      let held = 0
      for (let i = 0; i < N; i++) {
        active += r[2 * i]!
        held += Math.max(r[2 * i]!, r[2 * i + 1]!)
      }
      mostActive = Math.max(mostActive, active)
      mostHeld = Math.max(mostHeld, held)
      snapshots++
    }
    stop = true
    await Promise.all(racers)
    expect(snapshots).toBeGreaterThan(10)
    expect(mostActive).toBeLessThanOrEqual(3)
    expect(mostHeld).toBeLessThanOrEqual(3)
    expect(mostActive).toBeGreaterThan(0)
  })

  it("a rebalance that an older epoch's looks overtook raises nothing; clearing the limit clears every share", async () => {
    const q = name()
    const queue = useQueue<number>(q, { partitions: N })
    await queue.setConcurrency(4)
    const keys = keysOf(q)
    const client = shared.client
    // an old rebalancer looks, then a newer one looks at every partition: the old one's raise is refused
    const old = await run(runScript(client, keys[0]!, Scripts.flowEpoch, undefined))
    await run(runScript(client, keys[1]!, Scripts.flowShare, { op: "look", epoch: old }))
    // the counter ahead of the clock (two epochs in one ms, or set's raise): an asked-for
    // rebalance (no gap) still runs
    await shared.raw.hset(keys[0]!.meta, "flowCounter", String(Number(old) + 60_000))
    expect(await run(rebalance(client, keys))).toBe("done")
    const raised = await run(
      runScript(client, keys[1]!, Scripts.flowShare, { op: "raise", epoch: old, rate: "", concurrency: 10 }),
    )
    expect(raised.kind).toBe("stale")
    const held = await shares(q, "concurrency")
    expect(held.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(4)
    await queue.setConcurrency(null)
    expect(await queue.concurrency()).toBe(null)
    for (const k of keys)
      expect(await shared.raw.hmget(k.meta, "concurrency", "concurrencyTotal")).toEqual([null, null])
  })
})
