/**
 * One worker's pause and resume, and its drained event, through both faces (faces.ts): a
 * paused worker starts no new job while its running one completes; resume runs the rest;
 * drained is told once, after the last job is done.
 */
import { describe, expect, it } from "vitest"
import { deferred } from "../support/cleanup.ts"
import { queueNamer } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { faces } from "./faces.ts"

const name = queueNamer("worker-control")

describe.each(faces)("$name", (face) => {
  it("pause: no new job starts while paused, the running one completes; resume runs the rest; drained once after", async () => {
    const q = await face.open(name())
    const gate = deferred<void>()
    const w = await q.worker((job) => (job.payload.n === 1 ? gate.promise : "ok"), { concurrency: 2 })
    const first = await q.add({ n: 1 })
    await until("the first job runs", () => w.seen.runs.length === 1)
    await w.pause()
    expect(await w.state()).toBe("paused")
    const second = await q.add({ n: 2 })
    gate.resolve()
    await until("the first job completed", () => w.seen.completed.includes(first))
    expect(w.seen.runs.map((r) => r.id)).toEqual([first])
    expect((await q.getJob(second))?.state).toBe("waiting")
    expect(w.seen.drained).toBe(0)
    await w.resume()
    expect(await w.state()).toBe("running")
    await until("the second job completed", () => w.seen.completed.includes(second))
    await until("drained", () => w.seen.drained === 1)
    expect(w.seen.runs.map((r) => r.id)).toEqual([first, second])
  })

  it("pause({ wait: true }) ends once the running handler has", async () => {
    const q = await face.open(name())
    const gate = deferred<void>()
    const w = await q.worker(() => gate.promise)
    const id = await q.add({ n: 1 })
    await until("the job runs", () => w.seen.runs.length === 1)
    let paused = false
    const pausing = w.pause({ wait: true }).then(() => {
      paused = true
    })
    await until("paused", async () => (await w.state()) === "paused")
    expect(paused).toBe(false)
    gate.resolve()
    await pausing
    expect(w.seen.completed).toEqual([id])
  })
})
