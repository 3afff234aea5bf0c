/**
 * The queue-wide flow limits in the reserve script (lua/include/flow.lua): the rate window,
 * the concurrency cap and a RateLimited hold; re-sends count nothing twice; bad limits
 * write nothing.
 */
import { describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { InvalidOptions } from "../../src/index.ts"
import { onCleanup } from "../support/cleanup.ts"
import { run } from "../support/jobs.ts"
import { dumpQueue, queueNamer, sharedClients } from "../support/redis.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("flow-scripts")
const shared = sharedClients()

const setup = async (jobs: number) => {
  const q = name()
  const queue = useQueue<number>(q)
  await queue.addBulk(Array.from({ length: jobs }, (_, n) => ({ payload: n })))
  const keys = queueKeys(q)
  onCleanup(async () => void (await shared.raw.del(...Object.values(keys).slice(2))))
  return { q, queue, keys, c: makeCommands(shared.client, keys) }
}

describe("flow limits in reserve", () => {
  it("a rate limit leases at most max per window and answers how long until it opens", async () => {
    const { queue, c, keys } = await setup(10)
    await queue.setRateLimit({ max: 3, perMs: 60_000 })
    expect(await queue.rateLimit()).toEqual({ max: 3, perMs: 60_000 })
    const first = await run(c.reserve(10, 30_000, 0))
    expect(first.jobs.length).toBe(3)
    expect(first.limitMs).toBeGreaterThan(59_000)
    const second = await run(c.reserve(10, 30_000, 0))
    expect(second.jobs.length).toBe(0)
    expect(second.limitMs).toBeGreaterThan(0)
    const stats = await queue.stats()
    expect(stats.counters.limitedRate).toBe(2)
    expect(stats.waiting).toBe(7)
    // cleared: the rest lease at once, and the reply says no limit
    await queue.setRateLimit(null)
    expect(await queue.rateLimit()).toBeNull()
    // the window is emptied with it: a limit set again starts from an empty window
    expect(await shared.raw.exists(keys.rate)).toBe(0)
    expect(await shared.raw.hget(keys.meta, "rateCount")).toBeNull()
    const third = await run(c.reserve(10, 30_000, 0))
    expect(third.jobs.length).toBe(7)
    expect(third.limitMs).toBeUndefined()
  })

  it("a re-sent reserve answers its leases again and does not count the window twice", async () => {
    const { queue, c, keys } = await setup(10)
    await queue.setRateLimit({ max: 5, perMs: 60_000 })
    const ids = { workerId: "w1", requestId: "1" }
    const sent = await run(c.reserve(2, 30_000, 0, [], ids))
    const again = await run(c.reserve(2, 30_000, 0, [], ids))
    expect(again.jobs.map((j) => j.id)).toEqual(sent.jobs.map((j) => j.id))
    expect(await shared.raw.hget(keys.meta, "rateCount")).toBe("2")
    // 3 left in the window, not 1
    expect((await run(c.reserve(10, 30_000, 0, [], { workerId: "w1", requestId: "2" }))).jobs.length).toBe(3)
  })

  it("a concurrency cap leases no more than the free slots of the active set", async () => {
    const { queue, c } = await setup(10)
    await queue.setConcurrency(2)
    expect(await queue.concurrency()).toBe(2)
    const first = await run(c.reserve(10, 30_000, 0))
    expect(first.jobs.length).toBe(2)
    expect(first.limitMs).toBe(0)
    expect((await run(c.reserve(10, 30_000, 0))).jobs.length).toBe(0)
    // a completed lease frees its slot: the complete riding the reserve makes room for one
    const next = await run(c.reserve(10, 30_000, 0, [first.jobs[0]!]))
    expect(next.completed).toEqual([true])
    expect(next.jobs.length).toBe(1)
    await run(c.release([first.jobs[1]!]))
    expect((await run(c.reserve(10, 30_000, 0))).jobs.length).toBe(1)
    expect((await queue.stats()).counters.limitedConcurrency).toBeGreaterThanOrEqual(2)
  })

  it("cancel, snooze, a final failure and release each free a slot of the concurrency cap by leaving active", async () => {
    const { queue, c } = await setup(6)
    await queue.setConcurrency(1)
    const take = async () => {
      const r = await run(c.reserve(10, 30_000, 0))
      expect(r.jobs.length).toBe(1)
      expect((await run(c.reserve(10, 30_000, 0))).jobs.length).toBe(0)
      return r.jobs[0]!
    }
    expect(await queue.cancel((await take()).id)).toBe("active")
    await run(c.fail(await take(), { delayMs: 60_000, error: "", mode: "snooze" }))
    await run(c.fail(await take(), { delayMs: 0, error: '{"message":"x"}', mode: "final" }))
    await run(c.release([await take()]))
    await take()
    expect((await queue.stats()).active).toBe(1)
  })

  it("verify checks the rate window's count against its entries", async () => {
    const { queue, c, keys } = await setup(5)
    await queue.setRateLimit({ max: 10, perMs: 60_000 })
    await run(c.reserve(2, 30_000, 0))
    await run(c.reserve(1, 30_000, 0))
    expect(await queue.verify()).toMatchObject({ violations: 0 })
    await shared.raw.hset(keys.meta, "rateCount", "7")
    const found = await queue.verify()
    expect(found.violations).toBe(1)
    expect(found.lines).toEqual(["rate-count * meta.rateCount is 7 but the rate window's 2 entries lease 3"])
  })

  it("a hold (a handler's RateLimited) puts the job at the front, spends no attempt and leases nothing until it ends", async () => {
    const { queue, c } = await setup(3)
    const [job] = (await run(c.reserve(1, 30_000, 0))).jobs
    expect(await run(c.fail(job!, { delayMs: 60_000, error: "", mode: "hold" }))).toBe("retry")
    const stats = await queue.stats()
    expect(stats.limits.heldMs).toBeGreaterThan(59_000)
    expect(stats.counters).toMatchObject({ rateLimited: 1, failed: 0 })
    const held = await run(c.reserve(10, 30_000, 0))
    expect(held.jobs).toEqual([])
    expect(held.limitMs).toBeGreaterThan(59_000)
    const info = await queue.getJob(job!.id)
    expect(info).toMatchObject({ state: "waiting", attempt: 1, failures: 0 })
  })

  it("a snooze sends the job to delayed without spending an attempt, counted, with a snoozed event", async () => {
    const { queue, c, keys } = await setup(1)
    const [job] = (await run(c.reserve(1, 30_000, 0))).jobs
    expect(await run(c.fail(job!, { delayMs: 60_000, error: "", mode: "snooze" }))).toBe("retry")
    expect(await queue.getJob(job!.id)).toMatchObject({ state: "delayed", attempt: 1, failures: 0 })
    expect((await queue.stats()).counters).toMatchObject({ snoozed: 1, failed: 0 })
    const kinds = (await shared.raw.xrange(keys.events, "-", "+")).map(([, f]) => f[1])
    expect(kinds).toContain("snoozed")
  })

  it.each([
    [{ max: 0, perMs: 1000 }, "max"],
    [{ max: -1, perMs: 1000 }, "max"],
    [{ max: 1.5, perMs: 1000 }, "max"],
    [{ max: 10, perMs: 0 }, "perMs"],
    [{ max: 10 }, "perMs"],
    [{ max: 10, perMs: 1000, burst: 2 }, "rateLimit.burst"],
    ["10/s", "rateLimit"],
  ])("setRateLimit(%j) is refused naming %s, and writes nothing", async (limit, field) => {
    const { q, queue } = await setup(1)
    const before = await dumpQueue(shared.raw, q)
    const err = await queue.setRateLimit(limit as never).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(InvalidOptions)
    expect((err as InvalidOptions).field).toBe(field)
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })

  it.each([0, -2, 2.5, "4"])("setConcurrency(%j) is refused naming concurrency, and writes nothing", async (n) => {
    const { q, queue } = await setup(1)
    const before = await dumpQueue(shared.raw, q)
    const err = await queue.setConcurrency(n as never).catch((e: unknown) => e)
    expect((err as InvalidOptions).field).toBe("concurrency")
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })
})
