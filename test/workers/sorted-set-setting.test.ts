/**
 * docs/operations.md, "zset-max-listpack-entries for high concurrency": on a Redis started
 * with `zset-max-listpack-entries 16`, a queue's jobs in flight (`active`) are a skip list
 * once workers hold more than 16, and the queue keeps its promises: every job runs once,
 * nothing is left in flight, verify is clean. (The suite's own servers keep the default 128,
 * where the same set is a listpack.)
 */
import { describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { onCleanup } from "../support/cleanup.ts"
import { ownRedis } from "../support/own-redis.ts"
import { queueNamer, rawClient } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("w-zset16")
const own = ownRedis("zset16", ["--zset-max-listpack-entries", "16"])
const JOBS = 200
const CONCURRENCY = 32

describe("zset-max-listpack-entries 16", () => {
  it("makes active a skip list at 32 in flight, and every job runs once", async () => {
    const raw = rawClient(own.server.url)
    onCleanup(() => raw.disconnect())
    const q = name()
    const keys = queueKeys(q)
    const queue = useQueue<number>(q, { connection: own.server.url })
    await queue.addBulk(Array.from({ length: JOBS }, (_, n) => ({ payload: n })))
    const runs = new Map<number, number>()
    let open: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    const worker = useWorker<number>(
      q,
      async (job) => {
        runs.set(job.payload, (runs.get(job.payload) ?? 0) + 1)
        await gate
      },
      { connection: own.server.url, concurrency: CONCURRENCY },
    )
    await until("the worker holds its concurrency", async () => worker.running === CONCURRENCY)
    expect(await raw.zcard(keys.active)).toBeGreaterThanOrEqual(CONCURRENCY)
    expect(await raw.call("OBJECT", "ENCODING", keys.active)).toBe("skiplist")
    open()
    await until("every job completed", async () => (await queue.stats()).counters.completed === JOBS)
    expect([...runs.values()].filter((n) => n !== 1)).toEqual([])
    expect(runs.size).toBe(JOBS)
    expect(await raw.zcard(keys.active)).toBe(0)
    expect((await queue.verify()).violations).toBe(0)
  })
})
