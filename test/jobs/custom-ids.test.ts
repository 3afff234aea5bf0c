import { describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { decodeEntry } from "../../src/engine/events/EventDecode.ts"
import { InvalidOptions } from "../../src/engine/model/Errors.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { Queue } from "../../src/index.ts"
import { onCleanup } from "../support/cleanup.ts"
import { run } from "../support/jobs.ts"
import { dumpQueue, queueNamer, redisUrl, sharedClients } from "../support/redis.ts"

const name = queueNamer("custom-ids")
const shared = sharedClients()

const setup = (options: ConstructorParameters<typeof Queue>[1] = {}) => {
  const q = name()
  const queue = new Queue<number>(q, { connection: redisUrl(), ...options })
  onCleanup(() => queue.close())
  const keys = queueKeys(q)
  return { q, queue, keys, c: makeCommands(shared.client, keys) }
}

const events = async (key: string) =>
  (await shared.raw.xrange(key, "-", "+")).flatMap(([id, fields]) => decodeEntry("q", id, fields))

describe("custom job ids", () => {
  it("an id added twice, and again after it completed (retained by default), runs once", async () => {
    const { queue, c } = setup()
    const id = "order:42.v1"
    expect(await queue.add(1, { id })).toBe(id)
    expect(await queue.add(2, { id })).toBe(id)
    const { jobs } = await run(c.reserve(10, 5_000, 0))
    expect(jobs.map((j) => j.id)).toEqual([id])
    expect(await queue.add(3, { id })).toBe(id)
    expect(await queue.getJob(id)).toMatchObject({ state: "active", payload: 1 })
    expect(await run(c.complete([jobs[0]!]))).toEqual([true])
    expect(await queue.add(4, { id })).toBe(id)
    expect((await run(c.reserve(10, 5_000, 0))).jobs).toEqual([])
    expect(await queue.getJob(id)).toMatchObject({ state: "completed" })
    expect((await queue.stats()).counters.added).toBe(1)
  })

  it("an id held by a retained cancelled job writes nothing", async () => {
    const { queue } = setup()
    expect(await queue.add(1, { id: "c" })).toBe("c")
    expect(await queue.cancel("c")).toBe("waiting")
    expect(await queue.getJob("c")).toMatchObject({ state: "cancelled" })
    expect(await queue.add(2, { id: "c" })).toBe("c")
    expect((await queue.stats()).waiting).toBe(0)
    expect((await queue.stats()).counters.added).toBe(1)
  })

  it("an id held by a delayed or dead job writes nothing; a cancelled job not retained frees it", async () => {
    const { queue, c } = setup()
    await queue.setRetention({ cancelled: { count: 0 } })
    expect(await queue.add(1, { id: "d", delayMs: 60_000 })).toBe("d")
    expect(await queue.add(2, { id: "d" })).toBe("d")
    expect(await queue.cancel("d")).toBe("delayed")
    // a cancelled job not retained is gone (getJob answers nothing): its id is free again
    expect(await queue.getJob("d")).toBeUndefined()
    expect(await queue.add(3, { id: "d", delayMs: 60_000 })).toBe("d")
    await queue.add(4, { id: "x", maxAttempts: 1 })
    const { jobs } = await run(c.reserve(1, 5_000, 0))
    expect(jobs[0]).toMatchObject({ id: "x", maxAttempts: 1 })
    expect(await run(c.fail(jobs[0]!, { delayMs: 0, error: "{}", mode: "retry" }))).toBe("dead")
    expect(await queue.add(5, { id: "x" })).toBe("x")
    expect((await run(c.reserve(10, 5_000, 0))).jobs).toEqual([])
    expect((await queue.stats()).counters.added).toBe(3)
  })

  it("two copies of one id in one addBulk: the first wins", async () => {
    const { queue, c } = setup()
    const ids = await queue.addBulk([
      { payload: 1, options: { id: "a" } },
      { payload: 2, options: { id: "a" } },
      { payload: 3 },
    ])
    expect(ids.slice(0, 2)).toEqual(["a", "a"])
    const { jobs } = await run(c.reserve(10, 5_000, 0))
    expect(jobs.map((j) => j.id)).toEqual(ids.slice(0, 1).concat(ids[2]!))
    expect(await queue.getJob("a")).toMatchObject({ payload: 1 })
  })

  it("a deduplicated add records one deduplicated event naming the holders (ids and dedupe keys)", async () => {
    const { queue, keys } = setup()
    const k = await queue.add(1, { dedupeKey: "k" })
    await queue.add(2, { id: "held:1.x" })
    await queue.addBulk([
      { payload: 3, options: { id: "held:1.x" } },
      { payload: 4, options: { dedupeKey: "k" } },
      { payload: 5 },
    ])
    const raw = await shared.raw.xrange(keys.events, "-", "+")
    expect(raw.filter(([, f]) => f[1] === "deduplicated")).toHaveLength(1)
    const dd = (await events(keys.events)).filter((e) => e.kind === "deduplicated").map((e) => e.jobId)
    expect(dd).toEqual(["held:1.x", k])
  })

  it("refuses a bad id before anything is written, naming options.id", async () => {
    const { q, queue } = setup()
    await queue.add(0, { id: "fine" })
    const before = await dumpQueue(shared.raw, q)
    for (const id of ["", "a|b", "a,b", "a b", "x".repeat(129), 7]) {
      const e = await queue.add(1, { id: id as string }).catch((x: unknown) => x)
      expect(e).toBeInstanceOf(InvalidOptions)
      expect(e).toMatchObject({ field: "options.id", value: id })
    }
    const bulk = await queue
      .addBulk([
        { payload: 1, options: { id: "ok" } },
        { payload: 2, options: { id: "no|pe" } },
      ])
      .catch((x: unknown) => x)
    expect(bulk).toMatchObject({ field: "jobs[1].options.id" })
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })

  it("on a partitioned queue an id finds its partition: added once, found and cancelled by id", async () => {
    const { queue } = setup({ partitions: 4 })
    for (let i = 0; i < 8; i++) expect(await queue.add(i, { id: "p:1" })).toBe("p:1")
    expect((await queue.stats()).waiting).toBe(1)
    expect(await queue.getJob("p:1")).toMatchObject({ state: "waiting", payload: 0 })
    expect(await queue.cancel("p:1")).toBe("waiting")
  })
})
