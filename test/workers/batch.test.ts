/**
 * Batch workers (the `batch` option) through the Promise face, against real Redis: each
 * job of a batch keeps its own lease, token, attempts and outcome.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { InvalidOptions } from "../../src/engine/model/Errors.ts"
import { type BatchHandler, type BatchWorkerOptions, Worker } from "../../src/index.ts"
import { startWorkerChild } from "../support/child.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("batch")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

/** A batch worker on the suite's Redis, closed after the test. */
const useBatchWorker = <T>(q: string, handler: BatchHandler<T>, options: BatchWorkerOptions) => {
  const worker = new Worker<T>(q, handler, { connection: redisUrl(), ...options })
  onCleanup(() => worker.close())
  return worker
}

/** Ids of the jobs the worker reported on `event`, collected. */
const collect = <T>(worker: Worker<T>, event: "completed" | "failed" | "cancelled") => {
  const ids: string[] = []
  const push = (job: { id: string }) => void ids.push(job.id)
  worker.on(event, push as (...args: unknown[]) => void)
  return ids
}

describe("batch worker", () => {
  it("a batch of 50 where the handler fails 3: 47 completed, 3 retried, each with its own attempt", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const ids = await queue.addBulk(Array.from({ length: 50 }, (_, n) => ({ payload: n })))
    const failing = new Set([ids[3]!, ids[17]!, ids[40]!])
    const batches: Array<Array<{ id: string; attempt: number }>> = []
    const worker = useBatchWorker<number>(
      q,
      async (jobs) => {
        batches.push(jobs.map((j) => ({ id: j.id, attempt: j.attempt })))
        for (const job of jobs) if (job.attempt === 1 && failing.has(job.id)) job.fail(new Error(`bad ${job.payload}`))
      },
      { batch: { size: 50, waitMs: 500 }, backoff: { type: "fixed", delayMs: 10 }, sweep: { intervalMs: 20 } },
    )
    const completed = collect(worker, "completed")
    const failed: Array<{ id: string; willRetry: boolean }> = []
    worker.on("failed", (job, _e, willRetry) => void failed.push({ id: job.id, willRetry }))
    await until("all 50 completed", () => completed.length === 50)
    expect(batches[0]!.map((j) => j.id)).toEqual(ids)
    expect(batches[0]!.every((j) => j.attempt === 1)).toBe(true)
    expect(completed.slice(0, 47).sort()).toEqual(ids.filter((id) => !failing.has(id)).sort())
    expect(failed.sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      [...failing].sort().map((id) => ({ id, willRetry: true })),
    )
    const retried = batches.slice(1).flat()
    expect(retried.map((j) => j.id).sort()).toEqual([...failing].sort())
    expect(retried.every((j) => j.attempt === 2)).toBe(true)
    expect((await queue.stats()).counters).toMatchObject({ completed: 50, failed: 3 })
    expect(await queue.verify()).toMatchObject({ violations: 0 })
  })

  it("hands over fewer than size jobs once waitMs passes", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const ids = await queue.addBulk([1, 2, 3].map((payload) => ({ payload })))
    const got = deferred<string[]>()
    useBatchWorker<number>(q, async (jobs) => got.resolve(jobs.map((j) => j.id)), { batch: { size: 10, waitMs: 50 } })
    expect(await got.promise).toEqual(ids)
  })

  it("reserves a whole batch per call: with a backlog, every batch is full even with waitMs 0", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    await queue.addBulk(Array.from({ length: 3000 }, (_, payload) => ({ payload })))
    const sizes: number[] = []
    const worker = useBatchWorker<number>(q, async (jobs) => void sizes.push(jobs.length), {
      batch: { size: 100, waitMs: 0 },
    })
    const completed = collect(worker, "completed")
    await until("3000 completed", () => completed.length === 3000)
    expect(sizes).toEqual(Array.from({ length: 30 }, () => 100))
  })

  it("serves a partitioned queue: a batch gathers the jobs of every partition", async () => {
    const q = name()
    const queue = useQueue<number>(q, { partitions: 4 })
    const ids = await queue.addBulk(Array.from({ length: 40 }, (_, payload) => ({ payload })))
    const sizes: number[] = []
    const worker = useBatchWorker<number>(q, async (jobs) => void sizes.push(jobs.length), {
      partitions: 4,
      batch: { size: 40, waitMs: 5_000 },
    })
    const completed = collect(worker, "completed")
    await until("40 completed", () => completed.length === 40)
    expect(completed.sort()).toEqual([...ids].sort())
    expect(sizes).toEqual([40])
  })

  it("a throwing handler fails every job of the batch not yet settled, each with its own attempt", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const ids = await queue.addBulk([0, 1, 2, 3].map((payload) => ({ payload, options: { maxAttempts: 1 } })))
    const worker = useBatchWorker<number>(
      q,
      async (jobs) => {
        jobs[0]!.complete("early")
        throw new Error("the whole batch")
      },
      { batch: { size: 4, waitMs: 5_000 } }, // the completed job is retained (default retention)
    )
    const dead: Array<{ id: string; error: string }> = []
    worker.on("dead", (job, _reason, e) => void dead.push({ id: job.id, error: (e as Error).message }))
    await until("3 dead", () => dead.length === 3)
    expect(dead.map((d) => d.id).sort()).toEqual(ids.slice(1).sort())
    expect(new Set(dead.map((d) => d.error))).toEqual(new Set(["the whole batch"]))
    expect(await queue.getJob(ids[0]!)).toMatchObject({ state: "completed", result: "early" })
    for (const id of ids.slice(1)) expect(await queue.getJob(id)).toMatchObject({ state: "dead", failures: 1 })
  })

  it("heartbeats extend every lease of the batch while the handler runs", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const ids = await queue.addBulk([0, 1, 2].map((payload) => ({ payload })))
    const activeKey = `leaseq:{${q}}:active`
    const worker = useBatchWorker<number>(
      q,
      async () => {
        const first = await Promise.all(ids.map((id) => raw.zscore(activeKey, id)))
        // every job's own lease is raised by the heartbeat, not only the first's
        await until("every lease extended", async () => {
          const now = await Promise.all(ids.map((id) => raw.zscore(activeKey, id)))
          return now.every((s, i) => Number(s) > Number(first[i]))
        })
      },
      // a quick heartbeat on the default lease: one lost on a busy machine would run a job twice
      { batch: { size: 3, waitMs: 5_000 }, heartbeatMs: 100 },
    )
    const completed = collect(worker, "completed")
    const lost = collect(worker, "failed")
    await until("3 completed", () => completed.length === 3)
    expect(lost).toEqual([])
  })

  it("a job cancelled mid-batch is reported as cancelled; the others complete", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const ids = await queue.addBulk([0, 1, 2].map((payload) => ({ payload })))
    const aborted = deferred<unknown>()
    const running = deferred()
    const worker = useBatchWorker<number>(
      q,
      async (jobs) => {
        jobs[1]!.signal.addEventListener("abort", () => aborted.resolve(jobs[1]!.signal.reason))
        running.resolve()
        await aborted.promise
      },
      // the cancel is told by a heartbeat: a quick one, on a lease no busy machine can lose
      { batch: { size: 3, waitMs: 5_000 }, heartbeatMs: 100 },
    )
    const completed = collect(worker, "completed")
    const cancelled = collect(worker, "cancelled")
    await running.promise
    expect(await queue.cancel(ids[1]!)).toBe("active")
    expect(await aborted.promise).toMatchObject({ _tag: "JobCancelled" })
    await until("2 completed", () => completed.length === 2)
    expect(completed.sort()).toEqual([ids[0]!, ids[2]!].sort())
    expect(cancelled).toEqual([ids[1]])
    expect((await queue.stats()).active).toBe(0)
  })

  it("a job's timeoutMs applies to it alone: its attempt fails, the rest of the batch completes", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const [slow, quick] = await queue.addBulk([{ payload: 0, options: { timeoutMs: 100 } }, { payload: 1 }])
    const worker = useBatchWorker<number>(
      q,
      async (jobs) => {
        const timed = jobs.find((j) => j.id === slow)!
        await new Promise((resolve) => timed.signal.addEventListener("abort", resolve))
      },
      { batch: { size: 2, waitMs: 5_000 }, backoff: { type: "fixed", delayMs: 60_000 } },
    )
    const failed: Array<{ id: string; error: unknown; willRetry: boolean }> = []
    worker.on("failed", (job, error, willRetry) => void failed.push({ id: job.id, error, willRetry }))
    const completed = collect(worker, "completed")
    await until("the quick job completed and the slow one failed", () => completed.length === 1 && failed.length === 1)
    expect(completed).toEqual([quick])
    expect(failed).toMatchObject([{ id: slow, error: { _tag: "JobTimedOut" }, willRetry: true }])
  })

  it("a SIGKILLed batch worker's jobs are all reclaimed by the sweep", async () => {
    const q = name()
    const queue = useQueue(q)
    const ids = await queue.addBulk([1, 2, 3, 4, 5].map((payload) => ({ payload })))
    const options = { leaseMs: 300, sweep: false, batch: { size: 5, waitMs: 5_000 } }
    const child = startWorkerChild(redisUrl(), q, "hang", options)
    await child.waitFor((l) => l === "batch 5")
    for (const id of ids) await child.waitFor((l) => l.startsWith(`started ${id} `))
    await child.stop()
    expect((await queue.stats()).active).toBe(5)
    const attempts: number[] = []
    // the rescuer's own lease is the default: only the killed worker's must run out
    const worker = useWorker(q, async (job) => void attempts.push(job.attempt), { sweep: { intervalMs: 50 } })
    const completed = collect(worker, "completed")
    await until("5 completed", () => completed.length === 5)
    expect(attempts).toEqual([2, 2, 2, 2, 2])
    expect((await queue.stats()).counters).toMatchObject({ completed: 5, lostLeases: 5 })
  })

  it("close() while a batch runs: the batch finishes within the grace and its jobs complete", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    await queue.addBulk([0, 1, 2, 3].map((payload) => ({ payload })))
    const running = deferred()
    const finish = deferred()
    const worker = useBatchWorker<number>(
      q,
      async () => {
        running.resolve()
        await finish.promise
      },
      { batch: { size: 4, waitMs: 5_000 } },
    )
    const completed = collect(worker, "completed")
    await running.promise
    const closing = worker.close()
    expect(worker.state).toBe("draining")
    finish.resolve()
    await closing
    expect(completed).toHaveLength(4)
    expect(await queue.stats()).toMatchObject({ active: 0, waiting: 0 })
  })

  it("close() hands a partial batch over at once instead of waiting for waitMs", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const [id] = await queue.addBulk([{ payload: 1 }])
    const got: string[][] = []
    const worker = useBatchWorker<number>(q, async (jobs) => void got.push(jobs.map((j) => j.id)), {
      batch: { size: 10, waitMs: 60_000 },
    })
    // the worker holds it in the gathering batch (leased in Redis is not enough: a reserve
    // reply that lands after close began gives its jobs back unstarted, by design)
    await until("the job waits in the worker's batch", async () => worker.running === 1)
    expect(got).toEqual([])
    await worker.close()
    expect(got).toEqual([[id]])
    expect(await queue.stats()).toMatchObject({ active: 0, waiting: 0 })
  })

  it("refuses a bad batch option naming the field, before anything is written", async () => {
    const q = name()
    const before = await dumpQueue(raw, q)
    const make = (options: unknown) => () => new Worker(q, async () => {}, options as BatchWorkerOptions)
    const cases: Array<[unknown, string]> = [
      [{ batch: { size: 0 } }, "batch.size"],
      [{ batch: { size: 1001 } }, "batch.size"],
      [{ batch: {} }, "batch.size"],
      [{ batch: { size: 5, waitMs: -1 } }, "batch.waitMs"],
      [{ batch: { size: 5, wait: 1 } }, "batch.wait"],
      [{ batch: 5 }, "batch"],
      [{ batch: { size: 5 }, concurrency: 4 }, "concurrency"],
    ]
    for (const [options, field] of cases) {
      expect(make(options)).toThrow(InvalidOptions)
      try {
        make(options)()
      } catch (e) {
        expect((e as InvalidOptions).field).toBe(field)
      }
    }
    // BullMQ Pro's names point to leaseq's
    expect(make({ batches: { size: 5 } })).toThrow(/did you mean batch\?/)
    expect(make({ batch: { size: 5, timeout: 10 } })).toThrow(/did you mean waitMs\?/)
    expect(await dumpQueue(raw, q)).toEqual(before)
  })
})
