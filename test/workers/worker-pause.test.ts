/**
 * Pausing one worker (BullMQ's local `worker.pause()`), against real Redis: a paused
 * worker leases no new job and gives back those it holds unstarted (attempts unchanged);
 * its running job goes on with its lease heartbeated; `pause({ wait: true })` ends once
 * running handlers have; `resume()` leases again; the state machine guards the moves.
 * Both faces.
 */
import { expect, it } from "@effect/vitest"
import { Context, Deferred, Effect } from "effect"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe } from "vitest"
import { LeaseQueue, LeaseWorker } from "../../src/effect.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { InvalidOptions, WorkerNotRunning } from "../../src/index.ts"
import { deferred } from "../support/cleanup.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("worker-pause")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

// no test here is about expiry: a lease a loaded machine cannot lose, heartbeats often enough to watch
const lease = { leaseMs: 60_000, heartbeatMs: 100 } as const

/** Until the lease of `id` was extended twice more (its deadline in `active` moved on twice). */
const twoHeartbeats = async (q: string, id: string) => {
  const key = queueKeys(q).active
  const first = Number(await raw.zscore(key, id))
  let last = first
  let moves = 0
  await until("two heartbeats", async () => {
    const now = Number(await raw.zscore(key, id))
    if (now > last) {
      moves++
      last = now
    }
    return moves >= 2
  })
  return { first, last }
}

describe("worker.pause() and resume()", () => {
  it("a paused worker leases no new job while its running one goes on, heartbeated; resume picks up again", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const started: string[] = []
    const gate = deferred<void>()
    const worker = useWorker<string>(
      q,
      async (job) => {
        started.push(job.payload)
        if (job.payload === "first") await gate.promise
      },
      { ...lease, concurrency: 2, prefetch: 0 },
    )
    await worker.ready
    const first = await queue.add("first")
    await until("first started", () => started.length === 1)
    await worker.pause()
    expect(worker.state).toBe("paused")
    const second = await queue.add("second")
    // the running job keeps its lease while paused: its heartbeats move its deadline on
    const { first: before, last: after } = await twoHeartbeats(q, first)
    expect(after).toBeGreaterThan(before)
    expect(started).toEqual(["first"])
    expect((await queue.getJob(second))?.state).toBe("waiting")
    // it completes while paused
    gate.resolve()
    await until("first completed", async () => (await queue.getJob(first))?.state !== "active")
    expect((await queue.getJob(second))?.state).toBe("waiting")
    await until("the registry says paused", async () => (await queue.workers())[0]?.state === "paused")
    await worker.resume()
    expect(worker.state).toBe("running")
    await until("second started", () => started.length === 2)
    expect(started).toEqual(["first", "second"])
  })

  it("gives back at once the jobs it holds unstarted (prefetched), attempts unchanged", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const gate = deferred<void>()
    const started: number[] = []
    const worker = useWorker<number>(
      q,
      async (job) => {
        started.push(job.payload)
        await gate.promise
      },
      { ...lease, concurrency: 1, prefetch: 2 },
    )
    await worker.ready
    await queue.addBulk([1, 2, 3].map((payload) => ({ payload })))
    await until("one running, two held", async () => (await queue.stats()).active === 3)
    // leased in Redis is not yet started: a reply that lands once the worker is paused gives
    // back every job of it, so the pause waits until the first job runs
    await until("the first started", () => started.length === 1)
    expect(started).toEqual([1])
    await worker.pause()
    await until("the held jobs back in wait", async () => (await queue.stats()).waiting === 2)
    const stats = await queue.stats()
    expect({ waiting: stats.waiting, active: stats.active }).toEqual({ waiting: 2, active: 1 })
    const rows = await queue.getJobs("waiting")
    const attempts = await Promise.all(rows.jobs.map(async (j) => (await queue.getJob(j.id))?.attempt))
    expect(attempts).toEqual([1, 1])
    gate.resolve()
    await worker.resume()
    await until("all three ran", () => started.length === 3)
  })

  it("pause({ wait: true }) resolves only once the running handler has ended", async () => {
    const q = name()
    const queue = useQueue(q)
    const started = deferred<void>()
    const gate = deferred<void>()
    let ended = false
    const worker = useWorker(
      q,
      async () => {
        started.resolve()
        await gate.promise
        ended = true
      },
      lease,
    )
    await worker.ready
    const id = await queue.add("x")
    await started.promise
    let paused = false
    const pausing = worker.pause({ wait: true }).then(() => {
      paused = true
    })
    await twoHeartbeats(q, id)
    expect(paused).toBe(false)
    gate.resolve()
    await pausing
    expect(ended).toBe(true)
    expect(worker.state).toBe("paused")
  })

  it("guards the moves: bad options refused; close from paused; resume of a closed worker refused, pause a no-op", async () => {
    const q = name()
    const worker = useWorker(q, async () => {}, lease)
    await worker.ready
    await expect(worker.pause({ wait: 1 } as never)).rejects.toMatchObject({ field: "options.wait", value: 1 })
    await expect(worker.pause("now" as never)).rejects.toBeInstanceOf(InvalidOptions)
    await expect(worker.pause({ wiat: true } as never)).rejects.toMatchObject({ field: "options.wiat" })
    expect(worker.state).toBe("running")
    await worker.pause()
    await worker.pause()
    expect(worker.state).toBe("paused")
    await worker.close()
    expect(worker.state).toBe("closed")
    await worker.pause()
    expect(worker.state).toBe("closed")
    const refused = await worker.resume().catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(WorkerNotRunning)
    expect(refused).toMatchObject({ state: "closed" })
    expect(String((refused as Error).message)).toContain("only a paused or running worker can resume")
  })
})

class Jobs extends Context.Service<Jobs, LeaseQueue.Service<string>>()("test/WorkerPauseJobs") {}

describe("the Effect worker's pause and resume", () => {
  const q = name()
  it.live("pause stops leasing, resume picks up again", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      const ran = yield* Deferred.make<string>()
      const worker = yield* LeaseWorker.make(Jobs, (job) => Deferred.succeed(ran, job.payload), lease)
      yield* worker.pause()
      expect(yield* worker.state).toBe("paused")
      const id = yield* jobs.add("later")
      const bad = yield* Effect.flip(worker.pause({ wait: "yes" } as never))
      expect(bad).toBeInstanceOf(InvalidOptions)
      expect((yield* jobs.getJob(id))?.state).toBe("waiting")
      yield* worker.resume
      expect(yield* Deferred.await(ran).pipe(Effect.timeout("10 seconds"))).toBe("later")
    }).pipe(Effect.provide(LeaseQueue.layer(Jobs, { name: q, connection: redisUrl() }))),
  )
})
