/**
 * Batch workers on both faces (test/behaviour/faces.ts), against the suite's real Redis:
 * each job of a batch runs by its own plan and keeps its own outcome and attempts; a job
 * cancelled mid-batch is told as cancelled while the rest complete; close() while a batch
 * hangs past the grace releases every job of it, attempts unchanged.
 */
import { describe, expect, it } from "vitest"
import { queueNamer } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { faces } from "./faces.ts"

const name = queueNamer("batch-behaviour")

describe.each(faces)("$name", (face) => {
  it("each job of a batch keeps its own outcome: a failing one retries alone with attempt 2", async () => {
    const q = await face.open(name())
    const ids = await q.addBulk([0, 1, 2, 3, 4, 5].map((n) => ({ payload: { n } })))
    const w = await q.worker((job) => (job.payload.n === 2 && job.attempt === 1 ? "fail" : "ok"), {
      batch: { size: 6, waitMs: 200 },
      backoff: { type: "fixed", delayMs: 10 },
      sweep: { intervalMs: 20 },
    })
    await until("6 completed", () => w.seen.completed.length === 6)
    expect(w.seen.failed).toEqual([{ id: ids[2], willRetry: true }])
    expect(w.seen.runs.filter((r) => r.attempt === 2).map((r) => r.id)).toEqual([ids[2]])
    expect(w.seen.runs.slice(0, 6).map((r) => r.id)).toEqual(ids)
  })

  it("a job cancelled mid-batch is told as cancelled; the others of the batch complete", async () => {
    const q = await face.open(name())
    const ids = await q.addBulk([0, 1, 2].map((n) => ({ payload: { n } })))
    const w = await q.worker((job) => (job.payload.n === 1 ? "hang" : "ok"), {
      batch: { size: 3, waitMs: 5_000 },
      // the cancel is told by a heartbeat: a quick one, on a lease no busy machine can lose (a
      // 300 ms lease lost under load re-ran the hanging job, stopped twice: "stopped" never 1)
      heartbeatMs: 100,
    })
    await until("2 completed", () => w.seen.completed.length === 2)
    // a busy machine: this process runs nothing for 1 s, no heartbeat included (with a 300 ms
    // lease this timed out at 60 s: the lease lost, the job re-ran and was stopped twice)
    const stalled = Date.now() + 1000
    while (Date.now() < stalled) {}
    expect(await q.cancel(ids[1]!)).toBe("active")
    await until("the cancel told", () => w.seen.cancelled.length === 1)
    expect(w.seen.cancelled).toEqual([ids[1]])
    await until("its handler stopped", () => w.seen.stopped.length === 1)
    expect(w.seen.completed.sort()).toEqual([ids[0]!, ids[2]!].sort())
    expect(w.seen.leaseLost).toEqual([])
    expect((await q.stats()).active).toBe(0)
  })

  it("close() while a batch hangs past the grace releases every job of it, attempts unchanged", async () => {
    const q = await face.open(name())
    const ids = await q.addBulk([0, 1, 2, 3].map((n) => ({ payload: { n } })))
    const w = await q.worker(() => "hang", { batch: { size: 4, waitMs: 5_000 }, shutdownGraceMs: 50 })
    await until("4 running", () => w.seen.runs.length === 4)
    await w.close()
    expect(w.seen.stopped.sort()).toEqual([...ids].sort())
    expect(await q.stats()).toMatchObject({ active: 0, waiting: 4 })
    for (const id of ids) expect(await q.getJob(id)).toMatchObject({ state: "waiting", attempt: 1, failures: 0 })
  })
})
