/**
 * Prefetch and a worker that dies. A prefetched job is leased but not started; if its
 * worker dies, the sweep counts a lost lease against it. A job that already lost a lease
 * (maybe the one that kills workers) or is on its last attempt is "fragile": a worker
 * never holds one unstarted, nor holds jobs unstarted beside one (src/engine/worker/
 * Fragile.ts), so no job goes to dead without having run, and a poison job takes no
 * neighbour's attempts with it.
 */
import { Effect } from "effect"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { connect } from "../../src/redis/Client.ts"
import { onCleanup } from "../support/cleanup.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("rel-fragile")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

/** Lease job `id` (the next in line) to a worker that never comes back, and let a sweep reclaim it: one lost lease. */
const loseOneLease = async (q: string, id: string): Promise<void> => {
  const client = connect(redisUrl())
  onCleanup(() => client.close())
  const commands = makeCommands(client, queueKeys(q))
  const reserved = await Effect.runPromise(commands.reserve(1, 1_000, 100))
  expect(reserved.jobs.map((j) => j.id)).toEqual([id])
  await until("the lease expired and swept", async () => {
    const swept = await Effect.runPromise(commands.sweep(100))
    return swept.reclaimed === 1
  })
}

describe("prefetch beside a fragile job", () => {
  it("a job that lost a lease runs with nothing held beside it, and no other job is charged an attempt", async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = useQueue<number>(q)
    const fragile = await queue.add(0)
    await loseOneLease(q, fragile)
    const others = await queue.addBulk(Array.from({ length: 20 }, (_, n) => ({ payload: n + 1 })))

    // while each job runs: how many leases the queue holds (this worker's, running and prefetched)
    const heldAtStart = new Map<string, number>()
    const attempts = new Map<string, number>()
    const worker = useWorker<number>(
      q,
      async (job) => {
        heldAtStart.set(job.id, await raw.zcard(keys.active))
        attempts.set(job.id, job.attempt)
      },
      { concurrency: 1, prefetch: 10 },
    )
    await worker.ready
    await until("every job completed", async () => (await queue.stats()).counters.completed === 21)

    expect(heldAtStart.get(fragile)).toBe(1)
    expect(attempts.get(fragile)).toBe(2)
    // the others ran once each, charged nothing
    expect(others.map((id) => attempts.get(id))).toEqual(others.map(() => 1))
    expect((await queue.stats()).counters.lostLeases).toBe(1)
  })

  it("a job on its last attempt is never held unstarted: a queue of maxAttempts 1 runs without prefetch", async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = useQueue<number>(q)
    await queue.addBulk(Array.from({ length: 30 }, (_, n) => ({ payload: n, options: { maxAttempts: 1 } })))
    let mostHeld = 0
    const worker = useWorker<number>(
      q,
      async () => {
        mostHeld = Math.max(mostHeld, await raw.zcard(keys.active))
      },
      { concurrency: 1, prefetch: 10 },
    )
    await worker.ready
    await until("every job completed", async () => (await queue.stats()).counters.completed === 30)
    expect(mostHeld).toBe(1)
  })
})
