import { describe, expect, it } from "vitest"
import { type Commands, makeCommands } from "../../src/engine/calls/Commands.ts"
import { InvalidOptions } from "../../src/engine/model/Errors.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { Queue } from "../../src/index.ts"
import { onCleanup } from "../support/cleanup.ts"
import { run } from "../support/jobs.ts"
import { dumpQueue, queueNamer, redisUrl, sharedClients } from "../support/redis.ts"
import { redisNow, until, untilRedisClock } from "../support/until.ts"

const name = queueNamer("jobs-dedupe")
const shared = sharedClients()

const setup = (options: ConstructorParameters<typeof Queue>[1] = {}) => {
  const q = name()
  const queue = new Queue<number>(q, { connection: redisUrl(), ...options })
  onCleanup(() => queue.close())
  return { q, queue, keys: queueKeys(q), c: makeCommands(shared.client, queueKeys(q)) }
}

const lease = async (c: Commands, leaseMs = 5_000) => {
  const { jobs } = await run(c.reserve(1, leaseMs, 0))
  expect(jobs).toHaveLength(1)
  return jobs[0]!
}

const until_ = { dedupeKey: "order-1", dedupeUntil: "finished" } as const

describe('dedupeUntil: "finished"', () => {
  it("holds the key while the job waits, is delayed or runs, and frees it when it completes", async () => {
    const { queue, c } = setup()
    const first = await queue.add(1, until_)
    expect(await queue.add(2, until_)).toBe(first)
    const l = await lease(c)
    expect(await queue.add(3, until_)).toBe(first)
    expect(await queue.getJob(first)).toMatchObject({ state: "active", dedupeKey: "order-1" })
    expect(await run(c.complete([l]))).toEqual([true])
    const second = await queue.add(4, until_)
    expect(second).not.toBe(first)
    expect((await queue.stats()).counters.added).toBe(2)
  })

  it("frees the key when the job dies (handler failure or lost leases) or is cancelled", async () => {
    const { queue, c } = setup()
    const a = await queue.add(1, { ...until_, maxAttempts: 1 })
    const la = await lease(c)
    expect(await run(c.fail(la, { delayMs: 0, error: "{}", mode: "retry" }))).toBe("dead")
    const b = await queue.add(2, { ...until_, maxAttempts: 1 })
    expect(b).not.toBe(a)

    const lb = await lease(c, 1_000)
    await until("the lease expired (Redis clock)", async () => (await redisNow(shared.raw)) > lb.deadline)
    expect((await queue.sweep()).dead).toBe(1)
    const d = await queue.add(3, { ...until_, delayMs: 60_000 })
    expect(d).not.toBe(b)

    expect(await queue.add(4, until_)).toBe(d)
    expect(await queue.cancel(d)).toBe("delayed")
    expect(await queue.add(5, until_)).not.toBe(d)
  })

  it("a complete riding on a reserve frees the key too", async () => {
    const { queue, c } = setup()
    const a = await queue.add(1, until_)
    const l = await lease(c)
    const r = await run(c.reserve(1, 5_000, 0, [l]))
    expect(r.completed).toEqual([true])
    expect(await queue.add(2, until_)).not.toBe(a)
  })

  it("a retry keeps the key held; a TTL key is not freed by completion", async () => {
    const { queue, c } = setup()
    const a = await queue.add(1, until_)
    const la = await lease(c)
    expect(await run(c.fail(la, { delayMs: 0, error: "{}", mode: "retry" }))).toBe("retry")
    expect(await queue.add(2, until_)).toBe(a)

    const t = await queue.add(3, { dedupeKey: "ttl", dedupeTtlMs: 600_000 })
    await lease(c) // a, retried
    const lt = await lease(c)
    expect(lt.id).toBe(t)
    await run(c.complete([lt]))
    expect(await queue.add(4, { dedupeKey: "ttl" })).toBe(t)
  })

  it("works as a queue default", async () => {
    const { queue, c } = setup({ defaultJobOptions: { dedupeKey: "only", dedupeUntil: "finished" } })
    const a = await queue.add(1)
    expect(await queue.add(2)).toBe(a)
    await run(c.complete([await lease(c)]))
    const b = await queue.add(3)
    expect(b).not.toBe(a)
    // a job's own dedupeTtlMs overrides the default "until finished"
    const t = await queue.add(4, { dedupeKey: "own", dedupeTtlMs: 600_000 })
    await run(c.complete([await lease(c)])) // b
    await run(c.complete([await lease(c)])) // t
    expect(await queue.add(5, { dedupeKey: "own" })).toBe(t)
  })

  it("bad options are refused, naming the field, and nothing is written", async () => {
    const { q, queue } = setup()
    await queue.add(0)
    const before = await dumpQueue(shared.raw, q)
    const cases: Array<[unknown, string]> = [
      [{ dedupeKey: "k", dedupeUntil: "forever" }, "options.dedupeUntil"],
      [{ dedupeUntil: "finished" }, "options.dedupeUntil"],
      [{ dedupeKey: "k", dedupeUntil: "finished", dedupeTtlMs: 5 }, "options.dedupeTtlMs"],
    ]
    for (const [options, field] of cases) {
      const e = await queue.add(1, options as never).catch((x: unknown) => x)
      expect(e).toBeInstanceOf(InvalidOptions)
      expect((e as InvalidOptions).field).toBe(field)
    }
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })
})

describe("clearDedupe", () => {
  it("frees a held key (TTL or until finished) so the next add is accepted; the holder is unchanged", async () => {
    const { queue } = setup()
    const a = await queue.add(1, { dedupeKey: "t", dedupeTtlMs: 600_000 })
    const b = await queue.add(2, until_)
    expect(await queue.clearDedupe("t")).toBe(true)
    expect(await queue.clearDedupe("order-1")).toBe(true)
    expect(await queue.clearDedupe("t")).toBe(false)
    expect(await queue.clearDedupe("never")).toBe(false)
    expect(await queue.add(3, { dedupeKey: "t" })).not.toBe(a)
    const c2 = await queue.add(4, until_)
    expect(c2).not.toBe(b)
    expect(await queue.getJob(b)).toMatchObject({ state: "waiting", dedupeKey: "order-1" })
    // the old holder finishing does not free the key its successor holds now
    expect(await queue.cancel(b)).toBe("waiting")
    expect(await queue.add(5, until_)).toBe(c2)
  })

  it("a bad key is refused and nothing is written", async () => {
    const { q, queue } = setup()
    await queue.add(1, until_)
    const before = await dumpQueue(shared.raw, q)
    for (const bad of ["", 7, "x".repeat(513)]) {
      const e = await queue.clearDedupe(bad as string).catch((x: unknown) => x)
      expect(e).toBeInstanceOf(InvalidOptions)
      expect((e as InvalidOptions).field).toBe("dedupeKey")
    }
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })
})

describe("partitioned queues", () => {
  it("getJob and cancel find the job's partition; clearDedupe goes to the key's partition", async () => {
    const { queue } = setup({ partitions: 4 })
    const ids = await queue.addBulk(Array.from({ length: 8 }, (_, n) => ({ payload: n })))
    for (const [n, id] of ids.entries()) expect(await queue.getJob(id)).toMatchObject({ state: "waiting", payload: n })
    expect(await queue.cancel(ids[5]!)).toBe("waiting")
    expect(await queue.cancel(ids[5]!)).toBeUndefined()
    expect((await queue.stats()).waiting).toBe(7)
    expect(await queue.getJob("01NEVERADDED0000000000000X")).toBeUndefined()
    const held = await queue.add(100, until_)
    expect(await queue.add(101, until_)).toBe(held)
    expect(await queue.clearDedupe("order-1")).toBe(true)
    expect(await queue.add(102, until_)).not.toBe(held)
  })
})

describe("dedupeExtend (BullMQ's deduplication.extend)", () => {
  it("a duplicate add holds the key dedupeTtlMs from now again: a later add within the new TTL is still deduplicated", async () => {
    const { queue, keys } = setup()
    const ttl = { dedupeKey: "k", dedupeTtlMs: 400 } as const
    const first = await queue.add(1, ttl)
    const firstExpiry = Number(await shared.raw.zscore(keys.dedupe, "k"))
    await untilRedisClock(shared.raw, firstExpiry - 200)
    expect(await queue.add(2, { ...ttl, dedupeExtend: true })).toBe(first)
    const extended = Number(await shared.raw.zscore(keys.dedupe, "k"))
    expect(extended).toBeGreaterThanOrEqual(firstExpiry + 100)
    // past the first TTL, within the extended one: still the first job's key
    await untilRedisClock(shared.raw, firstExpiry + 20)
    expect(await queue.add(3, ttl)).toBe(first)
    // a duplicate without dedupeExtend leaves the expiry as it is
    expect(Number(await shared.raw.zscore(keys.dedupe, "k"))).toBe(extended)
    await untilRedisClock(shared.raw, extended + 20)
    expect(await queue.add(4, ttl)).not.toBe(first)
    expect((await queue.stats()).counters.added).toBe(2)
  })

  it("in addBulk, and from the queue's defaults; a key held until finished is left as it is", async () => {
    const { queue, keys } = setup({ defaultJobOptions: { dedupeExtend: true, dedupeTtlMs: 60_000, dedupeKey: "d" } })
    const first = await queue.add(1)
    const before = Number(await shared.raw.zscore(keys.dedupe, "d"))
    await untilRedisClock(shared.raw, before - 60_000 + 5)
    expect(await queue.addBulk([{ payload: 2 }, { payload: 3 }])).toEqual([first, first])
    expect(Number(await shared.raw.zscore(keys.dedupe, "d"))).toBeGreaterThan(before)
    const held = await queue.add(5, { dedupeKey: "f", dedupeUntil: "finished" })
    expect(await queue.add(6, { dedupeKey: "f", dedupeTtlMs: 10, dedupeExtend: true })).toBe(held)
    expect(await shared.raw.zscore(keys.dedupe, "f")).toBe("inf")
  })

  it("bad dedupeExtend options are refused, naming the field, and nothing is written", async () => {
    const { q, queue } = setup()
    const before = await dumpQueue(shared.raw, q)
    const refused = async (options: object) => {
      const e = await queue.add(1, options as never).catch((x: unknown) => x)
      expect(e).toBeInstanceOf(InvalidOptions)
      expect(e).toMatchObject({ field: "options.dedupeExtend" })
    }
    await refused({ dedupeKey: "k", dedupeExtend: "yes" })
    await refused({ dedupeExtend: true })
    await refused({ dedupeKey: "k", dedupeUntil: "finished", dedupeExtend: true })
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })
})

describe("dedupeReplace (BullMQ's debounce replace)", () => {
  const replace = { dedupeKey: "r", dedupeReplace: true } as const

  it("a duplicate replaces the payload of the waiting holder, which runs once with the latest; an updated event", async () => {
    const { queue, keys, c } = setup()
    const first = await queue.add(1, { dedupeKey: "r" })
    expect(await queue.add(2, replace)).toBe(first)
    expect(await queue.add(3, replace)).toBe(first)
    expect((await queue.getJob(first))?.payload).toBe(3)
    expect((await queue.stats()).waiting).toBe(1)
    const events = await shared.raw.xrange(keys.events, "-", "+")
    expect(events.filter(([, f]) => f.includes("updated"))).toHaveLength(2)
    const l = await lease(c)
    expect(l.id).toBe(first)
    expect(JSON.parse(l.payload)).toBe(3)
  })

  it("a holder waiting in a group or at a priority is found and replaced too", async () => {
    const { queue } = setup()
    const grouped = await queue.add(1, { dedupeKey: "g", group: "t1", priority: 3 })
    const prioritized = await queue.add(1, { dedupeKey: "p", priority: 5 })
    expect(await queue.add(2, { dedupeKey: "g", dedupeReplace: true, group: "t1" })).toBe(grouped)
    expect(await queue.add(2, { dedupeKey: "p", dedupeReplace: true })).toBe(prioritized)
    expect((await queue.getJob(grouped))?.payload).toBe(2)
    expect((await queue.getJob(prioritized))?.payload).toBe(2)
  })

  it("a delayed holder takes the payload and the new delay (from now); without a delay it keeps its due time", async () => {
    const { queue, keys } = setup()
    const first = await queue.add(1, { dedupeKey: "r", delayMs: 60_000 })
    const due = Number(await shared.raw.zscore(keys.delayed, first))
    expect(await queue.add(2, { ...replace, delayMs: 600_000 })).toBe(first)
    const later = Number(await shared.raw.zscore(keys.delayed, first))
    expect(later).toBeGreaterThanOrEqual(due + 500_000)
    expect(await queue.add(3, replace)).toBe(first)
    expect(Number(await shared.raw.zscore(keys.delayed, first))).toBe(later)
    expect(await queue.getJob(first)).toMatchObject({ state: "delayed", payload: 3 })
  })

  it("an active holder is not changed: the duplicate is answered with its id and nothing is written for it", async () => {
    const { q, queue, c } = setup()
    const first = await queue.add(1, { dedupeKey: "r", dedupeUntil: "finished" })
    await lease(c)
    const before = await dumpQueue(shared.raw, q)
    expect(await queue.add(2, { ...replace, dedupeUntil: "finished" })).toBe(first)
    const after = await dumpQueue(shared.raw, q)
    expect((await queue.getJob(first))?.payload).toBe(1)
    // only the call's receipt (its answer: the holder's id) and its `deduplicated` event: not the job's data
    const changed = Object.keys(after).filter((k) => after[k] !== before[k])
    expect(changed.sort()).toEqual(["events", "receipts", "receiptsAt"])
  })

  it("bad dedupeReplace options are refused, naming the field, and nothing is written", async () => {
    const { q, queue } = setup()
    const before = await dumpQueue(shared.raw, q)
    for (const options of [{ dedupeKey: "k", dedupeReplace: 1 }, { dedupeReplace: true }]) {
      await expect(queue.add(1, options as never)).rejects.toMatchObject({
        _tag: "InvalidOptions",
        field: "options.dedupeReplace",
      })
    }
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })
})
