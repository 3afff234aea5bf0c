/**
 * Acknowledgements are delivered: a complete that meets an error reply (here BUSY, while
 * a slow script holds Redis) is sent again until Redis answers it, with the lease kept
 * alive meanwhile; and close() while a reserve carrying finished jobs is stalled neither
 * loses their completes nor orphans the jobs that reserve leases when it finally runs.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { BUSY_SCRIPT } from "../support/busy.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { leaseCount, leaseToken } from "../support/lease.ts"
import { queueNamer, rawClient } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("acks")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

describe("acknowledgements", () => {
  it("N2: a complete refused with BUSY (a 1 s slow script) is retried; the job ends completed, once", async () => {
    const q = name()
    const keys = queueKeys(q)
    const [, threshold] = (await raw.config("GET", "busy-reply-threshold")) as [string, string]
    await raw.config("SET", "busy-reply-threshold", "100")
    onCleanup(() => raw.config("SET", "busy-reply-threshold", threshold))
    const queue = useQueue(q)
    const id = await queue.add({ n: 1 }, { maxAttempts: 1 })
    const started = deferred()
    const finish = deferred()
    let runs = 0
    const worker = useWorker(
      q,
      async () => {
        runs++
        started.resolve()
        await finish.promise
        return "ok"
      },
      // sweeping on: a lost ack would show up as the job going dead (maxAttempts 1)
      { leaseMs: 4_000, leaseGraceMs: 0, sweep: { intervalMs: 100 } },
    )
    onCleanup(async () => {
      finish.resolve()
    })
    const completed: string[] = []
    const dead: string[] = []
    const errors: string[] = []
    worker.on("completed", (job) => completed.push(job.id))
    worker.on("dead", (job) => dead.push(job.id))
    worker.on("error", (e) => errors.push(e instanceof Error ? e.message : String(e)))
    await started.promise

    const busy = rawClient()
    onCleanup(() => busy.disconnect())
    const slow = busy.eval(BUSY_SCRIPT, 0, 1_000)
    const probe = rawClient()
    onCleanup(() => probe.disconnect())
    await until("Redis answering BUSY", () =>
      probe.ping().then(
        () => false,
        (e: Error) => e.message.startsWith("BUSY"),
      ),
    )
    // the handler finishes while Redis refuses every call
    finish.resolve()
    await until(
      "the job completed or dead",
      // (a read during the slow script answers BUSY too: that is not an answer yet)
      async () => completed.length + dead.length > 0 || (await raw.zscore(keys.dead, id).catch(() => null)) !== null,
    )
    await slow
    expect(dead).toEqual([])
    expect(await raw.zscore(keys.dead, id)).toBeNull()
    expect(completed).toEqual([id])
    expect(errors.some((m) => m.includes("BUSY"))).toBe(true)
    expect(runs).toBe(1)
    const stats = await queue.stats()
    expect(stats).toMatchObject({ waiting: 0, active: 0, dead: 0 })
    expect(stats.counters).toMatchObject({ completed: 1, lostLeases: 0, dead: 0 })
    expect(await leaseToken(raw, keys, id)).toBeNull()
  })

  it("N4: close() while a reserve carrying a finished job is stalled: the complete lands, its event fires, the late reserve's job is released", async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = useQueue<{ n: number }>(q)
    const first = await queue.add({ n: 1 })
    const second = await queue.add({ n: 2 })
    const started = deferred()
    const finish = deferred()
    const ran: string[] = []
    const worker = useWorker<{ n: number }>(
      q,
      async (job) => {
        ran.push(job.id)
        if (job.id === first) {
          started.resolve()
          await finish.promise
        }
        return job.payload.n
      },
      // one slot: the finished job's complete rides on the reserve call its freed slot makes
      { concurrency: 1, leaseMs: 30_000, shutdownGraceMs: 10_000, sweep: false },
    )
    const pauser = rawClient()
    onCleanup(async () => {
      await pauser.call("CLIENT", "UNPAUSE")
      pauser.disconnect()
      finish.resolve()
    })
    const events: string[] = []
    worker.on("completed", (job) => events.push(`completed ${job.id}`))
    worker.on("lease-lost", (job, reason) => events.push(`lease-lost ${job.id} ${reason}`))
    await started.promise
    await until("the worker waiting for its slot", () => worker.running === 1)

    // stall every script (reads still go through, so the test can watch)
    await pauser.call("CLIENT", "PAUSE", "3000", "WRITE")
    finish.resolve()
    await until("a script call held by the pause (the reserve carrying the complete)", async () => {
      const list = String(await raw.call("CLIENT", "LIST"))
      return list.split("\n").some((line) => / flags=b /.test(line) && / cmd=evalsha /.test(line))
    })
    events.push("close called")
    await worker.close()
    events.push("close resolved")

    expect(events).toEqual(["close called", `completed ${first}`, "close resolved"])
    expect(ran).toEqual([first])
    expect(worker.running).toBe(0)
    // the late reserve leased the second job; it was given back at once, attempts untouched
    expect(await raw.zcard(keys.active)).toBe(0)
    expect(await leaseCount(raw, keys)).toBe(0)
    const stats = await queue.stats()
    expect(stats).toMatchObject({ waiting: 1, active: 0, dead: 0 })
    expect(stats.counters).toMatchObject({ completed: 1, released: 1, lostLeases: 0 })
    expect(await raw.hget(keys.lost, second)).toBeNull()
    expect(await raw.hget(keys.fails, second)).toBeNull()
  })
})
