/**
 * getJobs rows carry what an operator acts on: attempts, the last error (cut) of a job not
 * completed, a completed job's result (up to 1 KiB), and timings (added, started, finished).
 */
import { describe, expect, it } from "vitest"
import { deferred } from "../support/cleanup.ts"
import { queueNamer } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("job-rows")

describe("getJobs rows", () => {
  it("a dead job's row has its attempts and last error; a waiting job's row after a failure too", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const dead = await queue.add("doomed", { maxAttempts: 2 })
    const retried = await queue.add("again", { maxAttempts: 3, backoff: { type: "fixed", delayMs: 60_000 } })
    useWorker<string>(
      q,
      (job) => {
        throw new Error(`${job.payload} failed at attempt ${job.attempt} ${"x".repeat(2000)}`)
      },
      { backoff: { type: "fixed", delayMs: 0 } },
    )
    await until("the doomed job is dead", async () => (await queue.getJob(dead))?.state === "dead")
    await until("the other job waits for its retry", async () => (await queue.getJob(retried))?.failures === 1)
    const [row] = (await queue.getJobs("dead")).jobs
    expect(row).toMatchObject({ id: dead, attempt: 2, maxAttempts: 2, failures: 2, lostLeases: 0 })
    expect(row!.error).toMatchObject({ reason: "failed", name: "Error" })
    expect(row!.error!.message.startsWith("doomed failed at attempt 2 x")).toBe(true)
    // the row's message is cut (the whole one is in getJob)
    expect(row!.error!.message.length).toBe(512)
    const [later] = (await queue.getJobs("delayed")).jobs
    expect(later).toMatchObject({ id: retried, attempt: 2, failures: 1, error: { reason: "failed" } })
    expect(later!.dueAt).toBeGreaterThan(later!.addedAt)
  })

  it("a completed job's row has its result (up to 1 KiB) and when it finished; an active one when it started", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    await queue.setRetention({ completed: { count: 10 } })
    const small = await queue.add(1)
    const big = await queue.add(2)
    const held = await queue.add(3)
    const release = deferred()
    const running = deferred()
    useWorker<number>(q, async (job) => {
      if (job.payload === 3) {
        running.resolve()
        await release.promise
      }
      return job.payload === 1 ? { ok: true } : "y".repeat(2000)
    })
    await running.promise
    await until("two completed", async () => (await queue.getJobs("completed")).total === 2)
    const rows = (await queue.getJobs("completed")).jobs
    const bySmall = rows.find((r) => r.id === small)!
    const byBig = rows.find((r) => r.id === big)!
    expect(bySmall).toMatchObject({ result: { ok: true }, attempt: 1 })
    expect(bySmall.resultBytes).toBe(11)
    expect(bySmall.finishedAt).toBeGreaterThanOrEqual(bySmall.addedAt)
    expect(byBig).not.toHaveProperty("result")
    expect(byBig.resultBytes).toBe(2002)
    expect(bySmall).not.toHaveProperty("error")
    const [active] = (await queue.getJobs("active")).jobs
    expect(active!.id).toBe(held)
    expect(active!.startedAt).toBeGreaterThan(0)
    expect(active!.leaseDeadline).toBeGreaterThan(active!.startedAt!)
    release.resolve()
  })

  it("a row of a job that never failed says attempt 1 and carries no error", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    await queue.add(1, { maxAttempts: 4 })
    expect((await queue.getJobs("waiting")).jobs).toEqual([
      expect.objectContaining({ attempt: 1, maxAttempts: 4, failures: 0, lostLeases: 0 }),
    ])
    expect((await queue.getJobs("waiting")).jobs[0]).not.toHaveProperty("error")
  })
})
