/**
 * Steering running jobs, through the Promise face against real Redis: the worker
 * registry, timeouts (a handler that ignores its signal), progress riding the heartbeat,
 * and a cancel reaching the handler. Every wait is on an event or on Redis state.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { InvalidOptions, JobCancelled, JobTimedOut, Queue, Worker } from "../../src/index.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { cancelActive } from "../support/lease.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { redisNow, until } from "../support/until.ts"

const name = queueNamer("workers-steer")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

const makeQueue = (q: string) => {
  const queue = new Queue(q, { connection: redisUrl() })
  onCleanup(() => queue.close())
  return queue
}
const makeWorker = <T>(
  q: string,
  handler: ConstructorParameters<typeof Worker<T>>[1],
  options: ConstructorParameters<typeof Worker<T>>[2] = {},
) => {
  // no test here is about expiry: a 1 s lease was self-fenced by a worker stalled on a loaded
  // machine before its 300 ms timeout was told (no "failed": the test waited 60 s)
  const worker = new Worker<T>(q, handler, { connection: redisUrl(), leaseMs: 60_000, heartbeatMs: 100, ...options })
  onCleanup(() => worker.close())
  return worker
}
/**
 * A promise for a handler that ignores its signal to wait on; `end` settles it (call it
 * after the worker's cleanup was registered, so it runs before the worker closes).
 */
const stuck = () => {
  const d = deferred()
  return { promise: d.promise, end: () => onCleanup(() => d.resolve()), resolve: () => d.resolve() }
}

describe("the worker registry", () => {
  it("a worker is listed from its start, with its id on each lease it holds and its running count; it leaves at close", async () => {
    const q = name()
    const queue = makeQueue(q)
    const started = deferred()
    const release = deferred()
    const worker = makeWorker(
      q,
      async () => {
        started.resolve()
        await release.promise
      },
      { concurrency: 3 },
    )
    await worker.ready
    const [listed] = await queue.workers()
    expect(listed).toMatchObject({ concurrency: 3, running: 0, state: "running", pid: process.pid })
    expect(listed!.id).toMatch(new RegExp(`^${listed!.host}:${process.pid}:`))
    const [s, us] = await raw.time()
    expect(listed!.lastSeenAt).toBeLessThanOrEqual(Number(s) * 1000 + Math.floor(Number(us) / 1000))
    const id = await queue.add({})
    await started.promise
    // the lease names its holder
    expect(String(await raw.hget(queueKeys(q).holder, id)).split("|")[0]).toBe(listed!.id)
    // the heartbeat that carries the lease carries the record too
    await until("the registry to show the running job", async () => (await queue.workers())[0]?.running === 1)
    release.resolve()
    await worker.close()
    expect(await queue.workers()).toEqual([])
    expect(await raw.exists(queueKeys(q).workers, queueKeys(q).workersAt)).toBe(0)
    // no lease is held; the completed job (retained) keeps its run's holder entry, for its startedAt
    expect(await raw.zcard(queueKeys(q).active)).toBe(0)
    expect(await raw.hkeys(queueKeys(q).holder)).toEqual([id])
  })
})

describe("the worker registry's running count", () => {
  it("agrees with the leases the worker holds as of its next heartbeat, as jobs start and as they end", async () => {
    const q = name()
    const queue = makeQueue(q)
    const release = deferred()
    let started = 0
    const worker = makeWorker(
      q,
      async () => {
        started++
        await release.promise
      },
      { concurrency: 5, prefetch: 0 },
    )
    onCleanup(() => release.resolve())
    await worker.ready
    await queue.addBulk(Array.from({ length: 5 }, (_, n) => ({ payload: { n } })))
    await until("the 5 jobs run", () => started === 5)
    // a record is as of its heartbeat: the first one sent after now counts the 5 running
    // the holder entries of the jobs active (a retained completed job keeps its run's entry)
    const heldBy = async (workerId: string) => {
      const active = new Set(await raw.zrange(queueKeys(q).active, "0", "-1"))
      return Object.entries(await raw.hgetall(queueKeys(q).holder)).filter(
        ([id, h]) => active.has(id) && h.split("|")[0] === workerId,
      ).length
    }
    const recordAfter = async (t: number) =>
      until("a heartbeat after that moment", async () => {
        const [w] = await queue.workers()
        return w !== undefined && w.lastSeenAt > t ? w : undefined
      })
    const busy = await recordAfter(await redisNow(raw))
    expect([busy.running, await heldBy(busy.id)]).toEqual([5, 5])
    release.resolve()
    await until("the jobs complete", async () => (await queue.stats()).counters.completed === 5)
    const idle = await recordAfter(await redisNow(raw))
    expect([idle.running, await heldBy(idle.id)]).toEqual([0, 0])
  })
})

describe("the worker registry of a partitioned queue", () => {
  it("a worker serving N partitions is listed once per partition, each under its own id", async () => {
    const q = name()
    const queue = new Queue(q, { connection: redisUrl(), partitions: 2 })
    onCleanup(() => queue.close())
    const worker = makeWorker(q, async () => {}, { partitions: 2, concurrency: 2 })
    await worker.ready
    const listed = await queue.workers()
    expect(listed).toHaveLength(2)
    expect(new Set(listed.map((w) => w.id)).size).toBe(2)
    expect(listed.every((w) => w.pid === process.pid && w.concurrency === 1)).toBe(true)
    await worker.close()
    expect(await queue.workers()).toEqual([])
  })
})

describe("timeoutMs", () => {
  it("a handler that ignores its signal is cut off once: signal aborted with JobTimedOut, counted as a failure, run again", async () => {
    const q = name()
    const queue = makeQueue(q)
    const late = stuck()
    const reasons: unknown[] = []
    const failed = deferred<{ error: unknown; willRetry: boolean }>()
    const second = deferred<number>()
    let firstResolved = false
    const worker = makeWorker<string>(
      q,
      async (job) => {
        if (job.attempt === 1) {
          job.signal.addEventListener("abort", () => reasons.push(job.signal.reason))
          await late.promise // ignores its signal
          firstResolved = true
          return "late"
        }
        second.resolve(job.attempt)
        return "second"
      },
      // a handler that ignores its signal keeps its slot until it returns: a second slot runs the retry
      { backoff: { type: "fixed", delayMs: 0 }, concurrency: 2 },
    )
    late.end()
    let completed = 0
    worker.on("completed", () => completed++)
    worker.on("failed", (_job, error, willRetry) => failed.resolve({ error, willRetry }))
    const id = await queue.add("x", { timeoutMs: 300, maxAttempts: 3 })
    const f = await failed.promise
    expect(f.error).toBeInstanceOf(JobTimedOut)
    expect(f.willRetry).toBe(true)
    expect(reasons).toHaveLength(1)
    expect(reasons[0]).toBeInstanceOf(JobTimedOut)
    expect((reasons[0] as JobTimedOut).message).toMatch(/timeoutMs of 300 ms/)
    // the next attempt runs while the first handler is still stuck
    expect(await second.promise).toBe(2)
    expect(firstResolved).toBe(false)
    await until("the second attempt to complete", () => completed === 1)
    // the stuck handler returning at last acks nothing
    late.resolve()
    await until("the first handler to return", () => firstResolved)
    await worker.close()
    expect(completed).toBe(1)
    const stats = await queue.stats()
    expect(stats.counters).toMatchObject({ failed: 1, lostLeases: 0, completed: 1 })
    // completed and retained: getJob tells the failure it had
    expect(await queue.getJob(id)).toMatchObject({ state: "completed", failures: 1 })
  })

  it("the worker's default applies to jobs without their own; with attempts used up the job dies with reason timeout", async () => {
    const q = name()
    const queue = makeQueue(q)
    const late = stuck()
    const dead = deferred<{ reason: string; error: unknown }>()
    const worker = makeWorker(q, () => late.promise, { timeoutMs: 200 })
    late.end()
    worker.on("dead", (_job, reason, error) => dead.resolve({ reason, error }))
    const id = await queue.add({}, { maxAttempts: 1 })
    const d = await dead.promise
    expect(d.reason).toBe("timeout")
    expect(d.error).toBeInstanceOf(JobTimedOut)
    const [job] = (await queue.deadJobs()).jobs
    expect(job).toMatchObject({ id, failures: 1, lostLeases: 0 })
    expect(job!.error).toMatchObject({ reason: "timeout", name: "JobTimedOut", timeoutMs: 200 })
  })

  it("a bad timeoutMs is refused naming the field, and nothing is written", async () => {
    const q = name()
    const queue = makeQueue(q)
    await expect(queue.add({}, { timeoutMs: 0 })).rejects.toThrow(/options\.timeoutMs/)
    await expect(queue.add({}, { timeoutMs: 1.5 })).rejects.toBeInstanceOf(InvalidOptions)
    expect(await raw.exists(queueKeys(q).wait, queueKeys(q).meta)).toBe(0)
    expect(() => new Worker(q, async () => {}, { connection: redisUrl(), timeoutMs: -1 })).toThrow(/timeoutMs/)
  })
})

describe("job.progress", () => {
  it("rides the next heartbeat into the progress hash; a later value replaces it; bad values throw", async () => {
    const q = name()
    const queue = makeQueue(q)
    const step = deferred()
    const done = deferred()
    const thrown = deferred<unknown>()
    makeWorker(q, async (job) => {
      job.progress({ done: 1, of: 3 })
      await step.promise
      job.progress("two thirds")
      try {
        job.progress(undefined)
      } catch (e) {
        thrown.resolve(e)
      }
      await done.promise
    })
    const id = await queue.add({})
    const key = queueKeys(q).progress
    await until("the first progress to be stored", async () => (await raw.hget(key, id)) === '{"done":1,"of":3}')
    step.resolve()
    await until("the second progress to be stored", async () => (await raw.hget(key, id)) === '"two thirds"')
    const e = await thrown.promise
    expect(e).toBeInstanceOf(InvalidOptions)
    expect((e as InvalidOptions).message).toMatch(/progress/)
    done.resolve()
    // the last value is kept with the retained completed job
    await until("the job to complete", async () => (await queue.stats()).counters.completed === 1)
    expect(await queue.getJob(id)).toMatchObject({ state: "completed", progress: "two thirds" })
  })
})

describe("a cancelled active job", () => {
  it("its handler's signal aborts with JobCancelled at the next heartbeat; it is never acked nor retried", async () => {
    const q = name()
    const queue = makeQueue(q)
    const keys = queueKeys(q)
    const started = deferred()
    const late = stuck()
    const reason = deferred<unknown>()
    const worker = makeWorker(q, async (job) => {
      job.signal.addEventListener("abort", () => reason.resolve(job.signal.reason))
      started.resolve()
      await late.promise // ignores its signal
      return "done anyway"
    })
    late.end()
    const cancelled = deferred<{ id: string }>()
    worker.on("cancelled", (job) => cancelled.resolve(job))
    let completed = 0
    worker.on("completed", () => completed++)
    const id = await queue.add({})
    await started.promise
    // what cancelling an active job leaves: the lease revoked, the job marked cancelled
    await cancelActive(raw, keys, id, await redisNow(raw))
    const why = await reason.promise
    expect(why).toBeInstanceOf(JobCancelled)
    expect((why as Error).message).toMatch(/was cancelled/)
    expect((await cancelled.promise).id).toBe(id)
    // the handler returning at last acks nothing
    late.resolve()
    await until("its slot to be free", () => worker.running === 0)
    await worker.close()
    expect(completed).toBe(0)
    const stats = await queue.stats()
    expect(stats).toMatchObject({ waiting: 0, active: 0, delayed: 0, dead: 0 })
    expect(stats.counters).toMatchObject({ completed: 0, failed: 0, lostLeases: 0 })
  })
})

describe("a running job whose queue is obliterated with force", () => {
  it("is told cancelled at the next heartbeat (its signal aborts with JobCancelled), not lease-lost", async () => {
    const q = name()
    const queue = makeQueue(q)
    const started = deferred()
    const late = stuck()
    const reason = deferred<unknown>()
    const worker = makeWorker(q, async (job) => {
      job.signal.addEventListener("abort", () => reason.resolve(job.signal.reason))
      started.resolve()
      await late.promise
    })
    late.end()
    const cancelled = deferred<{ id: string }>()
    worker.on("cancelled", (job) => cancelled.resolve(job))
    const lost: string[] = []
    worker.on("lease-lost", (job) => lost.push(job.id))
    const id = await queue.add({})
    await started.promise
    expect(await queue.obliterate({ force: true })).toEqual({ active: 1 })
    expect(await reason.promise).toBeInstanceOf(JobCancelled)
    expect((await cancelled.promise).id).toBe(id)
    late.resolve()
    await until("its slot to be free", () => worker.running === 0)
    await worker.close()
    expect(lost).toEqual([])
  })

  it("whose handler returns before the next heartbeat: its refused complete is told cancelled, not lease-lost", async () => {
    const q = name()
    const queue = makeQueue(q)
    const started = deferred()
    const finish = stuck()
    // no heartbeat comes before the handler returns: the complete finds the lease gone
    const worker = makeWorker(
      q,
      async () => {
        started.resolve()
        await finish.promise
      },
      { leaseMs: 60_000, heartbeatMs: 20_000 },
    )
    finish.end()
    const cancelled = deferred<{ id: string }>()
    worker.on("cancelled", (job) => cancelled.resolve(job))
    const lost: string[] = []
    worker.on("lease-lost", (job) => lost.push(job.id))
    let completed = 0
    worker.on("completed", () => completed++)
    const id = await queue.add({})
    await started.promise
    expect(await queue.obliterate({ force: true })).toEqual({ active: 1 })
    finish.resolve()
    expect((await cancelled.promise).id).toBe(id)
    await worker.close()
    expect(lost).toEqual([])
    expect(completed).toBe(0)
  })
})
