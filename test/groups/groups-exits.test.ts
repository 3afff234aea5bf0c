/**
 * Groups across the ways a job leaves a state and comes back: a cancelled grouped job keeps
 * its group for a retry (G1), a custom id re-added after its cancelled job was trimmed is a
 * new waiting job and is not listed (G2), and a first grouped job added delayed leaves the ungrouped jobs
 * servable (G8). Review correctness-f43eb35.
 */
import { describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"
import { redisNow, untilRedisClock } from "../support/until.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("groups-exits")
const shared = sharedClients()

const setup = async () => {
  const q = name()
  const queue = useQueue<{ n: number }>(q)
  await queue.setGroupLimits("tenant", { concurrency: 1 })
  const reserve = async () => (await queue.reserve({ count: 10, leaseMs: 30_000 })).map((j) => j.id)
  return { q, keys: queueKeys(q), queue, reserve }
}

describe("groups: a cancelled grouped job, retried, stays in its group (G1)", () => {
  it("cancel A (waiting), retry A while B of the same cap-1 group waits: one reserve leases only B", async () => {
    const t = await setup()
    const a = await t.queue.add({ n: 1 }, { group: "tenant" })
    expect(await t.queue.cancel(a)).toBe("waiting")
    const b = await t.queue.add({ n: 2 }, { group: "tenant" })
    expect(await t.queue.retry(a)).toBe("cancelled")
    expect(await t.reserve()).toEqual([b])
    const [g] = (await t.queue.groups()).groups
    expect(g).toMatchObject({ group: "tenant", active: 1, waiting: 1 })
    expect(await t.reserve()).toEqual([])
  })

  it("an active grouped job cancelled and retried waits for its group's slot like any other", async () => {
    const t = await setup()
    const a = await t.queue.add({ n: 1 }, { group: "tenant" })
    expect(await t.reserve()).toEqual([a])
    expect(await t.queue.cancel(a)).toBe("active")
    const b = await t.queue.add({ n: 2 }, { group: "tenant" })
    expect(await t.reserve()).toEqual([b])
    await t.queue.retry(a)
    expect(await t.reserve()).toEqual([])
    expect((await t.queue.verify()).violations).toBe(0)
  })

  it("a paused group's cancelled job, retried, is not leased while the group is paused", async () => {
    const t = await setup()
    await t.queue.pauseGroup("tenant")
    const c = await t.queue.add({ n: 3 }, { group: "tenant" })
    await t.queue.cancel(c)
    await t.queue.retry(c)
    expect(await t.reserve()).toEqual([])
    await t.queue.resumeGroup("tenant")
    expect(await t.reserve()).toEqual([c])
  })
})

describe("groups: a custom id re-added after its cancelled job was trimmed is a new job (G2)", () => {
  it("cancelled count 0 with an age bound, group cap 1: the new job waits, cancels, runs; no trim deletes it; no slot leaks", async () => {
    const t = await setup()
    await t.queue.setRetention({ cancelled: { count: 0, ageMs: 0 } })
    await t.queue.add({ n: 1 }, { id: "order-42", group: "tenant" })
    expect(await t.queue.cancel("order-42")).toBe("waiting")
    expect(await t.queue.getJob("order-42")).toBeUndefined()
    expect(await t.queue.add({ n: 2 }, { id: "order-42", group: "tenant" })).toBe("order-42")
    expect(await t.queue.getJob("order-42")).toMatchObject({ state: "waiting", payload: { n: 2 } })
    expect(await t.queue.changePriority("order-42", 5)).toBe("waiting")
    expect(await t.queue.cancel("order-42")).toBe("waiting")
    await t.queue.add({ n: 3 }, { id: "order-42", group: "tenant" })
    expect((await t.queue.verify()).violations).toBe(0)
    // the sweep trims every cancelled job by age (0): the waiting job is not one of them
    await t.queue.sweep()
    expect(await t.queue.getJob("order-42")).toMatchObject({ state: "waiting", payload: { n: 3 } })
    const [job] = await t.queue.reserve({ count: 10 })
    expect(job).toMatchObject({ id: "order-42", payload: { n: 3 } })
    await t.queue.complete(job!.id, job!.token)
    await t.queue.add({ n: 4 }, { id: "order-43", group: "tenant" })
    expect(await t.reserve()).toEqual(["order-43"])
    expect((await t.queue.verify()).violations).toBe(0)
    expect(await shared.raw.zcard(t.keys.dead)).toBe(0)
  })

  it("clean('cancelled') does not delete a waiting job whose custom id a trimmed cancelled job had", async () => {
    const q = name()
    const queue = useQueue<{ n: number }>(q)
    await queue.setRetention({ cancelled: { count: 10 } })
    await queue.add({ n: 0 }, { id: "invoice-7" })
    await queue.cancel("invoice-7")
    // the newest 10 are by cancel time (ms); within one ms by id, where "invoice-7" sorts after
    // the generated ids: the others are cancelled once the Redis clock has moved on
    await untilRedisClock(shared.raw, await redisNow(shared.raw))
    for (let i = 1; i <= 10; i++) await queue.cancel(await queue.add({ n: i }))
    // pushed out of the newest 10: its data is gone, its id free
    expect(await queue.getJob("invoice-7")).toBeUndefined()
    await queue.add({ n: 7 }, { id: "invoice-7" })
    expect(await queue.getJob("invoice-7")).toMatchObject({ state: "waiting" })
    expect((await queue.verify()).violations).toBe(0)
    await queue.clean("cancelled", { olderThanMs: 0 })
    const jobs = await queue.reserve({ count: 10 })
    expect(jobs.map((j) => [j.id, j.payload])).toEqual([["invoice-7", { n: 7 }]])
    expect(await shared.raw.zcard(queueKeys(q).dead)).toBe(0)
  })

  it("a cancelled job trimmed by a count of 0 is not listed nor cleaned; its lease's holder is still told JobCancelled (G2)", async () => {
    const q = name()
    const queue = useQueue<{ n: number }>(q)
    await queue.setRetention({ cancelled: { count: 0 } })
    await queue.add({ n: 1 }, { id: "order-1" })
    await queue.add({ n: 2 }, { id: "order-2" })
    const [job] = await queue.reserve({ count: 1, leaseMs: 30_000 })
    expect(await queue.cancel("order-1")).toBe("active")
    expect(await queue.cancel("order-2")).toBe("waiting")
    for (const rev of [false, true]) {
      expect(await queue.getJobs("cancelled", rev ? { order: "desc" } : {})).toEqual({ jobs: [], total: 0 })
    }
    expect(await queue.getJob("order-1")).toBeUndefined()
    expect((await queue.clean("cancelled", { olderThanMs: 0 })).deleted).toBe(0)
    // the sweep (age bound 1 hour) keeps the id for the fence
    await queue.sweep()
    await expect(queue.complete(job!.id, job!.token)).rejects.toMatchObject({ _tag: "JobCancelled" })
    expect((await queue.verify()).violations).toBe(0)
  })

  it("a lowered cancelled count trims the older cancelled jobs too, the 2 oldest per cancel", async () => {
    const q = name()
    const queue = useQueue<{ n: number }>(q)
    for (let i = 0; i < 3; i++) await queue.cancel(await queue.add({ n: i }))
    await queue.setRetention({ cancelled: { count: 0 } })
    const listed = async () => (await queue.getJobs("cancelled")).jobs.map((j) => j.payload?.n)
    await queue.cancel(await queue.add({ n: 3 }))
    expect(await listed()).toEqual([2])
    await queue.cancel(await queue.add({ n: 4 }))
    expect(await listed()).toEqual([])
    expect((await queue.verify()).violations).toBe(0)
  })

  it("verify reports a waiting job that is also in cancelled", async () => {
    const q = name()
    const queue = useQueue<{ n: number }>(q)
    const id = await queue.add({ n: 1 })
    await shared.raw.zadd(queueKeys(q).cancelled, 1, id)
    expect((await queue.verify()).lines).toEqual([`duplicate ${id} in wait and cancelled`])
  })
})

describe("groups: the first grouped job added delayed (G8)", () => {
  it("leaves the ungrouped jobs already waiting servable", async () => {
    const q = name()
    const queue = useQueue<{ n: number }>(q)
    for (let i = 0; i < 5; i++) await queue.add({ n: i })
    await queue.add({ n: 9 }, { group: "tenant", delayMs: 60_000 })
    const jobs = await queue.reserve({ count: 10 })
    expect(jobs.map((j) => j.payload)).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })))
    expect(await queue.stats()).toMatchObject({ waiting: 0, active: 5, delayed: 1 })
  })
})
