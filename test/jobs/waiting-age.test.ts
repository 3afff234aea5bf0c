/**
 * When a job was added, and how long the oldest waiting job has waited, against a real
 * Redis: `stats().oldestWaitingAgeMs` is the age of the oldest waiting job whatever its
 * priority or group (it read only the front of the plain wait list: a fresh plain job, or a
 * tick's job there, hid every older grouped or prioritized one); `addedAt` is stored for
 * an id that carries no time (a custom id, a tick's job), shown by getJob and getJobs; a
 * queue of generated ids without priorities or groups writes neither new key.
 *
 * "Waited" is the Redis clock passing a bound (the suite's Redis runs on this machine's
 * clock, as the ULIDs do): the assertions are "at least the known minimum age".
 */
import { describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"
import { redisNow, until } from "../support/until.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("waiting-age")
const shared = sharedClients()

const setup = () => {
  const q = name()
  return { q, queue: useQueue<{ n: number }>(q), keys: queueKeys(q) }
}

/** Wait until the Redis clock is `ms` past the local time `from`. */
const waited = (from: number, ms: number) =>
  until(`the Redis clock passed ${ms} ms`, async () => (await redisNow(shared.raw)) >= from + ms)

const WAITED_MS = 2000

describe("stats().oldestWaitingAgeMs", () => {
  it("a grouped job and a priority-3 job that waited, then a fresh plain job: the age of the oldest", async () => {
    const { queue } = setup()
    await queue.add({ n: 1 }, { group: "tenant-a" })
    await queue.add({ n: 2 }, { priority: 3 })
    const added = Date.now()
    await waited(added, WAITED_MS)
    await queue.add({ n: 3 })
    const stats = await queue.stats()
    expect(stats.waiting).toBe(3)
    expect(stats.oldestWaitingAgeMs).toBeGreaterThanOrEqual(WAITED_MS)
  })

  it("a priority-3 job alone, and after it was reserved: its age, then 0 (nothing waits)", async () => {
    const { queue } = setup()
    await queue.add({ n: 1 }, { priority: 3 })
    await waited(Date.now(), WAITED_MS)
    expect((await queue.stats()).oldestWaitingAgeMs).toBeGreaterThanOrEqual(WAITED_MS)
    const [job] = await queue.reserve({ count: 1, leaseMs: 60_000 })
    expect(job!.payload).toEqual({ n: 1 })
    expect((await queue.stats()).oldestWaitingAgeMs).toBe(0)
    await queue.complete(job!.id, job!.token)
  })

  it("grouped jobs that waited, with a schedule's job at the front of the wait list: the grouped jobs' age", async () => {
    const { queue, keys } = setup()
    for (let i = 0; i < 3; i++) await queue.add({ n: i }, { group: `tenant-${i}` })
    await waited(Date.now(), WAITED_MS)
    await queue.schedule("beat", { every: 1000 }, { payload: { n: 9 } })
    // its tick due now, as a sweep finds it
    await shared.raw.zadd(keys.schedAt, "XX", await redisNow(shared.raw), "beat")
    expect((await queue.sweep()).scheduled).toBe(1)
    const [front] = await shared.raw.lrange(keys.wait, -1, -1)
    expect(front).toMatch(/^beat@\d+$/)
    const stats = await queue.stats()
    expect(stats.waiting).toBe(4)
    expect(stats.oldestWaitingAgeMs).toBeGreaterThanOrEqual(WAITED_MS)
  })

  it("a queue of generated ids without priorities or groups writes no addedAt and no waitSince", async () => {
    const { queue, keys } = setup()
    await queue.addBulk([{ payload: { n: 1 } }, { payload: { n: 2 }, options: { delayMs: 60_000 } }])
    const [job] = await queue.reserve({ count: 1, leaseMs: 60_000 })
    await queue.complete(job!.id, job!.token)
    expect(await shared.raw.exists(keys.addedAt, keys.waitSince)).toBe(0)
  })
})

describe("addedAt", () => {
  it("a custom id's job: when it was added (Redis clock), in getJob and getJobs; gone with the job", async () => {
    const { queue, keys } = setup()
    await queue.setRetention({ completed: { count: 0 } })
    const before = await redisNow(shared.raw)
    await queue.add({ n: 1 }, { id: "order-42" })
    const after = await redisNow(shared.raw)
    const info = await queue.getJob("order-42")
    expect(info!.addedAt).toBeGreaterThanOrEqual(before)
    expect(info!.addedAt).toBeLessThanOrEqual(after)
    const page = await queue.getJobs("waiting")
    expect(page.jobs.map((j) => [j.id, j.addedAt])).toEqual([["order-42", info!.addedAt]])
    const [job] = await queue.reserve({ count: 1, leaseMs: 60_000 })
    await queue.complete(job!.id, job!.token)
    expect(await shared.raw.hexists(keys.addedAt, "order-42")).toBe(0)
  })

  it("a schedule's job: when the tick made it, in getJob and getJobs", async () => {
    const { queue, keys } = setup()
    // hourly: with `every: 1000`, a sweep that straddled a second boundary made the next
    // whole second's tick instead of the one set due below
    await queue.schedule("report", { every: 3_600_000 }, { payload: { n: 1 } })
    const before = await redisNow(shared.raw)
    await shared.raw.zadd(keys.schedAt, "XX", before, "report")
    expect((await queue.sweep()).scheduled).toBe(1)
    const after = await redisNow(shared.raw)
    const id = `report@${before}`
    const info = await queue.getJob(id)
    expect(info!.addedAt).toBeGreaterThanOrEqual(before)
    expect(info!.addedAt).toBeLessThanOrEqual(after)
    expect((await queue.getJobs("waiting")).jobs.map((j) => [j.id, j.addedAt])).toEqual([[id, info!.addedAt]])
  })

  it("a generated id's job: the time its ULID carries, nothing stored", async () => {
    const { queue, keys } = setup()
    const before = Date.now()
    const id = await queue.add({ n: 1 })
    const info = await queue.getJob(id)
    expect(info!.addedAt).toBeGreaterThanOrEqual(before)
    expect(info!.addedAt).toBeLessThanOrEqual(Date.now())
    expect(await shared.raw.exists(keys.addedAt)).toBe(0)
  })
})
