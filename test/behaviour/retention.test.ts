/**
 * Retention, a queue policy stored in Redis (queue.setRetention), on both faces against the
 * suite's real Redis: the defaults answer for finished jobs, the count bound trims oldest
 * first, the sweep trims by age, a change takes effect on the next finish, bad input is
 * refused with nothing written.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { until } from "../reliability/support.ts"
import { queueNamer, rawClient } from "../support/redis.ts"
import { faces } from "./faces.ts"

const name = queueNamer("retention")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

describe.each(faces)("$name", (face) => {
  it("waitFor a second after a job completed answers completed with its result, with default options", async () => {
    const q = await face.open(name())
    await q.setEventRetention(0) // no event can tell: the retained job must
    const id = await q.add({ n: 7 })
    const w = await q.worker(() => "ok") // answers the payload's n
    await until("the job completed", () => w.seen.completed.length === 1)
    await new Promise((r) => setTimeout(r, 1_000))
    expect(await q.waitFor(id, 5_000)).toMatchObject({ id, state: "completed", result: 7 })
    expect(await q.getJob(id)).toMatchObject({ id, state: "completed" })
  })

  it("getJob of a cancelled job within retention answers cancelled with its payload", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 2 }, { delayMs: 60_000 })
    expect(await q.cancel(id)).toBe("delayed")
    expect(await q.getJob(id)).toMatchObject({ id, state: "cancelled", payload: { n: 2 } })
  })

  it("defaults: completed 1 hour and 1,000, cancelled 1,000", async () => {
    const q = await face.open(name())
    expect(await q.retention()).toEqual({
      completed: { count: 1000, ageMs: 3_600_000 },
      cancelled: { count: 1000 },
    })
    await q.setRetention({ completed: { count: 5 } })
    expect(await q.retention()).toEqual({ completed: { count: 5, ageMs: 3_600_000 }, cancelled: { count: 1000 } })
  })

  it("the count bound trims oldest first, and a change takes effect on the next finish", async () => {
    const q = await face.open(name())
    await q.setRetention({ completed: { count: 2 } })
    const ids: string[] = []
    for (let i = 0; i < 4; i++) ids.push(await q.add({ n: i }))
    const w = await q.worker(() => "ok", { concurrency: 1 })
    await until("4 completed", () => w.seen.completed.length === 4)
    const kept = new Set(await raw.zrange(queueKeys(q.name).done, "0", "-1"))
    expect(kept).toEqual(new Set(w.seen.completed.slice(2)))
    await q.setRetention({ completed: { count: 0 } })
    const last = await q.add({ n: 4 })
    await until("5 completed", () => w.seen.completed.length === 5)
    expect(await q.getJob(last)).toBeUndefined()
    expect(await raw.zcard(queueKeys(q.name).done)).toBe(0)
  })

  it("the age bound is trimmed by a sweep pass", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 3 })
    const w = await q.worker(() => "ok", { sweep: false })
    await until("the job completed", () => w.seen.completed.length === 1)
    await q.sweep()
    expect(await q.getJob(id)).toMatchObject({ state: "completed" })
    await q.setRetention({ completed: { ageMs: 0 } })
    await new Promise((r) => setTimeout(r, 5))
    await q.sweep()
    expect(await q.getJob(id)).toBeUndefined()
  })

  it("bad input is refused naming the field, and nothing is written", async () => {
    const q = await face.open(name())
    const before = await raw.hgetall(queueKeys(q.name).meta)
    await expect(q.setRetention({ completed: { count: -1 } })).rejects.toThrow(/retention\.completed\.count/)
    await expect(q.setRetention({ completed: { ageMs: "1h" } })).rejects.toThrow(/retention\.completed\.ageMs/)
    await expect(q.setRetention({ cancelled: { ageMs: 5 } })).rejects.toThrow(/retention\.cancelled/)
    await expect(q.setRetention({ dead: { count: 5 } })).rejects.toThrow(/dead/)
    expect(await raw.hgetall(queueKeys(q.name).meta)).toEqual(before)
  })
})
