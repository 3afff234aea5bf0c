/**
 * getJobs rows carry what an operator acts on: attempts, the last error (cut) of a job not
 * completed, a completed job's result (up to 1 KiB), and timings (added, started, finished).
 */
import { describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { deferred } from "../support/cleanup.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("job-rows")
const shared = sharedClients()

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

  it("a completed job keeps when its run started, in getJob and its row; its holder entry goes with it (retry, clean), and verify is clean", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    await queue.setRetention({ completed: { count: 10 } })
    const first = await queue.add(1)
    const second = await queue.add(2)
    const release = deferred()
    const running = deferred()
    const worker = useWorker<number>(q, async (job) => {
      if (job.payload === 1) {
        running.resolve()
        await release.promise
      }
      return job.payload
    })
    await running.promise
    const started = (await queue.getJob(first))!.startedAt!
    expect(started).toBeGreaterThan(0)
    release.resolve()
    await until("both completed", async () => (await queue.getJobs("completed")).total === 2)
    await worker.close()
    const info = (await queue.getJob(first))!
    // the start the active job showed, kept by the completion (read from the lease it freed)
    expect(info).toMatchObject({ state: "completed", startedAt: started })
    expect(info.finishedAt).toBeGreaterThanOrEqual(started)
    const rows = (await queue.getJobs("completed")).jobs
    expect(rows.find((r) => r.id === first)).toMatchObject({ startedAt: started })
    expect(rows.find((r) => r.id === second)!.startedAt).toBeGreaterThan(0)
    expect(await queue.verify()).toMatchObject({ violations: 0 })
    const holder = queueKeys(q).holder
    expect(await shared.raw.hlen(holder)).toBe(2)
    // a retried job runs afresh: its old start goes (it is waiting now)
    await queue.retry(first)
    expect(await shared.raw.hexists(holder, first)).toBe(0)
    expect((await queue.getJob(first))!).not.toHaveProperty("startedAt")
    // cleaned, it leaves nothing behind
    expect(await queue.clean("completed")).toMatchObject({ deleted: 1 })
    expect(await shared.raw.hlen(holder)).toBe(0)
    expect(await queue.verify()).toMatchObject({ violations: 0 })
  })

  it("a completed job dropped at once (no retention) or trimmed by the retention's count keeps no holder entry", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    await queue.setRetention({ completed: { count: 1 } })
    await queue.addBulk([1, 2, 3].map((payload) => ({ payload })))
    const worker = useWorker<number>(q, async (job) => job.payload)
    await until("all ran", async () => (await queue.stats()).counters.completed === 3)
    await worker.close()
    expect(await shared.raw.hlen(queueKeys(q).holder)).toBe(1)
    await queue.setRetention({ completed: { count: 0 } })
    await queue.add(4)
    const again = useWorker<number>(q, async (job) => job.payload)
    await until("the fourth ran", async () => (await queue.stats()).counters.completed === 4)
    await again.close()
    await queue.sweep()
    expect(await shared.raw.hlen(queueKeys(q).holder)).toBe(0)
    expect(await queue.verify()).toMatchObject({ violations: 0 })
  })
})
