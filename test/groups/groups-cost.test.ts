/**
 * What groups cost per call (issue 33 point 4): without group limits a turn takes up to 4
 * jobs of a group, so a 16-job reserve over many groups serves 4 of them, not 16 (with
 * limits, one each as before); a group's waiting jobs are counted when asked, not kept in a
 * count on every move (no `gcount` written), and the counts read right after a sweep
 * reclaimed a crashed worker's leases, or with more groups than stats looks at, are right.
 */
import { describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { newJob, run } from "../support/jobs.ts"
import { monitorOf } from "../support/monitor.ts"
import { queueNamer, redisUrl, sharedClients } from "../support/redis.ts"
import { untilRedisClock } from "../support/until.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("groups-cost")
const shared = sharedClients()

const setup = () => {
  const q = name()
  const keys = queueKeys(q)
  const c = makeCommands(shared.client, keys)
  const queue = useQueue<string>(q)
  /** `perGroup` jobs in each of `groups` groups g00, g01, … (one add call per group, in that order). */
  const fill = async (groups: number, perGroup: number) => {
    for (let g = 0; g < groups; g++) {
      const group = `g${String(g).padStart(2, "0")}`
      await run(
        c.add(Array.from({ length: perGroup }, (_, i) => newJob({ payload: JSON.stringify(`${group}.${i}`), group }))),
      )
    }
  }
  const reserve = async (count: number, leaseMs = 30_000) => (await run(c.reserve(count, leaseMs, 100))).jobs
  const names = (jobs: ReadonlyArray<{ payload: string }>) => jobs.map((j) => JSON.parse(j.payload) as string)
  const groupKeys = new Set([keys.gcount, keys.gwait, keys.gready, keys.gheld, keys.gjob, keys.gstate, keys.gindex])
  /** The commands scripts ran on the groups' keys while `action` ran, as "<COMMAND> <key's last part>" (MONITOR). */
  const groupCalls = async (action: () => Promise<unknown>) => {
    const monitor = await monitorOf(redisUrl())
    await monitor.caughtUp()
    const from = monitor.seen.length
    await action()
    await monitor.caughtUp()
    return monitor.seen
      .slice(from)
      .filter((m) => m.source === "lua" && groupKeys.has(m.args[1] ?? ""))
      .map((m) => `${m.args[0]?.toUpperCase()} ${m.args[1]?.slice(m.args[1].lastIndexOf(":") + 1)}`)
  }
  return { q, keys, c, queue, fill, reserve, names, groupCalls }
}

const turn = (group: string, from: number) => [0, 1, 2, 3].map((i) => `${group}.${from + i}`)

describe("groups: a turn without group limits", () => {
  it("a 16-job reserve over 20 groups takes 4 jobs of each of 4 groups, in turn; the next call the next 4", async () => {
    const t = setup()
    await t.fill(20, 8)
    expect(t.names(await t.reserve(16))).toEqual([
      ...turn("g00", 0),
      ...turn("g01", 0),
      ...turn("g02", 0),
      ...turn("g03", 0),
    ])
    expect(t.names(await t.reserve(16))).toEqual([
      ...turn("g04", 0),
      ...turn("g05", 0),
      ...turn("g06", 0),
      ...turn("g07", 0),
    ])
    expect((await t.queue.verify()).violations).toBe(0)
  })

  it("with a group limit set (a default concurrency), a 16-job reserve still takes one job of each of 16 groups", async () => {
    const t = setup()
    await t.queue.setGroupLimits({ concurrency: 100 })
    await t.fill(20, 8)
    expect(t.names(await t.reserve(16))).toEqual(
      Array.from({ length: 16 }, (_, g) => `g${String(g).padStart(2, "0")}.0`),
    )
  })

  it("a 16-job reserve over 1,000 groups runs 3 commands per group served on the groups' keys, 4 groups (was 16)", async () => {
    const t = setup()
    // 4 jobs in each of 1,000 groups
    await run(t.c.add(Array.from({ length: 4000 }, (_, i) => newJob({ payload: `${i}`, group: `tenant-${i % 1000}` }))))
    const ran = await t.groupCalls(async () => expect(await t.reserve(16)).toHaveLength(16))
    const serve = ["ZRANGE gwait", "ZREMRANGEBYLEX gwait", "HINCRBY gstate"]
    expect(ran).toEqual([
      "EXISTS gjob", // groups_used
      "ZRANGE gheld", // group_unhold
      "HMGET gstate", // group_limited: none
      "ZRANGE gready", // the round's 4 participants
      "ZRANGE gready", // the highest turn
      ...serve, // 4 jobs of each of the 4 groups
      ...serve,
      ...serve,
      ...serve,
      "ZREM gready", // each group emptied (4 jobs each): out of the round robin
      "ZCARD gready",
    ])
  })
})

describe("groups: an add without group limits", () => {
  it("an add of 100 jobs in 100 groups makes them ready with one command per key, not 5 per group", async () => {
    const t = setup()
    await t.fill(1, 1) // the groups' state has begun
    await t.queue.pauseGroup("g-paused")
    const ran = await t.groupCalls(() =>
      run(
        t.c.add([
          ...Array.from({ length: 99 }, (_, i) =>
            newJob({ payload: `"${i}"`, group: `h${String(i).padStart(2, "0")}` }),
          ),
          newJob({ payload: '"p"', group: "g-paused" }),
        ]),
      ),
    )
    expect(ran).toEqual([
      "HMGET gstate", // the groups' limits: no maxSize (add_group_full)
      "HINCRBY gstate", // the order sequence
      "ZADD gwait",
      "HSET gjob",
      "HMGET gstate", // group_limited: none
      "ZADD gindex",
      "HMGET gstate", // which are paused
      "ZRANGE gready", // the highest turn
      "ZREM gheld",
      "ZADD gready", // the 99 not paused, at the back in the call's order
    ])
    const order = await shared.raw.zrange(t.keys.gready, "0", "-1")
    expect(order).toEqual(["g00", ...Array.from({ length: 99 }, (_, i) => `h${String(i).padStart(2, "0")}`)])
    expect((await t.queue.verify()).violations).toBe(0)
  })
})

describe("groups: a group's end without group limits", () => {
  it("the completion of a group's last job drops the group in 5 commands once it is found out of the round robin (was 8)", async () => {
    const t = setup()
    await t.fill(1, 1)
    const [job] = await t.reserve(1)
    const ran = await t.groupCalls(async () =>
      expect(await run(t.c.complete([{ id: job!.id, token: job!.token, result: "" }]))).toEqual([true]),
    )
    expect(ran).toEqual([
      "EXISTS gjob", // groups_used
      "HMGET gjob", // the jobs' groups
      "HMGET gstate", // group_limited: none
      "HINCRBY gstate", // its active count, now 0
      "ZSCORE gready", // out of the round robin (its last job was taken)
      "HGET gstate", // not paused
      "ZREM gheld",
      "ZRANGE gwait", // nothing waiting
      "ZREM gindex", // so it is dropped
      "HDEL gstate",
      "ZCARD gwait", // complete's drained check
    ])
    expect(await t.queue.groups()).toMatchObject({ groups: [] })
    expect((await t.queue.verify()).violations).toBe(0)
  })

  it("a paused group emptied stays listed; resumed with a job waiting, it runs again", async () => {
    const t = setup()
    await t.fill(1, 2)
    const [job] = await t.reserve(1)
    expect(await t.queue.pauseGroup("g00")).toBe(true)
    await run(t.c.complete([{ id: job!.id, token: job!.token, result: "" }]))
    expect((await t.queue.groups()).groups.map((g) => [g.group, g.waiting, g.active, g.paused])).toEqual([
      ["g00", 1, 0, true],
    ])
    expect(await t.reserve(4)).toHaveLength(0)
    expect(await t.queue.resumeGroup("g00")).toBe(true)
    expect(t.names(await t.reserve(4))).toEqual(["g00.1"])
  })
})

describe("groups: waiting counts are read when asked", () => {
  it("no per-group count is written: gcount stays absent through add, reserve, complete, fail and cancel", async () => {
    const t = setup()
    await t.fill(3, 4)
    // 2 of each group; g00's first completes, its second is retried (waiting again), g01's first cancelled
    const [a, b, c] = await t.reserve(6)
    await run(t.c.complete([{ id: a!.id, token: a!.token, result: "" }]))
    await run(t.c.fail({ id: b!.id, token: b!.token }, { delayMs: 0, error: "{}", mode: "retry" }))
    expect(await t.queue.cancel(c!.id)).toBe("active")
    expect(await shared.raw.exists(t.keys.gcount)).toBe(0)
    const page = await t.queue.groups()
    expect(page.groups.map((g) => [g.group, g.waiting])).toEqual([
      ["g00", 3],
      ["g01", 2],
      ["g02", 2],
    ])
    expect((await t.queue.verify()).violations).toBe(0)
  })

  it("right after a sweep reclaims a crashed worker's leases, groups() and busiestGroups count them waiting again", async () => {
    const t = setup()
    await t.fill(2, 5)
    const leased = await t.reserve(8, 1)
    expect(leased).toHaveLength(8)
    expect((await t.queue.stats()).busiestGroups).toEqual([
      { group: "g00", waiting: 1 },
      { group: "g01", waiting: 1 },
    ])
    await untilRedisClock(shared.raw, Math.max(...leased.map((j) => j.deadline)) + 1)
    await run(t.c.sweep(100))
    const stats = await t.queue.stats()
    expect(stats).toMatchObject({ waiting: 10, active: 0 })
    expect(stats.busiestGroups).toEqual([
      { group: "g00", waiting: 5 },
      { group: "g01", waiting: 5 },
    ])
    expect((await t.queue.groups()).groups.map((g) => [g.group, g.waiting, g.active])).toEqual([
      ["g00", 5, 0],
      ["g01", 5, 0],
    ])
  })

  it("with more groups than stats looks at (49), a group holding most of the backlog is still the busiest", async () => {
    const t = setup()
    await t.fill(60, 1)
    await run(t.c.add(Array.from({ length: 200 }, (_, i) => newJob({ payload: `${i}`, group: "zz-big" }))))
    const stats = await t.queue.stats()
    expect(stats.groups).toBe(61)
    expect(stats.busiestGroups[0]).toEqual({ group: "zz-big", waiting: 200 })
  })
})
