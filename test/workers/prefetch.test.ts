/**
 * Prefetch: jobs a worker holds beyond `concurrency`, leased but not started. Against
 * real Redis: they run once each, they are released unstarted at close, a lost lease
 * drops one unstarted, `prefetch: 0` never holds more than `concurrency`; "auto" follows
 * the handlers' pace (a pure function, no Redis).
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import type { WorkerContext } from "../../src/engine/worker/Context.ts"
import { AUTO_PREFETCH_UPTO, prefetchNow, recordHandlerMs } from "../../src/engine/worker/loop/Prefetch.ts"
import { makeScheduling } from "../../src/engine/worker/loop/Scheduling.ts"
import { Queue, Worker } from "../../src/index.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { setLeaseToken } from "../support/lease.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"

const name = queueNamer("prefetch")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

const newQueue = (q: string) => {
  const queue = new Queue<{ n: number }>(q, { connection: redisUrl() })
  onCleanup(() => queue.close())
  return queue
}

const newWorker = (
  q: string,
  handler: (job: { id: string; payload: { n: number }; attempt: number }) => Promise<unknown>,
  options: Record<string, unknown>,
) => {
  const worker = new Worker<{ n: number }>(q, handler, { connection: redisUrl(), ...options })
  onCleanup(() => worker.close())
  worker.on("error", () => {})
  return worker
}

describe('prefetch "auto" follows the handlers\' pace', () => {
  /** Just what prefetchNow and recordHandlerMs read and write. */
  const ctx = (concurrency: number, prefetch: number | "auto") =>
    ({ settings: { concurrency, prefetch }, sched: makeScheduling() }) as unknown as WorkerContext<unknown>

  it("none before a handler has finished; as many as finish in 2 ms, up to 48 held in all; none while handlers are slow", () => {
    const c1 = ctx(1, "auto")
    expect(prefetchNow(c1)).toBe(0)
    recordHandlerMs(c1, 0.5)
    expect(prefetchNow(c1)).toBe(4)
    const quick = ctx(1, "auto")
    recordHandlerMs(quick, 0.01)
    expect(prefetchNow(quick)).toBe(AUTO_PREFETCH_UPTO - 1)
    const slow = ctx(1, "auto")
    recordHandlerMs(slow, 5)
    expect(prefetchNow(slow)).toBe(0)
    // with 4 slots, 4 handlers of 1 ms finish 8 jobs in 2 ms
    const c4 = ctx(4, "auto")
    recordHandlerMs(c4, 1)
    expect(prefetchNow(c4)).toBe(8)
    // up to 48 held in all: 4 + 44 with quicker handlers, 16 + 32 at concurrency 16, none at 48 or more
    const quickC4 = ctx(4, "auto")
    recordHandlerMs(quickC4, 0.01)
    expect(prefetchNow(quickC4)).toBe(44)
    const c16 = ctx(16, "auto")
    recordHandlerMs(c16, 0.01)
    expect(prefetchNow(c16)).toBe(32)
    const c48 = ctx(48, "auto")
    recordHandlerMs(c48, 0.01)
    expect(prefetchNow(c48)).toBe(0)
    // a moving average: one slow job among quick ones does not turn it off
    const mixed = ctx(1, "auto")
    recordHandlerMs(mixed, 0.1)
    recordHandlerMs(mixed, 3)
    expect(prefetchNow(mixed)).toBeGreaterThan(0)
  })

  it("a number is used as it is", () => {
    const fixed = ctx(1, 3)
    recordHandlerMs(fixed, 10_000)
    expect(prefetchNow(fixed)).toBe(3)
    expect(prefetchNow(ctx(4, 0))).toBe(0)
  })
})

describe("prefetch against Redis", () => {
  it("concurrency 1, prefetch 4: the worker holds 5 jobs, runs one at a time, and each job once", async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = newQueue(q)
    await queue.addBulk(Array.from({ length: 30 }, (_, n) => ({ payload: { n } })))
    const runs = new Map<number, number>()
    let running = 0
    let mostRunning = 0
    let mostActive = 0
    const all = deferred()
    const worker = newWorker(
      q,
      async (job) => {
        running++
        mostRunning = Math.max(mostRunning, running)
        runs.set(job.payload.n, (runs.get(job.payload.n) ?? 0) + 1)
        mostActive = Math.max(mostActive, await raw.zcard(keys.active))
        running--
      },
      { concurrency: 1, prefetch: 4 },
    )
    let completed = 0
    worker.on("completed", () => {
      if (++completed === 30) all.resolve()
    })
    await all.promise
    expect(mostRunning).toBe(1)
    expect(mostActive).toBe(5)
    expect([...runs.values()].every((n) => n === 1)).toBe(true)
    expect(runs.size).toBe(30)
    expect(await queue.stats()).toMatchObject({ waiting: 0, active: 0 })
  })

  it("prefetch 0: never more jobs held than concurrency", async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = newQueue(q)
    await queue.addBulk(Array.from({ length: 40 }, (_, n) => ({ payload: { n } })))
    let mostActive = 0
    const all = deferred()
    const worker = newWorker(
      q,
      async () => {
        mostActive = Math.max(mostActive, await raw.zcard(keys.active))
      },
      { concurrency: 2, prefetch: 0 },
    )
    let completed = 0
    worker.on("completed", () => {
      if (++completed === 40) all.resolve()
    })
    await all.promise
    expect(mostActive).toBeGreaterThan(0)
    expect(mostActive).toBeLessThanOrEqual(2)
  })

  it("close releases the waiting jobs at once, unstarted, attempts unchanged: another worker runs them as attempt 1", async () => {
    const q = name()
    const queue = newQueue(q)
    await queue.addBulk(Array.from({ length: 5 }, (_, n) => ({ payload: { n } })))
    const gate = deferred()
    const started: number[] = []
    const first = newWorker(
      q,
      async (job) => {
        started.push(job.payload.n)
        await gate.promise
      },
      { concurrency: 1, prefetch: 4, shutdownGraceMs: 10_000 },
    )
    await until("the first worker holds all 5 jobs", async () => (await queue.stats()).active === 5)
    const closing = first.close()
    // the waiting jobs go back while the running handler still runs
    await until("4 jobs back in wait", async () => (await queue.stats()).waiting === 4)
    gate.resolve()
    await closing
    expect(started).toHaveLength(1)
    const attempts: number[] = []
    const rest = deferred()
    const second = newWorker(
      q,
      async (job) => {
        attempts.push(job.attempt)
        if (attempts.length === 4) rest.resolve()
      },
      { concurrency: 1, prefetch: 0 },
    )
    await rest.promise
    await second.close()
    expect(attempts).toEqual([1, 1, 1, 1])
    expect((await queue.stats()).counters).toMatchObject({ completed: 5, released: 4, lostLeases: 0 })
  })

  it("a waiting job whose lease is lost is never started by this worker; lease-lost names it", async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = newQueue(q)
    const ids = await queue.addBulk(Array.from({ length: 2 }, (_, n) => ({ payload: { n } })))
    const gate = deferred()
    const started: string[] = []
    const lost: string[] = []
    const worker = newWorker(
      q,
      async (job) => {
        started.push(job.id)
        if (started.length === 1) await gate.promise
      },
      { concurrency: 1, prefetch: 1, leaseMs: 1_000, sweep: false },
    )
    worker.on("lease-lost", (job) => lost.push(job.id))
    await until("both jobs held", async () => (await queue.stats()).active === 2)
    const waiting = ids.find((id) => id !== started[0])!
    // another holder took the waiting job's lease (its token is no longer this worker's)
    await setLeaseToken(raw, keys, waiting, "1")
    await until("the heartbeat found the lease lost", async () => lost.includes(waiting))
    gate.resolve()
    await until("the first job completed", async () => (await queue.stats()).counters.completed === 1)
    await worker.close()
    expect(started).toEqual([ids.find((id) => id !== waiting)])
  })
})

describe("prefetch: bad input", () => {
  for (const bad of [-1, 1.5, 1001, "all", null]) {
    it(`prefetch: ${JSON.stringify(bad)} is refused, naming the field and the value; nothing is written`, async () => {
      const q = name()
      const before = await dumpQueue(raw, q)
      let error: unknown
      try {
        newWorker(q, async () => {}, { prefetch: bad })
      } catch (e) {
        error = e
      }
      expect((error as { _tag?: string })._tag).toBe("InvalidOptions")
      expect((error as Error).message).toMatch(/prefetch/)
      expect((error as Error).message).toMatch(/"auto" or a whole number from 0 to 1000/)
      expect(await dumpQueue(raw, q)).toEqual(before)
    })
  }
})
