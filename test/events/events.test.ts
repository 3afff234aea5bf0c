/**
 * queue.events() and queue.waitFor() (Promise face) against real Redis: typed events
 * from any process, resumed after a cut connection without loss or repeats.
 */
import { join } from "node:path"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import type { JobEvent } from "../../src/index.ts"
import { InvalidOptions, Queue, QueueClosed, RedisCommandError, WaitForTimeout, Worker } from "../../src/index.ts"
import { ROOT, startChild } from "../support/child.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { proxyToSuiteRedis } from "../support/proxy.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"

const name = queueNamer("events")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

const queue = <T = unknown>(q: string, options: ConstructorParameters<typeof Queue>[1] = {}) => {
  const made = new Queue<T>(q, { connection: redisUrl(), ...options })
  onCleanup(() => made.close())
  return made
}
const worker = <T>(q: string, handler: (job: { payload: T }) => Promise<unknown>, options = {}) => {
  const made = new Worker<T>(q, handler, { connection: redisUrl(), backoff: { type: "fixed", delayMs: 0 }, ...options })
  onCleanup(() => made.close())
  return made
}

/** Take events from `iterable` until `done` says so (the loop's break closes its connection). */
const collect = async (iterable: AsyncIterable<JobEvent>, done: (seen: JobEvent[]) => boolean) => {
  const seen: JobEvent[] = []
  for await (const e of iterable) {
    seen.push(e)
    if (done(seen)) break
  }
  return seen
}

describe("events()", () => {
  it("a job's life as typed events: added, active (token, worker), failed (willRetry), completed", async () => {
    const q = name()
    const producer = queue<number>(q)
    const id = await producer.add(1, { maxAttempts: 2 })
    let calls = 0
    worker<number>(q, async () => {
      if (++calls === 1) throw new Error("first try fails")
    })
    const seen = await collect(producer.events({ from: "start" }), (s) => s.some((e) => e.kind === "completed"))
    expect(seen.map((e) => e.kind)).toEqual(["added", "active", "failed", "active", "completed"])
    expect(seen.every((e) => e.jobId === id && e.queue === q)).toBe(true)
    const [, active, failed] = seen
    if (active?.kind !== "active" || failed?.kind !== "failed") throw new Error("unexpected kinds")
    expect(active.token).toBeGreaterThan(0)
    expect(active.workerId).not.toBe("")
    expect(failed).toMatchObject({ willRetry: true, reason: "first try fails", attempt: 1 })
    // ids grow, and `at` is the Redis time in the id
    expect(seen.map((e) => e.eventId)).toEqual([...seen.map((e) => e.eventId)].sort())
    expect(seen[0]!.at).toBe(Number(seen[0]!.eventId.split("-")[0]))
  })

  it('from "now" (the default) starts at the call: an add made after it on the same queue is passed on, one before it is not; from an eventId, what came after it', async () => {
    const q = name()
    const producer = queue<number>(q)
    const before = await producer.add(1)
    const events = producer.events()
    const after = await producer.add(2)
    const [first] = await collect(events, (s) => s.length === 1)
    expect(first).toMatchObject({ kind: "added", jobId: after })
    expect(first!.jobId).not.toBe(before)

    const all = await collect(producer.events({ from: "start" }), (s) => s.length === 2)
    expect(all[0]!.jobId).toBe(before)
    const resumed = await collect(producer.events({ from: all[0]!.eventId }), (s) => s.length === 1)
    expect(resumed[0]!.eventId).toBe(all[1]!.eventId)
  })

  it("the jobs of one call share an entry: each gets its own eventId, and `from` one of them resumes just after it", async () => {
    const q = name()
    const producer = queue<number>(q)
    const ids = await producer.addBulk([{ payload: 1 }, { payload: 2 }, { payload: 3 }])
    const single = await producer.add(4)
    const all = await collect(producer.events({ from: "start" }), (s) => s.length === 4)
    expect(all.map((e) => e.jobId)).toEqual([...ids, single])
    const entry = all[0]!.eventId.split(".")[0]
    expect(all.slice(0, 3).map((e) => e.eventId)).toEqual([`${entry}.0`, `${entry}.1`, `${entry}.2`])
    expect(all[3]!.eventId).not.toContain(".")
    const resumed = await collect(producer.events({ from: all[0]!.eventId }), (s) => s.length === 3)
    expect(resumed.map((e) => e.jobId)).toEqual([ids[1], ids[2], single])
    const afterEntry = await collect(producer.events({ from: all[2]!.eventId }), (s) => s.length === 1)
    expect(afterEntry.map((e) => e.jobId)).toEqual([single])
  })

  it("after a read that got no answer (a silent connection) it reads on from the last event it passed on: nothing again, nothing missed", async () => {
    const q = name()
    const direct = queue<number>(q)
    const proxy = await proxyToSuiteRedis()
    const follower = queue<number>(q, { connection: proxy.url })
    const events = follower.events({ from: "start" })[Symbol.asyncIterator]()
    onCleanup(() => events.return?.())
    const first = await direct.addBulk([{ payload: 1 }, { payload: 2 }])
    expect([(await events.next()).value.jobId, (await events.next()).value.jobId]).toEqual(first)
    // the reader's connection goes silent: its read is given up (2 s block + 5 s slack) and a new connection made
    const pending = events.next()
    const silent = proxy.upstreamPorts()
    proxy.freeze(silent)
    const during = await direct.add(3)
    await until("the reader to open a new connection", () => proxy.upstreamPorts().some((p) => !silent.includes(p)), {
      timeoutMs: 30_000,
    })
    const after = await direct.add(4)
    expect((await pending).value).toMatchObject({ kind: "added", jobId: during })
    expect((await events.next()).value).toMatchObject({ kind: "added", jobId: after })
  })

  it("a refusal by Redis (WRONGTYPE) ends the loop with RedisCommandError instead of retrying for ever", async () => {
    const q = name()
    const producer = queue<number>(q)
    await raw.set(queueKeys(q).events, "not a stream")
    const error = await collect(producer.events({ from: "start" }), () => false).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RedisCommandError)
    expect((error as Error).message).toMatch(/XREAD.*WRONGTYPE/)
  })

  it("close() ends a pending events() loop and closes its connection", async () => {
    const producer = new Queue<number>(name(), { connection: redisUrl() })
    const loop = collect(producer.events(), () => false)
    await producer.add(1)
    await producer.close()
    // the loop ends (rather than hang) with what it had seen; the leak check proves the connection closed
    expect((await loop).length).toBeLessThanOrEqual(1)
    expect(() => producer.events()).toThrow(/closed/)
  })

  it("a bad `from` is refused, naming the field and the fix, before anything is read", () => {
    const producer = queue(name())
    expect(() => producer.events({ from: "yesterday" })).toThrow(InvalidOptions)
    expect(() => producer.events({ from: "yesterday" })).toThrow(/from.*"now", "start" or an event id/)
  })
})

describe("a second process following events()", () => {
  it("sees every job of a 10,000-job run complete exactly once, and resumes after its connection is cut", async () => {
    const q = name("run")
    const producer = queue<number>(q)
    // 30,000 events (added, active, completed): keep them all, so a reader cut off for a while misses none
    await producer.setEventRetention(40_000)
    const proxy = await proxyToSuiteRedis()
    const follower = startChild(join(ROOT, "test/fixtures/events-follower.ts"), [proxy.url, q, "10000"])
    onCleanup(() => follower.stop())
    const ids: string[] = []
    for (let i = 0; i < 10_000; i += 2_000) {
      ids.push(...(await producer.addBulk(Array.from({ length: 2_000 }, (_, k) => ({ payload: i + k })))))
    }
    const completedLines = () => follower.lines.filter((l) => l.text.startsWith("completed ")).length
    // the jobs past the first 3,000 wait for the cut, so the cut always falls inside the run
    // (a fast worker could otherwise finish all 10,000 before the follower is cut off)
    const cutMade = deferred()
    onCleanup(() => cutMade.resolve())
    let started = 0
    worker<number>(
      q,
      async () => {
        if (++started > 3_000) await cutMade.promise
      },
      { concurrency: 50 },
    )
    await until("the follower to have seen 2,000 jobs complete", () => completedLines() >= 2_000)
    proxy.cut()
    const atCut = completedLines()
    cutMade.resolve()
    // jobs keep completing while the follower is cut off
    await until("more jobs to complete during the cut", async () => {
      const done = (await producer.stats()).counters.completed
      return done >= 10_000 || done >= atCut + 2_000
    })
    proxy.heal()
    await until("every job to complete", async () => (await producer.stats()).counters.completed === 10_000)
    const sentinel = await producer.add(-1)
    await follower.waitFor((l) => l === "end", "end")
    const seen = follower.lines.filter((l) => l.text.startsWith("completed ")).map((l) => l.text.split(" ")[1]!)
    expect(seen).toHaveLength(10_000)
    expect(new Set(seen).size).toBe(10_000)
    expect(new Set(seen)).toEqual(new Set(ids))
    expect(seen).not.toContain(sentinel)
    expect(atCut).toBeLessThan(10_000)
    expect((await follower.ended).code).toBe(0)
  })
})

describe("waitFor()", () => {
  it("resolves with the final state: completed (with its result when retained) or dead (with its error)", async () => {
    const q = name()
    const producer = queue<number>(q)
    const ok = await producer.add(1)
    const bad = await producer.add(2, { maxAttempts: 1 })
    const waits = [producer.waitFor(ok, { timeoutMs: 30_000 }), producer.waitFor(bad, { timeoutMs: 30_000 })]
    worker<number>(
      q,
      async (job) => {
        if (job.payload === 2) throw new Error("no good")
        return { doubled: job.payload * 2 }
      },
      {},
    )
    const [done, dead] = await Promise.all(waits)
    expect(done).toMatchObject({ id: ok, state: "completed", result: { doubled: 2 } })
    expect(dead).toMatchObject({ id: bad, state: "dead", error: { message: "no good" } })
    // a job that already ended is answered at once, from what the queue retains
    expect(await producer.waitFor(ok, { timeoutMs: 30_000 })).toMatchObject({ state: "completed" })
  })

  it("rejects with WaitForTimeout when the job does not end in time, and refuses a bad id or timeout", async () => {
    const q = name()
    const producer = queue<number>(q)
    const id = await producer.add(1)
    const error = await producer.waitFor(id, { timeoutMs: 200 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(WaitForTimeout)
    expect((error as Error).message).toContain(id)
    await expect(producer.waitFor("", { timeoutMs: 1_000 })).rejects.toThrow(InvalidOptions)
    await expect(producer.waitFor(id, { timeoutMs: -1 })).rejects.toThrow(/timeoutMs/)
  })

  it("close() ends a pending waitFor with QueueClosed and closes its connection", async () => {
    const producer = new Queue<number>(name(), { connection: redisUrl() })
    const id = await producer.add(1)
    const pending = producer.waitFor(id, { timeoutMs: 60_000 }).catch((e: unknown) => e)
    await producer.close()
    expect(await pending).toBeInstanceOf(QueueClosed)
  })
})

describe("partitioned queues", () => {
  it("events of every partition are merged, and waitFor finds a job in any partition", async () => {
    const q = name()
    const producer = queue<number>(q, { partitions: 4 })
    const ids = await producer.addBulk(Array.from({ length: 20 }, (_, i) => ({ payload: i })))
    const seen = await collect(producer.events({ from: "start" }), (s) => s.length === 20)
    expect(new Set(seen.map((e) => e.jobId))).toEqual(new Set(ids))
    expect(new Set(seen.map((e) => e.queue)).size).toBeGreaterThan(1)
    const waits = ids.slice(0, 3).map((id) => producer.waitFor(id, { timeoutMs: 30_000 }))
    worker<number>(q, async () => {}, { partitions: 4 })
    expect((await Promise.all(waits)).map((j) => j.state)).toEqual(["completed", "completed", "completed"])
  })
})

describe("retention", () => {
  it("setEventRetention stores the queue's retention (0 records none); a bad value is refused and writes nothing", async () => {
    const producer = queue<number>(name())
    expect(await producer.eventRetention()).toBe(10_000)
    await producer.setEventRetention(0)
    expect(await producer.eventRetention()).toBe(0)
    await expect(producer.setEventRetention(-5)).rejects.toThrow(/maxLen.*0 \(record no events\)/)
    await expect(producer.setEventRetention(1.5)).rejects.toThrow(InvalidOptions)
    expect(await producer.eventRetention()).toBe(0)
  })
})
