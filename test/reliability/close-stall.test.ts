/**
 * F3: close while Redis gets nothing — a stalled path (here a proxy that holds the
 * requests back and delivers them late, after the worker closed). The reserve call out at
 * close still runs in the end; close sends its give-back behind it on the same connection,
 * so the lease that late run makes goes straight back to wait and nothing stays leased to
 * the closed worker. close itself ends in bounded time although Redis answers nothing.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { deferred } from "../support/cleanup.ts"
import { leaseCount } from "../support/lease.ts"
import { proxyToSuiteRedis } from "../support/proxy.ts"
import { queueNamer, rawClient } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("close-stall")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

describe("F3: close while nothing reaches Redis, which runs it all after the worker closed", () => {
  it("the reserve out at close (it carries a complete) leases its job to nobody: the job is back in wait, the complete landed", async () => {
    const q = name()
    const keys = queueKeys(q)
    const proxy = await proxyToSuiteRedis()
    const queue = useQueue<{ readonly n: number }>(q)
    const started = deferred()
    const gate = deferred()
    const first = await queue.add({ n: 1 })
    const worker = useWorker<{ readonly n: number }>(
      q,
      async (job) => {
        if (job.id !== first) return
        started.resolve()
        await gate.promise
      },
      { connection: proxy.url, concurrency: 1, prefetch: 0, leaseMs: 60_000, sweep: false, shutdownGraceMs: 200 },
    )
    await started.promise
    const second = await queue.add({ n: 2 })
    proxy.hold()
    gate.resolve()
    // the finished job's complete rides on the reserve call for the freed slot
    await until("the reserve call for the freed slot was sent", () => proxy.heldText().includes(Scripts.reserve.sha))
    await worker.close()
    expect(worker.state).toBe("closed")
    // Redis now gets every request the worker sent, in order, then the ends of its connections
    proxy.flush()
    // Redis ends a connection once it has run what came before the end
    await until("Redis ran the closed worker's requests and ended its connections", () => proxy.connections === 0)
    expect(await raw.zrange(keys.active, "0", "-1")).toEqual([])
    expect(await raw.lrange(keys.wait, 0, -1)).toEqual([second])
    const stats = await queue.stats()
    expect(stats.counters).toMatchObject({ added: 2, completed: 1, released: 1, lostLeases: 0 })
    expect(await leaseCount(raw, keys)).toBe(0)
  })
})
