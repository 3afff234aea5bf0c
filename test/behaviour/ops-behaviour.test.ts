/**
 * The operator's calls, one case run against both faces (docs/operations.md): list with
 * payloads, promote, update, reschedule, retry a completed job (it runs again), refusals
 * naming the state, drain, clean and obliterate.
 */
import { describe, expect, it } from "vitest"
import { queueNamer } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { faces } from "./faces.ts"

const name = queueNamer("ops-behaviour")

describe.each(faces)("$name", (face) => {
  it("list, promote, updatePayload, reschedule, drain; a refusal names the state", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 1 }, { delayMs: 3_600_000 })
    expect((await q.ops.getJobs("delayed")).jobs).toMatchObject([{ id, state: "delayed", payload: { n: 1 } }])
    expect(await q.ops.promote(id)).toBe("delayed")
    await expect(q.ops.promote(id)).rejects.toMatchObject({ _tag: "WrongJobState", state: "waiting" })
    expect(await q.ops.updatePayload(id, { n: 2 })).toBe("waiting")
    expect((await q.ops.getJobs("waiting")).jobs).toMatchObject([{ id, payload: { n: 2 } }])
    expect(await q.ops.reschedule(id, { delayMs: 60_000 })).toBe("waiting")
    expect(await q.ops.drain({ delayed: true })).toMatchObject({ waiting: 0, delayed: 1 })
    expect(await q.getJob(id)).toBeUndefined()
  })

  it("retry runs a retained completed job again; clean and obliterate remove what is left", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 3 })
    const w = await q.worker(() => "ok") // the completed job is retained (default retention)
    await until("the job completes", () => w.seen.completed.length === 1)
    expect(await q.ops.retry(id)).toBe("completed")
    await until("the job runs again", () => w.seen.completed.length === 2)
    expect(w.seen.runs.map((r) => [r.id, r.attempt])).toEqual([
      [id, 1],
      [id, 1],
    ])
    await w.close()
    expect(await q.ops.clean("completed")).toMatchObject({ deleted: 1 })
    expect(await q.ops.obliterate()).toEqual({ active: 0 })
    expect((await q.stats()).counters.added).toBe(0)
  })
})
