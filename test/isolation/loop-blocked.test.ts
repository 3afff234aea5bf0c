/**
 * A blocked event loop explains itself (issue 32): an in-process handler that keeps the
 * worker's thread busy for more than half its lease is told on `loop-blocked`, and the
 * lease it loses meanwhile carries that cause; a handler that waits (without blocking)
 * as long is not reported.
 */
import { describe, expect, it } from "vitest"
import { LoopBlocked } from "../../src/index.ts"
import { queueNamer } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("loop-blocked")

/** Keep this thread busy for `ms` (no await, no timer can run). */
const spin = (ms: number) => {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // blocks
  }
}

describe("loop-blocked", () => {
  it("a handler that blocks the loop for more than half its lease is reported, and its lost lease says why", async () => {
    const q = name("spin")
    const queue = useQueue(q)
    const blocked: LoopBlocked[] = []
    const lost: Array<{ reason: string; cause: unknown }> = []
    const worker = useWorker(
      q,
      async (job) => {
        for (let i = 0; i < 3 && !job.signal.aborted; i++) {
          spin(1000)
          await new Promise((r) => setImmediate(r))
        }
      },
      { leaseMs: 1000 },
    )
    worker.on("loop-blocked", (b) => blocked.push(b))
    worker.on("lease-lost", (_job, reason, cause) => lost.push({ reason, cause }))
    await worker.ready
    await queue.add({}, { maxAttempts: 1 })
    await until("the lease lost", () => lost.length > 0)
    const cause = lost[0]!.cause as LoopBlocked
    expect(cause).toBeInstanceOf(LoopBlocked)
    expect(cause.blockedMs).toBeGreaterThanOrEqual(500)
    expect(cause.message).toContain('use isolation: "thread"')
    await until("the loop-blocked event", () => blocked.length > 0)
    expect(blocked[0]).toMatchObject({ queue: q, leaseMs: 1000 })
  })

  it("a handler that waits as long without blocking is not reported", async () => {
    const q = name("wait")
    const queue = useQueue(q)
    const blocked: LoopBlocked[] = []
    const done: string[] = []
    const worker = useWorker(q, () => new Promise((r) => setTimeout(r, 1500)), { leaseMs: 1000 })
    worker.on("loop-blocked", (b) => blocked.push(b))
    worker.on("completed", (job) => done.push(job.id))
    await worker.ready
    const id = await queue.add({})
    await until("the job done", () => done.length > 0)
    expect(done).toEqual([id])
    expect(blocked).toEqual([])
  })
})
