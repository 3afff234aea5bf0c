/**
 * The default group limits (`setGroupLimits({ … })`) hold as a group's own do: a group that
 * runs empty keeps its rate window (correctness review G3), and clearing or raising the
 * default releases the groups its old window or concurrency held (G9).
 */
import { describe, expect, it } from "vitest"
import { queueNamer } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("groups-default-limits")

/** `rounds` times: add 2 jobs of group "tenant", reserve up to 5, complete what was leased; the count leased per round. */
const burst = async (q: ReturnType<typeof useQueue<number>>, rounds: number) => {
  const leased: number[] = []
  for (let i = 0; i < rounds; i++) {
    await q.add(2 * i, { group: "tenant" })
    await q.add(2 * i + 1, { group: "tenant" })
    const jobs = await q.reserve({ count: 5 })
    leased.push(jobs.length)
    for (const j of jobs) await q.complete(j.id, j.token)
  }
  return leased
}

describe("default group limits", () => {
  it("a group that runs empty keeps its window under the default rate limit, as under its own (G3)", async () => {
    const byDefault = useQueue<number>(name())
    await byDefault.setGroupLimits({ max: 3, perMs: 10_000 })
    expect(await burst(byDefault, 5)).toEqual([2, 1, 0, 0, 0])
    expect((await byDefault.verify()).violations).toBe(0)

    const byOwn = useQueue<number>(name())
    await byOwn.setGroupLimits("tenant", { max: 3, perMs: 10_000 })
    expect(await burst(byOwn, 5)).toEqual([2, 1, 0, 0, 0])
  })

  it("a group emptied inside its default window runs again while the window has room, and is tidied once it ends", async () => {
    const q = useQueue<number>(name())
    await q.setGroupLimits({ max: 5, perMs: 300 })
    expect(await burst(q, 2)).toEqual([2, 2])
    // the window (4 of 5) is kept while open: the group is listed, with nothing waiting
    expect((await q.groups()).groups).toEqual([
      { group: "tenant", waiting: 0, active: 0, paused: false, limits: undefined },
    ])
    // after the window ends, the next reserve forgets the empty group
    await until("the empty group is tidied away", async () => {
      await q.reserve({ count: 1 })
      return (await q.groups()).groups.length === 0
    })
    expect(await burst(q, 3)).toEqual([2, 2, 1])
    expect((await q.verify()).violations).toBe(0)
  })

  for (const change of ["cleared", "raised"] as const) {
    it(`the groups held by the default window run once the default is ${change} (G9)`, async () => {
      const q = useQueue<number>(name())
      await q.setGroupLimits({ max: 1, perMs: 3_600_000 })
      for (let i = 0; i < 3; i++) await q.add(i, { group: "tenant" })
      await q.add(9, { group: "own" })
      await q.setGroupLimits("own", { max: 1, perMs: 3_600_000 })
      expect((await q.reserve({ count: 5 })).map((j) => j.payload).sort()).toEqual([0, 9])
      expect(await q.reserve({ count: 5 })).toEqual([])
      await q.setGroupLimits(change === "cleared" ? null : { max: 10, perMs: 3_600_000 })
      // "tenant" runs again; "own" keeps its own limits (its window is full)
      expect((await q.reserve({ count: 5 })).map((j) => j.payload)).toEqual([1, 2])
      await q.add(10, { group: "own" })
      expect(await q.reserve({ count: 5 })).toEqual([])
      expect((await q.verify()).violations).toBe(0)
    })
  }

  for (const change of ["cleared", "raised"] as const) {
    it(`the groups at the default concurrency run once the default is ${change} (G9)`, async () => {
      const q = useQueue<number>(name())
      await q.setGroupLimits({ concurrency: 2 })
      for (let i = 0; i < 3; i++) await q.add(i, { group: "tenant" })
      expect((await q.reserve({ count: 5 })).map((j) => j.payload)).toEqual([0, 1])
      expect(await q.reserve({ count: 5 })).toEqual([])
      await q.setGroupLimits(change === "cleared" ? null : { concurrency: 3 })
      // "tenant" (2 active) runs its third job without waiting for one to end
      expect((await q.reserve({ count: 5 })).map((j) => j.payload)).toEqual([2])
      expect((await q.verify()).violations).toBe(0)
    })
  }

  it("a change of the default releases more held groups than one page (1,000) looks at", async () => {
    const q = useQueue<number>(name())
    await q.setGroupLimits({ max: 1, perMs: 3_600_000 })
    const groups = 1_200
    for (const from of [0, 1]) {
      const jobs = Array.from({ length: groups }, (_, g) => ({ payload: from, options: { group: `t${g}` } }))
      for (let i = 0; i < jobs.length; i += 500) await q.addBulk(jobs.slice(i, i + 500))
    }
    const leaseAll = async () => {
      let n = 0
      for (let got = -1; got !== 0; n += got) got = (await q.reserve({ count: 500 })).length
      return n
    }
    expect(await leaseAll()).toBe(groups)
    await q.setGroupLimits(null)
    expect(await leaseAll()).toBe(groups)
    expect((await q.verify()).violations).toBe(0)
  })
})
