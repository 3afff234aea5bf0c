/**
 * `job.progress` is live: stored within a fraction of a second (not at the next heartbeat),
 * coalesced to few writes, and the last value set before the handler returns is kept.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { decodeEntry } from "../../src/engine/events/EventDecode.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { Queue, Worker } from "../../src/index.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"

const name = queueNamer("progress-live")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

/** The progress events recorded for queue `q` (each one stored value). */
const progressEvents = async (q: string) =>
  (await raw.xrange(queueKeys(q).events, "-", "+"))
    .flatMap(([id, f]) => decodeEntry(q, id, f))
    .filter((e) => e.kind === "progress")

describe("live progress", () => {
  it("another process sees a value before the handler returns, long before a heartbeat", async () => {
    const q = name()
    const producer = new Queue<number>(q, { connection: redisUrl() })
    onCleanup(() => producer.close())
    const gate = deferred<void>()
    const id = await producer.add(1)
    // heartbeats every 100 s: only the live write can show the value within the wait below
    const worker = new Worker<number>(
      q,
      async (job) => {
        job.progress({ pct: 10 })
        job.progress({ pct: 40 })
        await gate.promise
      },
      { connection: redisUrl(), leaseMs: 300_000 },
    )
    onCleanup(() => worker.close())
    const seen = await until("getJob shows the progress", async () => {
      const info = await producer.getJob(id)
      return info?.progress !== undefined && info
    })
    expect(seen).toMatchObject({ state: "active", progress: { pct: 40 } })
    // the two values set together were one write
    expect((await progressEvents(q)).map((e) => (e.kind === "progress" ? e.progress : undefined))).toEqual([
      { pct: 40 },
    ])
    gate.resolve()
    await until("the job completes", async () => (await producer.stats()).counters.completed === 1)
  })

  it("a thousand values set at once cost one write, and the last before the handler returns is kept", async () => {
    const q = name()
    const producer = new Queue<number>(q, { connection: redisUrl() })
    onCleanup(() => producer.close())
    const id = await producer.add(1, { maxAttempts: 1 })
    const worker = new Worker<number>(
      q,
      async (job) => {
        for (let i = 0; i < 1000; i++) job.progress(i)
        throw new Error("ends as dead, which keeps its progress")
      },
      { connection: redisUrl(), leaseMs: 300_000 },
    )
    onCleanup(() => worker.close())
    await until("the job is dead", async () => (await producer.getJob(id))?.state === "dead")
    expect(await producer.getJob(id)).toMatchObject({ state: "dead", progress: 999 })
    expect(await progressEvents(q)).toHaveLength(1)
  })

  it("a handler that never reports progress writes none", async () => {
    const q = name()
    const producer = new Queue<number>(q, { connection: redisUrl() })
    onCleanup(() => producer.close())
    await producer.add(1)
    const worker = new Worker<number>(q, async () => {}, { connection: redisUrl() })
    onCleanup(() => worker.close())
    await until("the job completes", async () => (await producer.stats()).counters.completed === 1)
    expect(await progressEvents(q)).toEqual([])
    expect(await raw.exists(queueKeys(q).progress)).toBe(0)
  })
})
