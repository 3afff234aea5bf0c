/**
 * A group's maximum size (BullMQ Pro `maxSize`), against real Redis: `setGroupLimits(group,
 * { maxSize })` or the default limits; an add past it is refused whole with `GroupFull`
 * naming the group and the sizes, and writes nothing (an `addBulk`: none of its jobs); a job
 * that adds nothing (a held dedupe key, an id already taken) is not refused; a job leaving
 * the group's waiting jobs makes room.
 */
import { Context, Effect } from "effect"
import { describe, expect, it } from "vitest"
import { LeaseQueue } from "../../src/effect.ts"
import { GroupFull } from "../../src/index.ts"
import { dumpQueue, queueNamer, redisUrl, sharedClients } from "../support/redis.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("groups-max-size")
const shared = sharedClients()

const refusal = (e: unknown) => e

describe("a group's maxSize", () => {
  it("an add past it is refused with GroupFull naming the group and sizes, writing nothing; other groups go on", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    await queue.setGroupLimits("t1", { maxSize: 2 })
    await queue.add(1, { group: "t1" })
    await queue.add(2, { group: "t1", priority: 3 })
    const before = await dumpQueue(shared.raw, q)
    const e = await queue.add(3, { group: "t1" }).catch(refusal)
    expect(e).toBeInstanceOf(GroupFull)
    expect(e).toMatchObject({ _tag: "GroupFull", group: "t1", maxSize: 2, size: 2 })
    expect((e as Error).message).toContain('group "t1" is full')
    expect((e as Error).message).toContain("maxSize is 2")
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
    // a delayed add counts too: it would join the group
    await expect(queue.add(4, { group: "t1", delayMs: 60_000 })).rejects.toBeInstanceOf(GroupFull)
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
    // another group and ungrouped jobs are not bounded by t1's
    await queue.add(5, { group: "t2" })
    await queue.add(6)
    expect((await queue.stats()).waiting).toBe(4)
    expect((await queue.groups()).groups.find((g) => g.group === "t1")?.limits).toEqual({ maxSize: 2 })
  })

  it("addBulk is all or nothing: one group past its maxSize refuses every job of the call", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    await queue.setGroupLimits("t1", { maxSize: 3, concurrency: 1 })
    await queue.add(0, { group: "t1" })
    const before = await dumpQueue(shared.raw, q)
    const bulk = [
      { payload: 1, options: { group: "t2" } },
      { payload: 2, options: { group: "t1" } },
      { payload: 3 },
      { payload: 4, options: { group: "t1" } },
      { payload: 5, options: { group: "t1" } },
    ]
    await expect(queue.addBulk(bulk)).rejects.toMatchObject({ _tag: "GroupFull", group: "t1", maxSize: 3, size: 1 })
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
    // up to the size: it fits
    expect(await queue.addBulk(bulk.slice(0, 4))).toHaveLength(4)
    expect((await queue.stats()).waiting).toBe(5)
  })

  it("the default limits' maxSize bounds every group without its own; a group's own limits replace it", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    await queue.setGroupLimits({ maxSize: 1 })
    await queue.setGroupLimits("big", { concurrency: 5 })
    await queue.add(1, { group: "a" })
    await expect(queue.add(2, { group: "a" })).rejects.toMatchObject({ group: "a", maxSize: 1, size: 1 })
    await queue.add(3, { group: "b" })
    await queue.add(4, { group: "big" })
    await queue.add(5, { group: "big" })
    expect((await queue.groups()).defaults).toEqual({ maxSize: 1 })
    await queue.setGroupLimits(null)
    await queue.add(6, { group: "a" })
    expect((await queue.stats()).waiting).toBe(5)
  })

  it("a job leased out of the group makes room; a job that adds nothing (held dedupe key, taken id) is answered, not refused", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    await queue.setGroupLimits("t1", { maxSize: 1 })
    const first = await queue.add(1, { group: "t1", dedupeKey: "k", id: "job-1" })
    expect(await queue.add(9, { group: "t1", dedupeKey: "k" })).toBe(first)
    expect(await queue.add(9, { group: "t1", id: "job-1" })).toBe(first)
    await expect(queue.add(2, { group: "t1" })).rejects.toBeInstanceOf(GroupFull)
    const [leased] = await queue.reserve({ count: 1 })
    expect(leased?.id).toBe(first)
    await queue.add(2, { group: "t1" })
    expect((await queue.stats()).waiting).toBe(1)
  })

  it("a bad maxSize is refused naming the field, and changes nothing", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    for (const bad of [0, 1.5, "2", -1]) {
      await expect(queue.setGroupLimits("t1", { maxSize: bad as number })).rejects.toMatchObject({
        _tag: "InvalidOptions",
        field: "limits.maxSize",
      })
    }
    expect((await queue.groups()).groups).toEqual([])
  })
})

class Jobs extends Context.Service<Jobs, LeaseQueue.Service<number>>()("test/GroupsMaxSizeJobs") {}

describe("the Effect face", () => {
  it("fails add with GroupFull, catchable by its tag", async () => {
    const q = name()
    const program = Effect.gen(function* () {
      const jobs = yield* Jobs
      yield* jobs.setGroupLimits("t1", { maxSize: 1 })
      yield* jobs.add(1, { group: "t1" })
      return yield* jobs.add(2, { group: "t1" }).pipe(
        Effect.map(() => "added"),
        Effect.catchTag("GroupFull", (e) => Effect.succeed(`${e.group} ${e.size}/${e.maxSize}`)),
      )
    })
    const out = await Effect.runPromise(
      program.pipe(Effect.provide(LeaseQueue.layer(Jobs, { name: q, connection: redisUrl() }))),
    )
    expect(out).toBe("t1 1/1")
  })
})
