/**
 * Fair groups with real workers: a late group's jobs start within the next round, a group's
 * concurrency holds (sampled and from the events), a SIGKILLed worker holding a group's only
 * slot frees it through the sweep, and a partitioned queue keeps a group in one partition.
 */
import { describe, expect, it } from "vitest"
import type { JobEvent } from "../../src/engine/events/Events.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { startWorkerChild } from "../support/child.ts"
import { queueNamer, redisUrl, sharedClients } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("groups-workers")
const shared = sharedClients()

/** The events of the queue from the start until `enough` says the list is complete. */
const eventsUntil = async (
  queue: { events: (o: { from: "start" }) => AsyncIterable<JobEvent> },
  enough: (seen: ReadonlyArray<JobEvent>) => boolean,
) => {
  const seen: Array<JobEvent> = []
  for await (const e of queue.events({ from: "start" })) {
    seen.push(e)
    if (enough(seen)) break
  }
  return seen
}

/** The most jobs of one group active at once, replaying the `active` and `completed` events in order. */
const peakActive = (events: ReadonlyArray<JobEvent>, groupOf: ReadonlyMap<string, string>) => {
  const active = new Map<string, number>()
  let peak = 0
  for (const e of events) {
    const g = groupOf.get(e.jobId)
    if (!g || (e.kind !== "active" && e.kind !== "completed")) continue
    active.set(g, (active.get(g) ?? 0) + (e.kind === "active" ? 1 : -1))
    peak = Math.max(peak, active.get(g) ?? 0)
  }
  return peak
}

describe("groups with workers", () => {
  it("fairness: A adds 10,000, then B adds 10; one worker at concurrency 10 starts all of B's among the next 30", async () => {
    const q = name()
    const queue = useQueue<{ g: string; i: number }>(q)
    await queue.addBulk(Array.from({ length: 10_000 }, (_, i) => ({ payload: { g: "A", i }, options: { group: "A" } })))
    const started: Array<string> = []
    useWorker<{ g: string; i: number }>(
      q,
      async (job) => {
        started.push(job.payload.g)
        await new Promise((r) => setTimeout(r, 1))
      },
      { concurrency: 10, prefetch: 0 },
    )
    await until("the worker is busy with A", () => started.length >= 50)
    await queue.addBulk(Array.from({ length: 10 }, (_, i) => ({ payload: { g: "B", i }, options: { group: "B" } })))
    const from = started.length
    await until("all of B started", () => started.filter((g) => g === "B").length === 10)
    const lastB = started.lastIndexOf("B")
    // the jobs leased before B was added (at most concurrency 10 in flight) may start first
    expect(lastB - from).toBeLessThan(30)
  })

  it("a group's concurrency is never exceeded: sampled in the handlers and from the events", async () => {
    const q = name()
    const queue = useQueue<{ g: string }>(q)
    await queue.setGroupLimits({ concurrency: 2 })
    const groups = ["a", "b", "c"]
    const ids = await queue.addBulk(
      Array.from({ length: 60 }, (_, i) => ({ payload: { g: groups[i % 3]! }, options: { group: groups[i % 3]! } })),
    )
    const groupOf = new Map(ids.map((id, i) => [id, groups[i % 3]!]))
    const running = new Map<string, number>()
    let most = 0
    let done = 0
    for (let w = 0; w < 2; w++) {
      useWorker<{ g: string }>(
        q,
        async (job) => {
          const n = (running.get(job.payload.g) ?? 0) + 1
          running.set(job.payload.g, n)
          most = Math.max(most, n)
          await new Promise((r) => setTimeout(r, 2))
          running.set(job.payload.g, (running.get(job.payload.g) ?? 1) - 1)
          done++
        },
        { concurrency: 10 },
      )
    }
    await until("all done", () => done === 60)
    expect(most).toBeLessThanOrEqual(2)
    const events = await eventsUntil(queue, (s) => s.filter((e) => e.kind === "completed").length === 60)
    // the events run in Redis order: leased, completed; never a third of a group at once
    expect(peakActive(events, groupOf)).toBe(2)
  })

  it("a worker holding a group's only slot is SIGKILLed: the sweep reclaims it and the group goes on", async () => {
    const q = name()
    const queue = useQueue<null>(q)
    await queue.setGroupLimits("solo", { concurrency: 1 })
    const first = await queue.add(null, { group: "solo" })
    const second = await queue.add(null, { group: "solo" })
    const child = startWorkerChild(redisUrl(), q, "hang", { leaseMs: 500, sweep: false, concurrency: 4 })
    await child.waitFor((l) => l.startsWith(`started ${first}`), "the first job started")
    await child.stop("SIGKILL")
    expect(await shared.raw.hget(queueKeys(q).gstate, "a\0solo")).toBe("1")
    const ran: Array<string> = []
    useWorker<null>(
      q,
      async (job) => {
        ran.push(job.id)
      },
      // the rescuer's own lease is the default: only the killed worker's must run out
      { sweep: { intervalMs: 100 } },
    )
    await until("both jobs ran", () => ran.includes(first) && ran.includes(second))
    expect(ran.indexOf(first)).toBeLessThan(ran.indexOf(second))
    await until("the slot is free", async () => Number(await shared.raw.hget(queueKeys(q).gstate, "a\0solo")) === 0)
    expect((await queue.verify()).violations).toBe(0)
  })

  it("partitioned: a group's jobs meet in one partition, so its concurrency holds across the queue", async () => {
    const q = name()
    const queue = useQueue<{ g: string }>(q, { partitions: 4 })
    await queue.setGroupLimits({ concurrency: 1 })
    await queue.addBulk(Array.from({ length: 20 }, () => ({ payload: { g: "t" }, options: { group: "t" } })))
    const stats = await queue.stats()
    expect(stats.partitions!.filter((p) => p.waiting > 0)).toHaveLength(1)
    let running = 0
    let most = 0
    let done = 0
    useWorker<{ g: string }>(
      q,
      async () => {
        running++
        most = Math.max(most, running)
        await new Promise((r) => setTimeout(r, 2))
        running--
        done++
      },
      { concurrency: 8, partitions: 4 },
    )
    await until("all done", () => done === 20)
    expect(most).toBe(1)
    const page = await queue.groups()
    expect(page.defaults).toEqual({ concurrency: 1 })
  })
})
