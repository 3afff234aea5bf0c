/**
 * Shutdown keeps the worker's promises: close() is idempotent (a second call waits for
 * the first, in the Effect face too); in the Promise face a job is released only once
 * its handler's promise has settled (no one else starts it meanwhile), and past
 * `shutdownAbortGraceMs` its lease is left to expire instead; close() on a worker whose
 * Redis has become unreachable still ends.
 */
import { Context, Deferred, Effect } from "effect"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { LeaseQueue, LeaseWorker } from "../../src/effect.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { leaseToken } from "../support/lease.ts"
import { proxyToSuiteRedis } from "../support/proxy.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("shutdown")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})
class Jobs extends Context.Service<Jobs, LeaseQueue.Service<{ readonly n: number }>>()("shutdown/Jobs") {}

describe("shutdown", () => {
  it("N7: Effect face: handle.close forked, then the scope ends: the scope waits, both finished handlers' completes land", async () => {
    const q = name()
    const keys = queueKeys(q)
    const completed: number[] = []
    const program = Effect.gen(function* () {
      const queue = yield* Jobs
      const gate = yield* Deferred.make<void>()
      let started = 0
      const handle = yield* LeaseWorker.make(
        Jobs,
        (job) =>
          Effect.gen(function* () {
            started++
            yield* Deferred.await(gate)
            return job.payload.n
          }),
        { concurrency: 2, onCompleted: (job) => Effect.sync(() => completed.push(job.payload.n)) },
      )
      // runs first when the scope closes (finalizers run newest first): the handlers finish
      // only once the scope is closing, after the worker's own close has begun elsewhere
      yield* Effect.addFinalizer(() => Deferred.succeed(gate, undefined))
      yield* queue.add({ n: 1 })
      yield* queue.add({ n: 2 })
      yield* Effect.promise(() => until("both handlers running", () => started === 2))
      // e.g. a SIGTERM handler closes the worker, and the program then ends its scope
      yield* Effect.forkDetach(handle.close)
      yield* Effect.promise(() =>
        until("the worker draining", () => Effect.runPromise(handle.state.pipe(Effect.map((s) => s === "draining")))),
      )
    })
    await Effect.runPromise(
      Effect.scoped(program).pipe(Effect.provide(LeaseQueue.layer(Jobs, { name: q, connection: redisUrl() }))),
    )
    expect(completed.sort()).toEqual([1, 2])
    expect(await raw.zcard(keys.active)).toBe(0)
    expect(await raw.hget(keys.meta, "completed")).toBe("2")
  })

  it("N8: close: a handler that needs 1 s after its signal keeps its job; no one else starts it until the handler ended; close resolves after that", async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = useQueue<{ n: number }>(q)
    const log: string[] = []
    let running = 0
    let most = 0
    const first = deferred()
    const handler = (who: string) => async (job: { token: number; signal: AbortSignal }) => {
      running++
      most = Math.max(most, running)
      log.push(`${who} start ${job.token}`)
      if (who === "w1") {
        first.resolve()
        // winds down for a second after its signal (an HTTP call in flight, say)
        await new Promise<void>((resolve) =>
          job.signal.addEventListener("abort", () => setTimeout(resolve, 1_000), { once: true }),
        )
      }
      log.push(`${who} end ${job.token}`)
      running--
    }
    const w1 = useWorker(q, handler("w1"), { shutdownGraceMs: 300, sweep: false })
    const id = await queue.add({ n: 1 })
    await first.promise
    const w2 = useWorker(q, handler("w2"), { sweep: false })
    const w2Done = deferred()
    w2.on("completed", () => w2Done.resolve())
    await w2.ready

    log.push("w1 close called")
    await w1.close()
    log.push("w1 close resolved")
    await w2Done.promise

    expect(most).toBe(1)
    const t1 = Number(log[0]!.split(" ")[2])
    const at = (line: string) => log.indexOf(line)
    expect(log.slice(0, 3)).toEqual([`w1 start ${t1}`, "w1 close called", `w1 end ${t1}`])
    expect(at(`w1 end ${t1}`)).toBeLessThan(at("w1 close resolved"))
    // released only once the handler ended: the next holder starts after that
    // the next lease's token is greater (tokens only go up; floored by the Redis clock)
    const w2Start = log.find((l) => l.startsWith("w2 start ")) ?? ""
    const t2 = Number(w2Start.split(" ")[2])
    expect(t2).toBeGreaterThan(t1)
    expect(at(`w1 end ${t1}`)).toBeLessThan(at(`w2 start ${t2}`))
    expect(at(`w2 end ${t2}`)).toBeGreaterThan(at(`w2 start ${t2}`))
    const stats = await queue.stats()
    expect(stats.counters).toMatchObject({ completed: 1, released: 1, lostLeases: 0 })
    expect(await raw.hget(keys.lost, id)).toBeNull()
  })

  it("N8: a handler still running shutdownAbortGraceMs after its signal: the lease is left to expire, not released, and an error names the job", async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = useQueue<{ n: number }>(q)
    const started = deferred<number>()
    const finish = deferred()
    let ended = false
    const worker = useWorker(
      q,
      async (job) => {
        started.resolve(job.token)
        await finish.promise // ignores its signal
        ended = true
      },
      { shutdownGraceMs: 100, shutdownAbortGraceMs: 300, sweep: false },
    )
    onCleanup(async () => {
      finish.resolve()
    })
    const errors: unknown[] = []
    worker.on("error", (e) => errors.push(e))
    const id = await queue.add({ n: 1 })
    const token = await started.promise
    await worker.close()
    expect(ended).toBe(false)
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ _tag: "ShutdownOverrun", jobId: id, token })
    expect((errors[0] as Error).message).toContain(id)
    // still leased to the handler that may be running: nobody else can start it before the lease ends
    expect(await leaseToken(raw, keys, id)).toBe(String(token))
    expect(await raw.hget(keys.meta, "released")).toBeNull()
    finish.resolve()
  })

  it("close() on a worker whose Redis became unreachable ends (bound: shutdownGraceMs + 5 s)", async () => {
    const q = name()
    const proxy = await proxyToSuiteRedis()
    const queue = useQueue<{ n: number }>(q)
    const started = deferred()
    const aborted = deferred()
    const worker = useWorker(
      q,
      async (job) => {
        started.resolve()
        await new Promise<void>((resolve) => job.signal.addEventListener("abort", () => resolve(), { once: true }))
        aborted.resolve()
      },
      { connection: proxy.url, shutdownGraceMs: 200 },
    )
    const events: string[] = []
    worker.on("closed", () => events.push("closed"))
    await queue.add({ n: 1 })
    await started.promise
    proxy.cut()
    const closing = worker.close().then(() => "closed" as const)
    // a hang detector only, far above the documented bound (200 ms + 5 s): before the fix, 72 s
    let timer: NodeJS.Timeout | undefined
    const hang = new Promise<"hung">((resolve) => {
      timer = setTimeout(() => resolve("hung"), 20_000)
    })
    const outcome = await Promise.race([closing, hang])
    clearTimeout(timer)
    expect(outcome).toBe("closed")
    await aborted.promise
    expect(events).toEqual(["closed"])
    expect(worker.state).toBe("closed")
  })

  it("close() on a worker that never reached Redis ends (bound: shutdownGraceMs + 5 s)", async () => {
    const q = name()
    const proxy = await proxyToSuiteRedis()
    proxy.cut()
    const worker = useWorker(q, async () => undefined, { connection: proxy.url, shutdownGraceMs: 200 })
    const events: string[] = []
    worker.on("closed", () => events.push("closed"))
    worker.on("error", () => {})
    const ready = worker.ready.then(
      () => "ready",
      () => "failed",
    )
    const closing = worker.close().then(() => "closed" as const)
    // a hang detector only, far above the documented bound (200 ms + 5 s): before the fix, about 72 s
    let timer: NodeJS.Timeout | undefined
    const hang = new Promise<"hung">((resolve) => {
      timer = setTimeout(() => resolve("hung"), 20_000)
    })
    const outcome = await Promise.race([closing, hang])
    clearTimeout(timer)
    expect(outcome).toBe("closed")
    expect(await ready).toBe("failed")
    await expect(worker.ready).rejects.toMatchObject({ _tag: "QueueClosed" })
    expect(events).toEqual(["closed"])
    expect(worker.state).toBe("closed")
  })

  it("close() while a finished job's complete cannot reach Redis ends, and says the ack got no answer", async () => {
    const q = name()
    const proxy = await proxyToSuiteRedis()
    const queue = useQueue<{ n: number }>(q)
    const started = deferred()
    const finish = deferred()
    const ended = deferred()
    const worker = useWorker(
      q,
      async () => {
        started.resolve()
        await finish.promise
        ended.resolve()
      },
      // two slots: the finished job's complete goes on its own (not riding on a reserve)
      { connection: proxy.url, concurrency: 2, shutdownGraceMs: 200, leaseMs: 30_000 },
    )
    onCleanup(async () => {
      finish.resolve()
    })
    const errors: unknown[] = []
    worker.on("error", (e) => errors.push(e))
    const id = await queue.add({ n: 1 })
    await started.promise
    proxy.cut()
    finish.resolve()
    await ended.promise
    const closing = worker.close().then(() => "closed" as const)
    // a hang detector only, far above the documented bound (200 ms + 5 s)
    let timer: NodeJS.Timeout | undefined
    const hang = new Promise<"hung">((resolve) => {
      timer = setTimeout(() => resolve("hung"), 20_000)
    })
    const outcome = await Promise.race([closing, hang])
    clearTimeout(timer)
    expect(outcome).toBe("closed")
    expect(errors).toContainEqual(expect.objectContaining({ _tag: "AckUndelivered", jobId: id, reason: "stopped" }))
  })
})
