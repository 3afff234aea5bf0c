/**
 * Fair groups at the script level (lua/include/groups.lua through ready.lua): the round
 * robin, each group's concurrency freed exactly once by every way a job leaves active,
 * a re-sent reserve counting nothing twice, pause and resume, the rate window, the list.
 */
import { describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { newJob, run } from "../support/jobs.ts"
import { dumpQueue, queueNamer, sharedClients } from "../support/redis.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("groups-scripts")
const shared = sharedClients()

const setup = () => {
  const q = name()
  const keys = queueKeys(q)
  const c = makeCommands(shared.client, keys)
  const queue = useQueue<string>(q)
  /** Add jobs with payload `${group}${i}` in group `group` ("" for none). */
  const add = (group: string, n: number, from = 0) =>
    run(
      c.add(
        Array.from({ length: n }, (_, i) =>
          newJob({ payload: JSON.stringify(`${group || "-"}${from + i}`), ...(group ? { group } : {}) }),
        ),
      ),
    )
  const reserve = async (count: number, opts: { requestId?: string } = {}) =>
    (await run(c.reserve(count, 30_000, 100, [], opts))).jobs
  const names = (jobs: ReadonlyArray<{ payload: string }>) => jobs.map((j) => JSON.parse(j.payload) as string)
  const active = async (g: string) => Number((await shared.raw.hget(keys.gstate, `a\0${g}`)) ?? 0)
  return { q, keys, c, queue, add, reserve, names, active }
}

describe("groups: the round robin", () => {
  it("a backlog of one group does not starve another: one call serves each group in turn, each FIFO", async () => {
    const t = setup()
    await t.add("A", 100)
    await t.add("B", 3)
    expect(t.names(await t.reserve(4))).toEqual(["A0", "A1", "B0", "B1"])
    expect(t.names(await t.reserve(2))).toEqual(["A2", "B2"])
    expect(t.names(await t.reserve(3))).toEqual(["A3", "A4", "A5"])
  })

  it("the ungrouped jobs are one more participant of the round robin", async () => {
    const t = setup()
    await t.add("", 5)
    await t.add("A", 5)
    await t.add("B", 5)
    const got = t.names(await t.reserve(6))
    expect(got.filter((n) => n.startsWith("-"))).toHaveLength(2)
    expect(got.filter((n) => n.startsWith("A"))).toHaveLength(2)
    expect(got.filter((n) => n.startsWith("B"))).toHaveLength(2)
  })

  it("a delayed grouped job waits in its group once due; stats and verify count grouped jobs", async () => {
    const t = setup()
    await run(t.c.add([newJob({ payload: '"late"', group: "A", delayMs: 1 })]))
    await t.add("A", 1)
    await new Promise((r) => setTimeout(r, 5))
    expect(t.names(await t.reserve(5))).toEqual(["A0", "late"])
    expect(await t.active("A")).toBe(2)
    expect(await t.queue.stats()).toMatchObject({ waiting: 0, active: 2 })
    expect((await t.queue.verify()).violations).toBe(0)
  })
})

describe("groups: concurrency", () => {
  it("a group at its concurrency leases no more until one of its jobs leaves active, by any way", async () => {
    const t = setup()
    await t.queue.setGroupLimits("A", { concurrency: 1 })
    await t.add("A", 6)
    const ways: Array<(j: { id: string; token: number }) => Promise<unknown>> = [
      (j) => run(t.c.complete([{ id: j.id, token: j.token, result: "" }])),
      (j) => run(t.c.fail({ id: j.id, token: j.token }, { delayMs: 0, error: "{}", mode: "retry" })),
      (j) => run(t.c.release([{ id: j.id, token: j.token }])),
      (j) => run(t.c.fail({ id: j.id, token: j.token }, { delayMs: 0, error: "{}", mode: "dead" })),
      (j) => t.queue.cancel(j.id),
    ]
    for (const leave of ways) {
      const [held, ...more] = await t.reserve(5)
      expect(more).toEqual([])
      expect(await t.active("A")).toBe(1)
      expect(await t.reserve(5)).toEqual([])
      await leave(held!)
      expect(await t.active("A")).toBe(0)
    }
    expect(await t.reserve(5)).toHaveLength(1)
    expect((await t.queue.verify()).violations).toBe(0)
  })

  it("own limits hold while any group has them: setting one twice and clearing one never set count once", async () => {
    const t = setup()
    await t.queue.setGroupLimits("A", { concurrency: 1 })
    await t.queue.setGroupLimits("A", { concurrency: 1 })
    await t.queue.setGroupLimits("B", null)
    await t.queue.setGroupLimits("B", null)
    expect(await shared.raw.hget(t.keys.gstate, "lim")).toBe("1")
    await t.add("A", 3)
    await t.add("B", 3)
    const first = await t.reserve(10)
    // A at its concurrency of 1, B without limits: all of B's
    expect(t.names(first).sort()).toEqual(["A0", "B0", "B1", "B2"])
    expect(await t.reserve(10)).toEqual([])
    await t.queue.setGroupLimits("A", null)
    expect(await shared.raw.hget(t.keys.gstate, "lim")).toBe("0")
    // cleared: A's jobs are served without a limit read, all at once
    expect(t.names(await t.reserve(10)).sort()).toEqual(["A1", "A2"])
    expect(await t.active("A")).toBe(3)
    expect((await t.queue.verify()).violations).toBe(0)
  })

  it("a groups' state begun without the 'lim' count (an earlier version) keeps reading each group's limits", async () => {
    const t = setup()
    await t.add("A", 3)
    // as an earlier version left it: an own limit of concurrency 1 and no count
    await shared.raw.hdel(t.keys.gstate, "lim")
    await shared.raw.hset(t.keys.gstate, "c\0A", "1||")
    await t.queue.setGroupLimits("B", { concurrency: 5 })
    await t.queue.setGroupLimits("B", null)
    expect(await shared.raw.hget(t.keys.gstate, "lim")).toBe(null)
    expect(t.names(await t.reserve(10))).toEqual(["A0"])
    expect(await t.reserve(10)).toEqual([])
  })

  it("a re-sent reserve answers the same leases and counts no slot twice", async () => {
    const t = setup()
    await t.queue.setGroupLimits({ concurrency: 2 })
    await t.add("A", 5)
    const first = await t.reserve(5, { requestId: "7" })
    const again = await t.reserve(5, { requestId: "7" })
    expect(again.map((j) => j.id)).toEqual(first.map((j) => j.id))
    expect(first).toHaveLength(2)
    expect(await t.active("A")).toBe(2)
  })

  it("a re-sent reserve with count 0 (a closing worker's give-back) frees the group's slots", async () => {
    const t = setup()
    await t.queue.setGroupLimits({ concurrency: 2 })
    await t.add("A", 5)
    const first = await t.reserve(5, { requestId: "9" })
    expect(first).toHaveLength(2)
    await run(t.c.reserve(0, 30_000, 100, [], { requestId: "9" }))
    expect(await t.active("A")).toBe(0)
    expect(t.names(await t.reserve(5)).sort()).toEqual(["A0", "A1"])
  })

  it("the sweep reclaiming an expired lease frees its group's slot", async () => {
    const t = setup()
    await t.queue.setGroupLimits("A", { concurrency: 1 })
    await t.add("A", 2)
    const [held] = (await run(t.c.reserve(5, 1, 100))).jobs
    expect(held).toBeDefined()
    await new Promise((r) => setTimeout(r, 10))
    await t.queue.sweep()
    expect(await t.active("A")).toBe(0)
    // the reclaimed job runs next, at the front of its group
    expect((await t.reserve(5)).map((j) => j.id)).toEqual([held!.id])
  })
})

describe("groups: verify", () => {
  it("verify checks each group's active count (and the total) against the active set", async () => {
    const t = setup()
    await t.add("A", 3)
    await t.add("B", 2)
    await t.reserve(3)
    expect(await t.queue.verify()).toMatchObject({ violations: 0 })
    await shared.raw.hincrby(t.keys.gstate, "a\0B", 1)
    const r = await t.queue.verify()
    expect(r.lines).toEqual([
      "group-active B counts 2 active but 1 of its jobs are",
      "group-active * the groups count 4 active, 3 are",
    ])
  })
})

describe("groups: pause, rate, list, bad input", () => {
  it("a paused group's jobs wait; the others run; resume serves it again and wakes a worker", async () => {
    const t = setup()
    await t.add("A", 2)
    await t.add("B", 2)
    expect(await t.queue.pauseGroup("A")).toBe(true)
    expect(await t.queue.pauseGroup("A")).toBe(false)
    expect(t.names(await t.reserve(5))).toEqual(["B0", "B1"])
    await t.add("A", 1, 2)
    expect(await t.reserve(5)).toEqual([])
    await shared.raw.del(t.keys.marker)
    expect(await t.queue.resumeGroup("A")).toBe(true)
    expect(await shared.raw.zcard(t.keys.marker)).toBe(1)
    expect(t.names(await t.reserve(5))).toEqual(["A0", "A1", "A2"])
  })

  it("a group's rate window: at most max leased per perMs, then it is held till the window ends", async () => {
    const t = setup()
    await t.queue.setGroupLimits("A", { max: 2, perMs: 200 })
    await t.add("A", 5)
    await t.add("B", 5)
    const got = t.names(await t.reserve(6))
    expect(got.filter((n) => n.startsWith("A"))).toEqual(["A0", "A1"])
    expect(got.filter((n) => n.startsWith("B"))).toHaveLength(4)
    const r = await run(t.c.reserve(5, 30_000, 100))
    expect(t.names(r.jobs)).toEqual(["B4"])
    // the reply tells an idle worker when the held group can run again
    expect(r.nextDueMs).toBeGreaterThan(0)
    expect(r.nextDueMs).toBeLessThanOrEqual(200)
    await new Promise((res) => setTimeout(res, r.nextDueMs + 5))
    expect(t.names(await t.reserve(5))).toEqual(["A2", "A3"])
  })

  it("groups() pages through the groups with waiting, active, paused and limits", async () => {
    const t = setup()
    await t.queue.setGroupLimits({ concurrency: 3 })
    await t.queue.setGroupLimits("b", { max: 5, perMs: 1000 })
    await t.add("a", 2)
    await t.add("b", 1)
    await t.add("c", 1)
    await t.queue.pauseGroup("c")
    await t.reserve(1)
    const first = await t.queue.groups({ count: 2 })
    expect(first.defaults).toEqual({ concurrency: 3 })
    expect(first.groups).toEqual([
      { group: "a", waiting: 1, active: 1, paused: false, limits: undefined },
      { group: "b", waiting: 1, active: 0, paused: false, limits: { max: 5, perMs: 1000 } },
    ])
    const second = await t.queue.groups({ cursor: first.cursor!, count: 2 })
    expect(second.groups).toEqual([{ group: "c", waiting: 1, active: 0, paused: true, limits: undefined }])
    expect(second.cursor).toBeUndefined()
  })

  it("bad input is refused naming the field, and writes nothing", async () => {
    const t = setup()
    await t.add("A", 1)
    const before = await dumpQueue(shared.raw, t.q)
    await expect(t.queue.add("x", { group: "" })).rejects.toMatchObject({ field: "options.group" })
    await expect(t.queue.add("x", { group: "g".repeat(129) })).rejects.toMatchObject({ field: "options.group" })
    await expect(t.queue.setGroupLimits("A", { concurrency: 0 })).rejects.toMatchObject({ field: "limits.concurrency" })
    await expect(t.queue.setGroupLimits({ max: 5 })).rejects.toMatchObject({ field: "limits.max" })
    await expect(t.queue.setGroupLimits("A", {})).rejects.toMatchObject({ field: "limits" })
    await expect(t.queue.setGroupLimits("", { concurrency: 1 })).rejects.toMatchObject({ field: "group" })
    await expect(t.queue.pauseGroup("")).rejects.toMatchObject({ field: "group" })
    await expect(t.queue.groups({ count: 0 })).rejects.toMatchObject({ field: "count" })
    expect(await dumpQueue(shared.raw, t.q)).toEqual(before)
  })
})

describe("groups with priorities and the operator's calls", () => {
  it("within a group, the lowest priority first, then FIFO; changePriority moves a grouped job", async () => {
    const t = setup()
    await run(
      t.c.add([
        newJob({ payload: '"a5"', group: "A", priority: 5 }),
        newJob({ payload: '"a0"', group: "A" }),
        newJob({ payload: '"a1"', group: "A", priority: 1 }),
      ]),
    )
    const late = await t.queue.add("a9", { group: "A", priority: 9 })
    expect(await t.queue.changePriority(late, 0)).toBe("waiting")
    expect(t.names(await t.reserve(10))).toEqual(["a0", "a9", "a1", "a5"])
  })

  it("getJobs lists grouped waiting jobs; drain empties the groups and forgets them", async () => {
    const t = setup()
    await t.add("A", 2)
    await t.add("", 1)
    const page = await t.queue.getJobs("waiting")
    expect(page.jobs.map((j) => j.payload).sort()).toEqual(["-0", "A0", "A1"])
    const drained = await t.queue.drain()
    expect(drained.waiting).toBe(3)
    expect(await t.queue.groups()).toMatchObject({ groups: [] })
    expect(await t.queue.stats()).toMatchObject({ waiting: 0, groups: 0, busiestGroups: [] })
    for (const key of [t.keys.gwait, t.keys.gready, t.keys.gjob, t.keys.gcount, t.keys.gindex]) {
      expect(await shared.raw.exists(key), key).toBe(0)
    }
    expect((await t.queue.verify()).violations).toBe(0)
  })
})
