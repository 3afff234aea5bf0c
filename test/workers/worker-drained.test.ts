/**
 * The worker's own `drained` event (BullMQ's worker `drained`), against real Redis: told
 * once the worker had work and found none (every job of its own acknowledged), once per
 * move to idle — not per empty poll, not before any work, not while a job still runs —
 * through the Promise face and the Effect face (`onDrained`).
 */
import { expect, it } from "@effect/vitest"
import { Context, Deferred, Effect } from "effect"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe } from "vitest"
import { LeaseQueue, LeaseWorker } from "../../src/effect.ts"
import { deferred } from "../support/cleanup.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("worker-drained")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

/** BZPOPMIN calls the server has run (an idle worker's empty polls). */
const blockingWaits = async () => Number(/cmdstat_bzpopmin:calls=(\d+)/.exec(await raw.info("commandstats"))?.[1] ?? 0)

/** Until the server ran `n` more empty polls than now (the worker looked at an empty queue again and again). */
const morePolls = async (n: number) => {
  const from = await blockingWaits()
  await until(`${n} more empty polls`, async () => (await blockingWaits()) >= from + n)
}

const idle = { blockTimeoutMs: 20 } as const

describe("the Promise worker's drained event", () => {
  it("is told once all its jobs are acknowledged, then not again on empty polls; again after more work", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    let drained = 0
    const stateAtDrained: Array<{ waiting: number; active: number }> = []
    const worker = useWorker<number>(q, async () => {}, { ...idle, concurrency: 2 })
    worker.on("drained", () => {
      drained++
      void queue.stats().then((s) => stateAtDrained.push({ waiting: s.waiting, active: s.active }))
    })
    await worker.ready
    await queue.addBulk([1, 2, 3, 4, 5].map((payload) => ({ payload })))
    await until("drained", () => drained === 1)
    await until("stats read", () => stateAtDrained.length === 1)
    expect(stateAtDrained[0]).toEqual({ waiting: 0, active: 0 })
    await morePolls(3)
    expect(drained).toBe(1)
    await queue.add(6)
    await until("drained again", () => drained === 2)
    await morePolls(3)
    expect(drained).toBe(2)
  })

  it("is not told by a worker that never had work", async () => {
    const q = name()
    let drained = 0
    const worker = useWorker(q, async () => {}, idle)
    worker.on("drained", () => drained++)
    await worker.ready
    await morePolls(3)
    expect(drained).toBe(0)
  })

  it("is not told while one of its jobs still runs, though the queue is empty; told once it completed", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const started = deferred<void>()
    const gate = deferred<void>()
    let drained = 0
    const worker = useWorker<number>(
      q,
      async () => {
        started.resolve()
        await gate.promise
      },
      { ...idle, concurrency: 2 },
    )
    worker.on("drained", () => drained++)
    await worker.ready
    const id = await queue.add(1)
    await started.promise
    await morePolls(3)
    expect(drained).toBe(0)
    gate.resolve()
    await until("drained", () => drained === 1)
    expect((await queue.getJob(id))?.state).not.toBe("active")
  })

  it("a failed job's retry keeps it busy: told once the retry is done, not at the failure", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const seen: string[] = []
    const worker = useWorker<number>(
      q,
      async (job) => {
        if (job.attempt === 1) throw new Error("first attempt fails")
      },
      { ...idle, backoff: () => 0 },
    )
    worker.on("failed", () => seen.push("failed"))
    worker.on("completed", () => seen.push("completed"))
    worker.on("drained", () => seen.push("drained"))
    await worker.ready
    await queue.add(1)
    await until("drained", () => seen.includes("drained"))
    expect(seen).toEqual(["failed", "completed", "drained"])
  })
})

class Jobs extends Context.Service<Jobs, LeaseQueue.Service<number>>()("test/WorkerDrainedJobs") {}

describe("the Effect worker's onDrained", () => {
  const q = name()
  it.live("is told once the jobs are done", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      const drained = yield* Deferred.make<number>()
      let done = 0
      yield* LeaseWorker.make(
        Jobs,
        () =>
          Effect.sync(() => {
            done++
          }),
        { ...idle, concurrency: 2, onDrained: () => Deferred.succeed(drained, done).pipe(Effect.asVoid) },
      )
      yield* jobs.addBulk([1, 2, 3].map((payload) => ({ payload })))
      expect(yield* Deferred.await(drained).pipe(Effect.timeout("10 seconds"))).toBe(3)
      const stats = yield* jobs.stats
      expect({ waiting: stats.waiting, active: stats.active }).toEqual({ waiting: 0, active: 0 })
    }).pipe(Effect.provide(LeaseQueue.layer(Jobs, { name: q, connection: redisUrl() }))),
  )
})
