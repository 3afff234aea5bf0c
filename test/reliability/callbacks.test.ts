/**
 * User callbacks never stop a worker (Promise face). An event listener that throws, a
 * backoff function that throws or answers nonsense, a result that cannot be serialised:
 * each is reported (an `error` event, or the job fails) and every loop goes on — heartbeats
 * keep long jobs leased, the reserve loop keeps taking jobs. And a backoff function's
 * answer is checked: negative = no retry, a Promise is awaited, anything else = default.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CallbackFailed, InvalidOptions, InvalidPayload } from "../../src/engine/model/Errors.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { type Backoff, Queue, Worker } from "../../src/index.ts"
import { captureStderr, onCleanup } from "../support/cleanup.ts"
import { leaseToken, setLeaseToken } from "../support/lease.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { redisNow, until } from "../support/until.ts"

const q = queueNamer("rel-callbacks")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

/**
 * Cleanup registered when a thing is made, run (last made, first undone) after each test
 * and before the suite's leak check (`onTestFinished` would run after that check).
 */

const openQueue = <T>(name: string) => {
  const queue = new Queue<T>(name, { connection: redisUrl() })
  onCleanup(() => queue.close())
  return queue
}

const openWorker = <T>(
  name: string,
  handler: ConstructorParameters<typeof Worker<T>>[1],
  options: ConstructorParameters<typeof Worker<T>>[2] = {},
) => {
  const worker = new Worker<T>(name, handler, { connection: redisUrl(), ...options })
  onCleanup(() => worker.close())
  return worker
}

const aborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) resolve()
    else signal.addEventListener("abort", () => resolve(), { once: true })
  })

describe("listeners that throw (N5)", () => {
  it("N5: a lease-lost listener that throws: heartbeats go on, no job runs twice, a long job completes", async () => {
    const name = q("lease-lost")
    const keys = queueKeys(name)
    const queue = openQueue<{ job: string }>(name)
    const starts: Record<string, number[]> = {}
    let finishB = () => {}
    const bMayFinish = new Promise<void>((resolve) => {
      finishB = resolve
    })
    onCleanup(() => finishB())
    const worker = openWorker<{ job: string }>(
      name,
      async (job) => {
        const seen = starts[job.payload.job] ?? []
        starts[job.payload.job] = [...seen, job.token]
        // A's first run holds on until its lease is lost; B holds on until the test lets it finish
        if (job.payload.job === "A" && seen.length === 0) await aborted(job.signal)
        if (job.payload.job === "B") await Promise.race([bMayFinish, aborted(job.signal)])
        return "ok"
      },
      { concurrency: 2, leaseMs: 1000, sweep: { intervalMs: 100 } },
    )
    const lost: Array<{ id: string; reason: string }> = []
    const errors: unknown[] = []
    const completed: string[] = []
    worker.on("lease-lost", (job, reason) => {
      lost.push({ id: job.id, reason })
      throw new Error("a bug in a lease-lost listener")
    })
    worker.on("error", (e) => errors.push(e))
    worker.on("completed", (job) => completed.push(job.payload.job))
    await worker.ready

    const a = await queue.add({ job: "A" })
    await until("A started", () => starts.A?.length === 1)
    await setLeaseToken(raw, keys, a, "999999") // A's lease now belongs to another holder
    await until("A reported lost (the listener threw)", () => lost.some((l) => l.id === a))

    const b = await queue.add({ job: "B" })
    await until("B started", () => starts.B?.length === 1)
    const token = starts.B![0]!
    const firstDeadline = Number(await raw.zscore(keys.active, b))
    // heartbeats must keep B's lease (same token) well past two lease lengths
    await until(
      "B's lease extended by heartbeats past two lease lengths",
      async () => {
        const [deadline, holder] = await Promise.all([raw.zscore(keys.active, b), leaseToken(raw, keys, b)])
        if (holder !== String(token)) throw new Error(`B's lease changed hands: token ${holder}, was ${token}`)
        return Number(deadline) > firstDeadline + 2000
      },
      { timeoutMs: 20_000 },
    )
    finishB()
    await until("B completed", () => completed.includes("B"))
    expect(starts.B).toEqual([token])
    expect(lost.filter((l) => l.id === b)).toEqual([])
    const reported = errors.find((e) => e instanceof CallbackFailed)
    expect(reported).toBeInstanceOf(CallbackFailed)
    expect((reported as CallbackFailed).callback).toBe('the "lease-lost" listener')
    expect((reported as CallbackFailed).message).toContain("a bug in a lease-lost listener")
    expect(worker.state).toBe("running")
  })

  it("N5: an error listener that throws does not stop the reserve loop; the throw goes to stderr", async () => {
    const name = q("error-listener")
    const keys = queueKeys(name)
    const stderr = captureStderr()
    const queue = openQueue<string>(name)
    const ran: string[] = []
    const worker = openWorker<string>(name, async (job) => void ran.push(job.id), { blockTimeoutMs: 50 })
    let calls = 0
    worker.on("error", () => {
      calls++
      throw new Error("a bug in an error listener")
    })
    await worker.ready
    // every reserve now fails (WRONGTYPE on the wait list), and each failure is reported
    await raw.set(keys.wait, "not a list")
    onCleanup(async () => {
      await raw.del(keys.wait)
    })
    await until("two reserve failures reported to the throwing listener", () => calls >= 2, { timeoutMs: 20_000 })
    await raw.del(keys.wait)
    const id = await queue.add("after")
    await until("a job added afterwards runs", () => ran.includes(id))
    expect(stderr.length).toBeGreaterThanOrEqual(1)
    expect(stderr[0]).toContain(`worker of queue "${name}"`)
    expect(stderr[0]).toContain('the "error" listener threw Error: a bug in an error listener')
    expect(worker.state).toBe("running")
  })

  it("N5: a throwing completed listener and a rejecting async failed listener: the other listeners run, each throw is an error event", async () => {
    const name = q("isolation")
    const queue = openQueue<{ ok: boolean }>(name)
    const worker = openWorker<{ ok: boolean }>(name, async (job) => {
      if (!job.payload.ok) throw new Error("handler failed")
      return "done"
    })
    const seen: string[] = []
    const errors: unknown[] = []
    worker.on("completed", () => {
      throw new Error("first completed listener")
    })
    worker.on("completed", (job) => seen.push(`completed ${job.id}`))
    worker.on("failed", async () => {
      throw new Error("async failed listener")
    })
    worker.on("failed", (job) => seen.push(`failed ${job.id}`))
    worker.on("error", (e) => errors.push(e))
    const ok = await queue.add({ ok: true })
    const bad = await queue.add({ ok: false }, { maxAttempts: 1 })
    await until("both listeners of each event ran", () => seen.length === 2)
    expect(seen.sort()).toEqual([`completed ${ok}`, `failed ${bad}`].sort())
    await until("both throws reported", () => errors.length === 2)
    expect(errors.map((e) => (e as CallbackFailed).callback).sort()).toEqual([
      'the "completed" listener',
      'the "failed" listener',
    ])
    // and the worker goes on
    const next = await queue.add({ ok: true })
    await until("the next job completes", () => seen.includes(`completed ${next}`))
  })
})

describe("results that cannot be serialised (N5)", () => {
  it("N5: a handler returning 10n (results are kept): the job fails with a clear error, not a silent lease-expired", async () => {
    const name = q("bigint")
    const keys = queueKeys(name)
    const queue = openQueue<number>(name)
    const worker = openWorker<number>(name, async () => 10n, { leaseMs: 1000 })
    const failed: Array<{ error: unknown; willRetry: boolean }> = []
    const dead: Array<{ id: string; reason: string }> = []
    const other: string[] = []
    worker.on("failed", (_job, error, willRetry) => failed.push({ error, willRetry }))
    worker.on("dead", (job, reason) => dead.push({ id: job.id, reason }))
    worker.on("completed", () => other.push("completed"))
    worker.on("lease-lost", () => other.push("lease-lost"))
    const id = await queue.add(1, { maxAttempts: 1 })
    await until("the job is dead", () => dead.length === 1)
    expect(dead).toEqual([{ id, reason: "failed" }])
    expect(failed).toHaveLength(1)
    expect(failed[0]!.willRetry).toBe(false)
    expect(failed[0]!.error).toBeInstanceOf(InvalidPayload)
    expect((failed[0]!.error as InvalidPayload).message).toMatch(/^invalid result: cannot be serialised.*BigInt/)
    expect(other).toEqual([])
    const { jobs } = await queue.deadJobs()
    expect(JSON.stringify(jobs[0]!.error)).toContain("BigInt")
    expect(await raw.hget(keys.meta, "lost")).toBeNull()
  })
})

describe("a backoff function's answer is checked", () => {
  it.each([
    ["-1", () => -1],
    ["a Promise of -1", async () => -1],
  ])("a backoff answering %s: no retry, the job goes to dead with the handler's error", async (_label, backoff) => {
    const name = q("no-retry")
    const queue = openQueue<number>(name)
    let calls = 0
    const worker = openWorker<number>(
      name,
      async () => {
        calls++
        throw new Error("boom")
      },
      { backoff },
    )
    const failed: boolean[] = []
    const dead: Array<{ reason: string; error: unknown }> = []
    worker.on("failed", (_job, _error, willRetry) => failed.push(willRetry))
    worker.on("dead", (_job, reason, error) => dead.push({ reason, error }))
    await queue.add(1, { maxAttempts: 5 })
    await until("the job is dead", () => dead.length === 1)
    expect(calls).toBe(1)
    expect(failed).toEqual([false])
    expect(dead[0]!.reason).toBe("failed")
    expect((dead[0]!.error as Error).message).toBe("boom")
    const { jobs } = await queue.deadJobs()
    expect(JSON.stringify(jobs[0]!.error)).toContain("boom")
    // the attempt counts as a failure (the dead letter and the queue's counters say so)
    expect(jobs[0]!.failures).toBe(1)
    expect((await queue.stats()).counters).toMatchObject({ failed: 1, dead: 1 })
  })

  it("a backoff answering a Promise: it is awaited, the job is retried after the delay it resolves to", async () => {
    const name = q("promise")
    const keys = queueKeys(name)
    const queue = openQueue<number>(name)
    let before = 0
    let calls = 0
    const worker = openWorker<number>(
      name,
      async () => {
        calls++
        before = await redisNow(raw)
        throw new Error("try later")
      },
      { backoff: async (attempt) => attempt * 60_000 },
    )
    const failed: boolean[] = []
    worker.on("failed", (_job, _error, willRetry) => failed.push(willRetry))
    const id = await queue.add(1, { maxAttempts: 3 })
    await until("the attempt failed", () => failed.length === 1)
    const after = await redisNow(raw)
    const due = Number(await raw.zscore(keys.delayed, id))
    expect(failed).toEqual([true])
    expect(due).toBeGreaterThanOrEqual(before + 60_000)
    expect(due).toBeLessThanOrEqual(after + 60_000)
    expect(calls).toBe(1)
  })

  it.each<[string, Backoff, new (...args: never[]) => Error, string]>([
    [
      "throws",
      () => {
        throw new Error("a bug in the backoff")
      },
      CallbackFailed,
      "the backoff function threw Error: a bug in the backoff",
    ],
    ["rejects", async () => Promise.reject(new Error("no delay today")), CallbackFailed, "no delay today"],
    ["answers NaN", () => Number.NaN, InvalidOptions, "invalid option backoff = NaN"],
    ["answers Infinity", () => Number.POSITIVE_INFINITY, InvalidOptions, "invalid option backoff = Infinity"],
    ["answers a string", (() => "soon") as unknown as Backoff, InvalidOptions, 'invalid option backoff = "soon"'],
  ])("a backoff that %s: an error event, and the default backoff applies", async (_label, backoff, kind, text) => {
    const name = q("bad-backoff")
    const keys = queueKeys(name)
    const queue = openQueue<number>(name)
    let before = 0
    const worker = openWorker<number>(
      name,
      async () => {
        before = await redisNow(raw)
        throw new Error("handler failed")
      },
      { backoff },
    )
    const failed: boolean[] = []
    const errors: unknown[] = []
    worker.on("failed", (_job, _error, willRetry) => failed.push(willRetry))
    worker.on("error", (e) => errors.push(e))
    const id = await queue.add(1, { maxAttempts: 3 })
    await until("the attempt failed", () => failed.length === 1)
    const after = await redisNow(raw)
    expect(failed).toEqual([true])
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBeInstanceOf(kind)
    expect((errors[0] as Error).message).toContain(text)
    // the default backoff: exponential from 1 s with jitter, so attempt 1 waits 500 – 1000 ms
    const due = Number(await raw.zscore(keys.delayed, id))
    expect(due).toBeGreaterThanOrEqual(before + 500)
    expect(due).toBeLessThanOrEqual(after + 1000)
  })
})
