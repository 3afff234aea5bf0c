/**
 * Lost replies, end to end. A client reaches Redis through a TCP proxy that forwards
 * requests but drops the replies; then the connection is cut and healed, so ioredis
 * reconnects and re-sends every call still waiting for its reply. The calls had already
 * run on Redis: a re-sent add must not store its jobs twice, and a re-sent reserve must
 * not lease jobs to nobody or report a completed job's lease as lost.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { proxyToSuiteRedis } from "../support/proxy.ts"
import { queueNamer, rawClient } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("rel-exactly-once")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

/** Run every job of `q` with a worker on a direct connection until `n` have settled; the runs per id. */
const drain = async (q: string, n: number) => {
  const runs = new Map<string, number[]>()
  let settled = 0
  const all = deferred()
  const worker = useWorker(
    q,
    async (job) => {
      runs.set(job.id, [...(runs.get(job.id) ?? []), job.attempt])
    },
    { concurrency: 10 },
  )
  const hit = () => {
    if (++settled === n) all.resolve()
  }
  worker.on("completed", hit)
  worker.on("dead", hit)
  await all.promise
  await worker.close()
  return runs
}

describe("a lost reply, then a reconnect that re-sends the call", () => {
  it("K1: add and addBulk are stored once: one job each, one run at attempt 1, verify clean, counters right", async () => {
    const q = name("add")
    const keys = queueKeys(q)
    const proxy = await proxyToSuiteRedis()
    const producer = useQueue(q, { connection: proxy.url })
    await producer.add("warm-up")
    const resent = async (call: () => Promise<string | string[]>, waiting: number) => {
      proxy.dropReplies()
      const pending = call()
      await until("the call ran on Redis", async () => (await raw.llen(keys.wait)) >= waiting)
      // the reply is lost and the connection drops; ioredis reconnects and re-sends the call
      proxy.cut()
      proxy.heal()
      return pending
    }
    const one = await resent(() => producer.add("once"), 2)
    const bulk = await resent(() => producer.addBulk([{ payload: "b1" }, { payload: "b2" }, { payload: "b3" }]), 5)
    const ids = [one, ...bulk] as string[]
    expect(new Set(ids).size).toBe(4)
    expect(await raw.llen(keys.wait)).toBe(5)
    expect(Number(await raw.hget(keys.meta, "added"))).toBe(5)

    const runs = await drain(q, 5)
    for (const id of ids) expect(runs.get(id)).toEqual([1])
    expect(runs.size).toBe(5)
    const stats = await producer.stats()
    expect(stats.counters).toMatchObject({ added: 5, completed: 5, dead: 0, lostLeases: 0 })
    expect(stats).toMatchObject({ waiting: 0, active: 0, delayed: 0, dead: 0 })
    expect(await producer.verify()).toMatchObject({ violations: 0 })
  })

  it("N3: a reserve carrying a finished job is re-sent: every job runs once and completes, none is dead, no lease-lost", async () => {
    const q = name("reserve")
    const keys = queueKeys(q)
    const proxy = await proxyToSuiteRedis()
    const queue = useQueue(q)
    const gate = deferred()
    const firstStarted = deferred()
    const ran: string[] = []
    const completed: string[] = []
    const lost: string[] = []
    const dead: string[] = []
    const worker = useWorker(
      q,
      async (job) => {
        ran.push(job.id)
        if (ran.length === 1) {
          firstStarted.resolve()
          await gate.promise
        }
        return "ok"
      },
      // concurrency 1: the first job's complete rides on the reserve its freed slot triggers;
      // no prefetch, so that call leases exactly the next job
      { connection: proxy.url, concurrency: 1, prefetch: 0, leaseMs: 5_000, sweep: false },
    )
    // before the worker closes: let its handler end, and let its calls through again
    onCleanup(() => {
      gate.resolve()
      proxy.heal()
    })
    worker.on("completed", (job) => completed.push(job.id))
    worker.on("lease-lost", (job) => lost.push(job.id))
    worker.on("dead", (job) => dead.push(job.id))
    const ids = await queue.addBulk([1, 2, 3].map((n) => ({ payload: n, options: { maxAttempts: 1 } })))
    await firstStarted.promise
    proxy.dropReplies()
    gate.resolve()
    // the reserve ran on Redis: it completed the first job and leased the second
    await until("the reserve ran on Redis", async () => {
      const active = await raw.zrange(keys.active, "0", "-1")
      return Number(await raw.hget(keys.meta, "completed")) === 1 && active.length === 1 && active[0] === ids[1]
    })
    proxy.cut()
    proxy.heal()
    // a sweep on its own connection reclaims a lease that nobody holds (maxAttempts 1: dead)
    await until(
      "every job completed or dead",
      async () => {
        await queue.sweep()
        const stats = await queue.stats()
        const settled = stats.counters.completed + stats.counters.dead === 3
        // and the worker has said how each job it ran ended
        return settled && completed.length + lost.length === ran.length
      },
      { everyMs: 100 },
    )
    expect([...ran].sort()).toEqual([...ids].sort())
    expect([...completed].sort()).toEqual([...ids].sort())
    expect(lost).toEqual([])
    expect(dead).toEqual([])
    const stats = await queue.stats()
    expect(stats.counters).toMatchObject({ added: 3, completed: 3, dead: 0, lostLeases: 0 })
    expect(await queue.verify()).toMatchObject({ violations: 0 })
  })

  it("F1: two reserve calls out, both replies lost, both re-sent: every job runs once and completes, none dead, no lease-lost, none refused", async () => {
    const q = name("two-out")
    const keys = queueKeys(q)
    const proxy = await proxyToSuiteRedis()
    const queue = useQueue(q)
    const gates = [deferred(), deferred()]
    const bothStarted = deferred()
    const ran: string[] = []
    const completed: string[] = []
    const lost: string[] = []
    const dead: string[] = []
    const worker = useWorker(
      q,
      async (job) => {
        ran.push(job.id)
        const gate = gates[ran.length - 1]
        if (ran.length === 2) bothStarted.resolve()
        if (gate !== undefined) await gate.promise
        return "ok"
      },
      // concurrency 2: each freed slot sends its own call (with one out, half the slots free
      // is enough), each carrying its finished job; no prefetch, so each leases one job
      { connection: proxy.url, concurrency: 2, prefetch: 0, leaseMs: 5_000, sweep: false },
    )
    onCleanup(() => {
      for (const g of gates) g.resolve()
      proxy.flush()
      proxy.heal()
    })
    worker.on("completed", (job) => completed.push(job.id))
    worker.on("lease-lost", (job) => lost.push(job.id))
    worker.on("dead", (job) => dead.push(job.id))
    const ids = await queue.addBulk([1, 2, 3, 4, 5, 6].map((n) => ({ payload: n, options: { maxAttempts: 1 } })))
    await bothStarted.promise
    // both calls are sent before Redis gets either, so both are out at once
    const sent = () => proxy.heldText().split(Scripts.reserve.sha).length - 1
    proxy.hold()
    gates[0]!.resolve()
    await until("the first reserve call was sent", () => sent() === 1)
    gates[1]!.resolve()
    await until("the second reserve call was sent", () => sent() === 2)
    // Redis runs both; both replies are lost, then the connection drops: ioredis re-sends both
    proxy.dropReplies()
    proxy.flush()
    await until("both calls ran on Redis", async () => {
      const active = await raw.zcard(keys.active)
      return Number(await raw.hget(keys.meta, "completed")) === 2 && active === 2
    })
    proxy.cut()
    proxy.heal()
    // a sweep on its own connection reclaims a lease that nobody holds (maxAttempts 1: dead)
    await until(
      "every job completed or dead",
      async () => {
        await queue.sweep()
        const stats = await queue.stats()
        return stats.counters.completed + stats.counters.dead === 6 && completed.length + lost.length === ran.length
      },
      { everyMs: 100 },
    )
    expect([...ran].sort()).toEqual([...ids].sort())
    expect([...completed].sort()).toEqual([...ids].sort())
    expect(lost).toEqual([])
    expect(dead).toEqual([])
    const stats = await queue.stats()
    expect(stats.counters).toMatchObject({ added: 6, completed: 6, dead: 0, lostLeases: 0, refused: 0 })
    expect(await queue.verify()).toMatchObject({ violations: 0 })
  })
})
