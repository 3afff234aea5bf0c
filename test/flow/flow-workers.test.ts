/**
 * Flow limits with real workers: the rate limit over 4 workers (from the lease start
 * times), the concurrency cap over 4 workers (sampled and from the events), a SIGKILLed
 * worker's slot freed by the sweep, and RateLimited / Snooze spending no attempt.
 */

import { describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { RateLimited, Snooze } from "../../src/index.ts"
import { startWorkerChild } from "../support/child.ts"
import { report } from "../support/figures.ts"
import { entryStartedAt } from "../support/lease.ts"
import { queueNamer, redisUrl, sharedClients } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("flow-workers")
const shared = sharedClients()

/** The start time (ms, Redis clock) of the lease job `id` holds now, from its holder entry. */
const leaseStart = async (holder: string, id: string): Promise<number> =>
  entryStartedAt((await shared.raw.hget(holder, id)) ?? "")

/** The most leases that fall in any window [t, t + perMs) of the sorted start times `ts`. */
const busiestWindow = (ts: ReadonlyArray<number>, perMs: number): number => {
  let most = 0
  for (let i = 0, j = 0; i < ts.length; i++) {
    while (ts[i]! - ts[j]! >= perMs) j++
    most = Math.max(most, i - j + 1)
  }
  return most
}

describe("flow limits with workers", () => {
  it("rate limit { max: 100, perMs: 1000 }, 1,000 jobs, 4 workers at concurrency 20: no window holds more than 100 leases", async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = useQueue<number>(q)
    await queue.setRateLimit({ max: 100, perMs: 1000 })
    await queue.addBulk(Array.from({ length: 1000 }, (_, n) => ({ payload: n })))
    const starts: number[] = []
    const began = Date.now()
    for (let w = 0; w < 4; w++) {
      useWorker<number>(q, async (job) => void starts.push(await leaseStart(keys.holder, job.id)), { concurrency: 20 })
    }
    await until("all 1,000 jobs completed", async () => (await queue.stats()).counters.completed === 1000)
    const tookMs = Date.now() - began
    starts.sort((a, b) => a - b)
    expect(starts).toHaveLength(1000)
    expect(busiestWindow(starts, 1000)).toBeLessThanOrEqual(100)
    // 1,000 leases at 100 a window need at least 10 windows: the last starts 9 windows after the first
    expect(starts.at(-1)! - starts[0]!).toBeGreaterThanOrEqual(9000)
    expect((await queue.stats()).counters.limitedRate).toBeGreaterThan(0)
    report("flow-rate-limit", { jobs: 1000, workers: 4, tookMs, spanMs: starts.at(-1)! - starts[0]! })
  })

  it("global concurrency 5 with 4 workers at concurrency 10: never more than 5 active, sampled and from the events", async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = useQueue<number>(q)
    await queue.setConcurrency(5)
    await queue.addBulk(Array.from({ length: 200 }, (_, n) => ({ payload: n })))
    let running = 0
    let most = 0
    let sampledMost = 0
    for (let w = 0; w < 4; w++) {
      useWorker<number>(
        q,
        async () => {
          most = Math.max(most, ++running)
          sampledMost = Math.max(sampledMost, await shared.raw.zcard(keys.active))
          await new Promise((r) => setTimeout(r, 5))
          running--
        },
        { concurrency: 10 },
      )
    }
    await until("all 200 jobs completed", async () => (await queue.stats()).counters.completed === 200)
    expect(most).toBeLessThanOrEqual(5)
    expect(sampledMost).toBeLessThanOrEqual(5)
    expect(sampledMost).toBeGreaterThan(1)
    // replay the events stream (in the order the scripts ran): leases minus completions
    let active = 0
    let peak = 0
    for (const [, f] of await shared.raw.xrange(keys.events, "-", "+")) {
      const kind = f[f.indexOf("kind") + 1]
      const ids = f[f.indexOf("id") + 1]!.split(",").length
      if (kind === "active") active += ids
      if (kind === "completed") active -= ids
      peak = Math.max(peak, active)
    }
    expect(active).toBe(0)
    expect(peak).toBeLessThanOrEqual(5)
    expect(peak).toBeGreaterThan(1)
  })

  it("a SIGKILLed worker holding the only slot of concurrency 1: the queue goes on after the sweep reclaims its lease", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    await queue.setConcurrency(1)
    const [first] = await queue.addBulk([{ payload: 1 }, { payload: 2 }, { payload: 3 }])
    const victim = startWorkerChild(redisUrl(), q, "hang", { leaseMs: 1_000, concurrency: 5, sweep: false })
    await victim.waitFor((l) => l.startsWith(`started ${first} `), "the first job started")
    await victim.stop("SIGKILL")
    expect((await queue.stats()).active).toBe(1)
    const ran: number[] = []
    // the rescuer's own lease is the default: only the killed worker's must run out (lostLeases 1)
    useWorker<number>(q, async (job) => void ran.push(job.payload), { concurrency: 5, sweep: { intervalMs: 100 } })
    await until("all three ran", () => ran.length === 3, { timeoutMs: 30_000 })
    expect(ran.sort()).toEqual([1, 2, 3])
    expect((await queue.stats()).counters.lostLeases).toBe(1)
  })

  it("RateLimited: the job runs again first, with the same attempt, and nothing is leased while the queue is held", async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = useQueue<string>(q)
    const [limited] = await queue.addBulk([{ payload: "a" }, { payload: "b" }])
    const runs: Array<{ payload: string; attempt: number; at: number }> = []
    useWorker<string>(
      q,
      async (job) => {
        runs.push({ payload: job.payload, attempt: job.attempt, at: await leaseStart(keys.holder, job.id) })
        if (job.id === limited && runs.length === 1) throw new RateLimited({ retryAfterMs: 1_500 })
      },
      { concurrency: 1, prefetch: 0 },
    )
    await until("both completed", async () => (await queue.stats()).counters.completed === 2)
    expect(runs.map((r) => r.attempt)).toEqual([1, 1, 1])
    expect(runs.filter((r) => r.payload === "a")).toHaveLength(2)
    // the stream orders what Redis did: the first lease after the hold's event (a lease of
    // "b" in the same ms but before it is not held back) is "a"'s, 1.5 s later
    const entries = await shared.raw.xrange(keys.events, "-", "+")
    const at = entries.findIndex(([, f]) => f[1] === "rate-limited")
    const heldAt = Number(entries[at]![0].split("-")[0])
    const next = entries.slice(at + 1).find(([, f]) => f[1] === "active")!
    expect(next[1][3]!.split(",")).toEqual([limited])
    expect(Number(next[0].split("-")[0]) - heldAt).toBeGreaterThanOrEqual(1_499)
    expect((await queue.stats()).counters).toMatchObject({ rateLimited: 1, failed: 0 })
  })

  it("Snooze: the job goes to delayed, runs again with the same attempt; counted and a snoozed event", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const [id] = await queue.addBulk([{ payload: "a", options: { maxAttempts: 1 } }])
    const attempts: number[] = []
    useWorker<string>(q, async (job) => {
      attempts.push(job.attempt)
      if (attempts.length < 3) throw new Snooze({ delayMs: 50 })
    })
    await until("completed", async () => (await queue.stats()).counters.completed === 1)
    expect(attempts).toEqual([1, 1, 1])
    expect((await queue.stats()).counters).toMatchObject({ snoozed: 2, failed: 0, dead: 0 })
    const events = await shared.raw.xrange(queueKeys(q).events, "-", "+")
    const snoozed = events.filter(([, f]) => f.includes("snoozed") && f.includes(id!))
    expect(snoozed).toHaveLength(2)
  })

  it("a partitioned queue: the rate limit and the cap hold for the whole queue (2 partitions at 3 a minute: 3 jobs run)", async () => {
    const q = name()
    const queue = useQueue<number>(q, { partitions: 2 })
    await queue.setRateLimit({ max: 3, perMs: 60_000 })
    await queue.setConcurrency(2)
    expect(await queue.rateLimit()).toEqual({ max: 3, perMs: 60_000 })
    await queue.addBulk(Array.from({ length: 20 }, (_, n) => ({ payload: n })))
    let ran = 0
    useWorker<number>(q, async () => void ran++, { concurrency: 10, partitions: 2 })
    // the queue leased its 3 and both partitions were then held back by their share of the window
    await until("both partitions held back by the window", async () => {
      const s = await queue.stats()
      return s.counters.completed === 3 && s.partitions?.every((p) => p.counters.limitedRate > 0)
    })
    const stats = await queue.stats()
    expect(stats.counters.completed).toBe(3)
    expect(ran).toBe(3)
    expect(stats.waiting).toBe(17)
    expect(stats.partitions?.map((p) => p.limits.concurrency)).toEqual([2, 2])
  })

  it("a worker held back for a whole window still sends its finished jobs' completes at once", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    await queue.setRateLimit({ max: 3, perMs: 600_000 })
    await queue.addBulk(Array.from({ length: 10 }, (_, n) => ({ payload: n })))
    // held for up to blockTimeoutMs (60 s): the completes must not wait for the hold to end
    useWorker<number>(q, async () => {}, { concurrency: 5, blockTimeoutMs: 60_000 })
    await until(
      "the window's 3 jobs completed while the worker is held",
      async () => {
        const s = await queue.stats()
        return s.counters.completed === 3 && s.counters.limitedRate > 0
      },
      { timeoutMs: 20_000 },
    )
    expect((await queue.stats()).active).toBe(0)
  })
})
