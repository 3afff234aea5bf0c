/**
 * Retention, a queue policy stored in Redis (queue.setRetention), on both faces against the
 * suite's real Redis: the defaults answer for finished jobs, the count bound trims oldest
 * first, the sweep trims by age, a change takes effect on the next finish, bad input is
 * refused with nothing written. Time is waited for on the Redis clock, never slept.
 */
import { describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"
import { redisNow, until } from "../support/until.ts"
import { faces } from "./faces.ts"

const name = queueNamer("retention")
const shared = sharedClients()

/** Wait until the Redis clock has passed `at` (ms). */
const redisPassed = (what: string, at: number) => until(what, async () => (await redisNow(shared.raw)) > at)

describe.each(faces)("$name", (face) => {
  it("waitFor a second after a job completed answers completed with its result, with default options", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 7 })
    const w = await q.worker(() => "ok") // the handler returns the payload's n
    await until("the job completed", () => w.seen.completed.length === 1)
    const { finishedAt } = (await q.getJob(id))!
    await redisPassed("a second after the completion, on the Redis clock", finishedAt! + 1_000)
    expect(await q.waitFor(id, 5_000)).toMatchObject({ id, state: "completed", result: 7, finishedAt })
    expect(await q.getJob(id)).toMatchObject({ id, state: "completed", payload: { n: 7 }, result: 7 })
  })

  it("getJob of a cancelled job within retention answers cancelled with its payload", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 2 }, { delayMs: 60_000 })
    expect(await q.cancel(id)).toBe("delayed")
    expect(await q.getJob(id)).toMatchObject({ id, state: "cancelled", payload: { n: 2 } })
  })

  it("defaults: completed and cancelled 1,000 for 1 hour, dead unbounded; what is not given takes its default", async () => {
    const q = await face.open(name())
    const defaults = {
      completed: { count: 1000, ageMs: 3_600_000 },
      cancelled: { count: 1000, ageMs: 3_600_000 },
      dead: {},
    }
    expect(await q.retention()).toEqual(defaults)
    await q.setRetention({ completed: { count: 5 }, dead: { count: 10, ageMs: 60_000 } })
    expect(await q.retention()).toEqual({
      ...defaults,
      completed: { count: 5, ageMs: 3_600_000 },
      dead: { count: 10, ageMs: 60_000 },
    })
    await q.setRetention({ cancelled: { ageMs: 0 } })
    expect(await q.retention()).toEqual({ ...defaults, cancelled: { count: 1000, ageMs: 0 } })
  })

  it("the count bound trims oldest first, and a change takes effect on the next finish", async () => {
    const q = await face.open(name())
    await q.setRetention({ completed: { count: 2 } })
    for (let i = 0; i < 4; i++) await q.add({ n: i })
    const w = await q.worker(() => "ok", { concurrency: 1 })
    await until("4 completed", () => w.seen.completed.length === 4)
    const kept = new Set(await shared.raw.zrange(queueKeys(q.name).done, "0", "-1"))
    expect(kept).toEqual(new Set(w.seen.completed.slice(2)))
    await q.setRetention({ completed: { count: 0 } })
    const last = await q.add({ n: 4 })
    await until("5 completed", () => w.seen.completed.length === 5)
    expect(await q.getJob(last)).toBeUndefined()
    expect(await shared.raw.zcard(queueKeys(q.name).done)).toBe(0)
  })

  it("the age bound is trimmed by a sweep pass, of completed and cancelled jobs", async () => {
    const q = await face.open(name())
    const id = await q.add({ n: 3 })
    const cancelled = await q.add({ n: 4 }, { delayMs: 60_000 })
    const w = await q.worker(() => "ok", { sweep: false })
    await until("the job completed", () => w.seen.completed.length === 1)
    await q.cancel(cancelled)
    await q.sweep()
    expect(await q.getJob(id)).toMatchObject({ state: "completed" })
    expect(await q.getJob(cancelled)).toMatchObject({ state: "cancelled" })
    await q.setRetention({ completed: { ageMs: 0 }, cancelled: { ageMs: 0 } })
    await redisPassed("the cancel is in the past", (await q.getJob(cancelled))!.finishedAt!)
    await q.sweep()
    expect(await q.getJob(id)).toBeUndefined()
    expect(await q.getJob(cancelled)).toBeUndefined()
  })

  it("bad input is refused naming the field, and nothing is written", async () => {
    const q = await face.open(name())
    await q.setRetention({ completed: { count: 3 } })
    const before = await shared.raw.hgetall(queueKeys(q.name).meta)
    await expect(q.setRetention({ completed: { count: -1 } })).rejects.toThrow(/retention\.completed\.count/)
    await expect(q.setRetention({ completed: { ageMs: "1h" } })).rejects.toThrow(/retention\.completed\.ageMs/)
    await expect(q.setRetention({ cancelled: { age: 5 } })).rejects.toThrow(/retention\.cancelled/)
    await expect(q.setRetention({ dead: { count: 1.5 } })).rejects.toThrow(/retention\.dead\.count/)
    await expect(q.setRetention({ failed: { count: 5 } })).rejects.toThrow(/retention/)
    await expect(q.setRetention(undefined)).rejects.toThrow(/retention/)
    expect(await shared.raw.hgetall(queueKeys(q.name).meta)).toEqual(before)
  })
})
