/**
 * Workers through the Promise face, against real Redis: heartbeats, crashes,
 * lease loss, graceful shutdown, retries, idle cost.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import type { Job } from "../../src/index.ts"
import { connect } from "../../src/redis/Client.ts"
import { startRedisServer } from "../../src/testing/RedisServer.ts"
import { startWorkerChild } from "../support/child.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { expireLease } from "../support/lease.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("worker")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

/** Resolves when `n` events have been seen. */
const counter = (n: number) => {
  let seen = 0
  let resolve!: () => void
  const done = new Promise<void>((r) => {
    resolve = r
  })
  return {
    done,
    hit: () => {
      if (++seen === n) resolve()
    },
    get seen() {
      return seen
    },
  }
}
describe("worker", () => {
  it("processes jobs and completes each exactly once", async () => {
    const q = name()
    const queue = useQueue<{ n: number }>(q)
    await queue.addBulk(Array.from({ length: 200 }, (_, n) => ({ payload: { n } })))
    const seen = new Map<number, number>()
    const all = counter(200)
    const worker = useWorker<{ n: number }>(
      q,
      async (job) => {
        seen.set(job.payload.n, (seen.get(job.payload.n) ?? 0) + 1)
        return job.payload.n * 2
      },
      { concurrency: 16 },
    )
    const results: number[] = []
    worker.on("completed", (_job, result) => {
      results.push(result as number)
      all.hit()
    })
    await all.done
    await worker.close()
    expect(seen.size).toBe(200)
    expect([...seen.values()].every((c) => c === 1)).toBe(true)
    expect(results.reduce((a, b) => a + b, 0)).toBe(2 * ((199 * 200) / 2))
    const stats = await queue.stats()
    expect(stats).toMatchObject({ waiting: 0, active: 0, dead: 0 })
    expect(stats.counters.completed).toBe(200)
    // each completed job retained once (default retention: the newest 1,000), with its result
    const k = queueKeys(q)
    expect([await raw.zcard(k.done), await raw.hlen(k.data), await raw.hlen(k.result)]).toEqual([200, 200, 200])
  })

  it("a handler that runs 3x leaseMs completes exactly once: heartbeats keep its lease", async () => {
    const q = name()
    const queue = useQueue(q)
    await queue.add({ slow: true })
    const done = deferred<Job<unknown>>()
    let runs = 0
    // 3 leases of 1.5 s: the server's lease (1.5 s + the 1 s grace) ends well before the
    // handler does, so only heartbeats keep it; the worker's own sweep runs every 0.75 s
    const LEASE_MS = 1500
    const worker = useWorker(
      q,
      async () => {
        runs++
        await new Promise((r) => setTimeout(r, 3 * LEASE_MS))
      },
      // not shorter: a worker fences itself when no heartbeat reply came back within
      // fenceAfter (here 1.25 s; 0.5 s for a 600 ms lease, which a process stalled at a load
      // of 30 missed). Fencing then is right: a lease must outlast the
      // machine's stalls, and this test is about heartbeats, not about a stalled process
      { leaseMs: LEASE_MS },
    )
    worker.on("completed", (job) => done.resolve(job))
    const job = await done.promise
    await worker.close()
    expect(runs).toBe(1)
    expect(job.attempt).toBe(1)
    const stats = await queue.stats()
    expect(stats.counters).toMatchObject({ completed: 1, lostLeases: 0 })
  })

  it("a worker killed with SIGKILL leaves its jobs leased; after the lease they complete elsewhere with attempt 2", async () => {
    const q = name()
    const queue = useQueue(q)
    const ids = await queue.addBulk([{ payload: 1 }, { payload: 2 }, { payload: 3 }])
    const child = startWorkerChild(redisUrl(), q, "hang", { leaseMs: 300, concurrency: 3, sweep: false })
    for (const id of ids) await child.waitFor((l) => l.startsWith(`started ${id} `))
    await child.stop()
    expect((await queue.stats()).active).toBe(3)
    const all = counter(3)
    const attempts: number[] = []
    // the rescuer's own lease is the default: only the killed worker's must run out
    const worker = useWorker(q, async (job) => void attempts.push(job.attempt), { sweep: { intervalMs: 50 } })
    worker.on("completed", () => all.hit())
    await all.done
    await worker.close()
    expect(attempts).toEqual([2, 2, 2])
    const stats = await queue.stats()
    expect(stats.counters).toMatchObject({ completed: 3, lostLeases: 3 })
    expect(await queue.verify()).toMatchObject({ violations: 0 })
  })

  it("when the lease is lost mid-handler, its signal aborts, its late complete is refused, and the job completes once by the new holder", async () => {
    const q = name()
    const queue = useQueue(q)
    const [id] = await queue.addBulk([{ payload: "x" }])
    const started = deferred<{ token: number; signal: AbortSignal }>()
    const aborted = deferred<unknown>()
    const first = useWorker(
      q,
      async (job) => {
        started.resolve({ token: job.token, signal: job.signal })
        job.signal.addEventListener("abort", () => aborted.resolve(job.signal.reason))
        await new Promise((r) => job.signal.addEventListener("abort", r))
      },
      // the test ends the lease itself: a 600 ms one was self-fenced by a worker stalled on a
      // loaded machine ("self-fenced", not "lease-lost"); heartbeats often, to learn it soon
      { leaseMs: 60_000, heartbeatMs: 100, sweep: false },
    )
    const lost = deferred<string>()
    first.on("lease-lost", (_job, reason) => lost.resolve(reason))
    let firstCompleted = 0
    first.on("completed", () => firstCompleted++)
    const holder = await started.promise
    // it leases nothing more (its handler goes on, heartbeated): once its heartbeat learns the
    // lease is lost its slot is free, and it must not take the job back before the other worker
    await first.pause()
    // expire the lease on the server (so no heartbeat can revive it) and sweep it: the job goes back to wait
    await expireLease(raw, queueKeys(q), id!)
    expect((await queue.sweep()).reclaimed).toBe(1)
    const second = deferred<Job<unknown>>()
    const other = useWorker(q, async () => "ok", { sweep: false })
    other.on("completed", (job) => second.resolve(job))
    const job2 = await second.promise
    expect(job2.attempt).toBe(2)
    expect(job2.token).toBeGreaterThan(holder.token)
    // the first holder's next heartbeat learns the lease is gone: its signal aborts
    expect(await lost.promise).toBe("lease-lost")
    const reason = await aborted.promise
    expect((reason as Error).name).toBe("LeaseLost")
    expect(holder.signal.aborted).toBe(true)
    // a late complete under the old token is refused
    const client = connect(redisUrl())
    const refused = await import("effect").then(({ Effect }) =>
      Effect.runPromise(makeCommands(client, queueKeys(q)).complete([{ id: id!, token: holder.token }])),
    )
    await client.close()
    expect(refused).toEqual([false])
    await Promise.all([first.close(), other.close()])
    expect(firstCompleted).toBe(0)
    expect((await queue.stats()).counters.completed).toBe(1)
  })

  it("graceful close releases unfinished jobs: another worker starts them at once with attempts unchanged", async () => {
    const q = name()
    const queue = useQueue(q)
    await queue.addBulk([{ payload: 1 }, { payload: 2 }])
    const running = counter(2)
    const aborted: boolean[] = []
    const first = useWorker(
      q,
      async (job) => {
        running.hit()
        await new Promise((r) => job.signal.addEventListener("abort", r))
        aborted.push(job.signal.aborted)
      },
      { concurrency: 2, leaseMs: 60_000, shutdownGraceMs: 50 },
    )
    await running.done
    await first.close()
    expect(first.state).toBe("closed")
    expect(aborted).toEqual([true, true])
    const stats = await queue.stats()
    expect(stats).toMatchObject({ waiting: 2, active: 0 })
    expect(stats.counters).toMatchObject({ released: 2, lostLeases: 0 })
    const all = counter(2)
    const attempts: number[] = []
    // a 60 s lease: if the jobs had not been released this would time out
    const second = useWorker(q, async (job) => void attempts.push(job.attempt), {
      concurrency: 2,
    })
    second.on("completed", () => all.hit())
    await all.done
    await second.close()
    expect(attempts).toEqual([1, 1])
  })

  it("graceful close lets a handler that finishes within the grace period complete", async () => {
    const q = name()
    const queue = useQueue(q)
    await queue.add("x")
    const started = deferred()
    const finish = deferred()
    const worker = useWorker(
      q,
      async () => {
        started.resolve()
        await finish.promise
        return "finished"
      },
      { shutdownGraceMs: 30_000 },
    )
    const completed: unknown[] = []
    worker.on("completed", (_j, r) => completed.push(r))
    await started.promise
    const closing = worker.close()
    expect(worker.state).toBe("draining")
    finish.resolve()
    await closing
    expect(completed).toEqual(["finished"])
    expect((await queue.stats()).counters).toMatchObject({ completed: 1, released: 0 })
  })

  it("a failing handler is retried with backoff, then goes to dead with its error", async () => {
    const q = name()
    const queue = useQueue(q)
    const id = await queue.add({ bad: true }, { maxAttempts: 3 })
    const dead = deferred<string>()
    const failures: Array<[number, boolean]> = []
    const worker = useWorker(
      q,
      async (job) => {
        throw new Error(`boom ${job.attempt}`)
      },
      { backoff: { type: "fixed", delayMs: 20 }, sweep: { intervalMs: 20 } },
    )
    worker.on("failed", (job, _e, willRetry) => failures.push([job.attempt, willRetry]))
    worker.on("dead", (_job, reason) => dead.resolve(reason))
    expect(await dead.promise).toBe("failed")
    await worker.close()
    expect(failures).toEqual([
      [1, true],
      [2, true],
      [3, false],
    ])
    const { jobs } = await queue.deadJobs()
    expect(jobs).toHaveLength(1)
    expect(jobs[0]).toMatchObject({ id, failures: 3, lostLeases: 0 })
    expect((jobs[0]!.error as { message: string }).message).toBe("boom 3")
    expect(await queue.retryDead([id])).toBe(1)
    expect((await queue.stats()).waiting).toBe(1)
  })

  it("a payload that is not valid JSON goes to dead as invalid-payload without reaching the handler", async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = useQueue(q)
    const id = await queue.add("placeholder")
    await raw.hset(keys.data, id, "{not json")
    const dead = deferred<string>()
    let called = false
    const worker = useWorker(
      q,
      async () => {
        called = true
      },
      { connection: redisUrl() },
    )
    worker.on("dead", (_j, reason) => dead.resolve(reason))
    expect(await dead.promise).toBe("invalid-payload")
    await worker.close()
    expect(called).toBe(false)
    expect(await raw.hget(keys.fails, id)).toBeNull()
    const { jobs } = await queue.deadJobs()
    expect(jobs[0]!.error).toMatchObject({ reason: "invalid-payload" })
  })

  it("delayed jobs run once due", async () => {
    const q = name()
    const queue = useQueue(q)
    const added = Date.now()
    await queue.add("later", { delayMs: 150 })
    const done = deferred<number>()
    const worker = useWorker(q, async () => {})
    worker.on("completed", () => done.resolve(Date.now()))
    expect(await done.promise).toBeGreaterThanOrEqual(added + 150 - 5)
  })
})

describe("idle cost", () => {
  it("an idle worker for 2 s sends a bounded number of Redis commands (INFO commandstats)", async () => {
    const server = await startRedisServer()
    onCleanup(() => server.stop())
    const admin = rawClient(server.url)
    onCleanup(() => admin.disconnect())
    // the reserve loop and the heartbeat alone (the sweep loop's cost: the next test)
    const worker = useWorker("idle", async () => {}, { connection: server.url, sweep: false })
    await worker.ready
    await admin.config("RESETSTAT")
    await new Promise((r) => setTimeout(r, 2000))
    const info = await admin.info("commandstats")
    await worker.close()
    const calls = [...info.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)].map(([, cmd, n]) => [cmd!, Number(n)] as const)
    const byCommand = Object.fromEntries(calls)
    const total = calls.reduce((a, [cmd, n]) => (cmd.startsWith("config") || cmd === "info" ? a : a + n), 0)
    const scripts = (byCommand.evalsha ?? 0) + (byCommand.eval ?? 0)
    // at most the first reserve (its EVALSHA may be answered NOSCRIPT on a new server, then EVAL)
    // and one blocking wait per 5 s block timeout; heartbeats with nothing to extend send nothing
    expect(scripts, JSON.stringify(byCommand)).toBeLessThanOrEqual(2)
    expect(byCommand.bzpopmin ?? 0, JSON.stringify(byCommand)).toBeLessThanOrEqual(1)
    // every command counted, including those run inside the scripts
    expect(total, JSON.stringify(byCommand)).toBeLessThanOrEqual(16)
  })

  it("an idle worker's sweep loop for 2 s: its first pass, then one schedule look a second", async () => {
    const server = await startRedisServer()
    onCleanup(() => server.stop())
    const admin = rawClient(server.url)
    onCleanup(() => admin.disconnect())
    const worker = useWorker("idle-sweep", async () => {}, { connection: server.url, blockTimeoutMs: 60_000 })
    await worker.ready
    await admin.config("RESETSTAT")
    const started = Date.now()
    await new Promise((r) => setTimeout(r, 2000))
    const info = await admin.info("commandstats")
    const elapsed = Date.now() - started
    await worker.close()
    const byCommand = Object.fromEntries(
      [...info.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)].map(([, cmd, n]) => [cmd!, Number(n)] as const),
    )
    const scripts = (byCommand.evalsha ?? 0) + (byCommand.eval ?? 0)
    // a new server: a script's first EVALSHA is answered NOSCRIPT, then sent as EVAL. The first
    // reserve (2), the first pass (sweep and schedules, 2 each), one look a second (at most one
    // per started second of the window, and one for the start-up)
    expect(scripts, JSON.stringify(byCommand)).toBeLessThanOrEqual(2 + 4 + Math.ceil(elapsed / 1000) + 1)
    expect(byCommand.evalsha ?? 0, JSON.stringify(byCommand)).toBeGreaterThanOrEqual(1)
  })
})
