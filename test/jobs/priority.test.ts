/**
 * Priorities, lifo and changePriority on real Redis: lower runs first, FIFO within a
 * priority; a job released, reclaimed by the sweep, retried after a failure or from dead
 * keeps its priority; a partitioned queue orders each partition; bad input writes nothing.
 */
import { describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { partitionKeys, type QueueKeys, queueKeys } from "../../src/engine/model/Keys.ts"
import { JobNotWaiting, type Queue } from "../../src/index.ts"
import { run } from "../support/jobs.ts"
import { dumpQueue, queueNamer, sharedClients } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("priority")
const shared = sharedClients()

/** A queue (Promise face) and the script commands on its keys. */
const setup = (partitions?: number) => {
  const q = name()
  const queue = useQueue<string>(q, partitions ? { partitions } : {})
  return { q, queue, c: makeCommands(shared.client, queueKeys(q)) }
}

/** Lease up to `count` jobs from the queue of `c`: their payloads and leases, in the order reserve handed them out. */
const take = async (c: ReturnType<typeof makeCommands>, count: number, leaseMs = 30_000) => {
  const { jobs } = await run(c.reserve(count, leaseMs, 0))
  return { names: jobs.map((j) => JSON.parse(j.payload) as string), jobs }
}

/** Add jobs named `names`, each with `options`, one call each (in order). */
const addAll = async (queue: Queue<string>, names: ReadonlyArray<string>, options: object = {}) => {
  const ids: string[] = []
  for (const n of names) ids.push(await queue.add(n, options))
  return ids
}

describe("priority", () => {
  it("with 10,000 jobs waiting at priority 5, a job added at priority 1 is leased by the next reserve", async () => {
    const { queue, c } = setup()
    await queue.addBulk(Array.from({ length: 10_000 }, (_, i) => ({ payload: `p5-${i}`, options: { priority: 5 } })))
    await queue.add("urgent", { priority: 1 })
    expect((await take(c, 1)).names).toEqual(["urgent"])
    expect((await take(c, 2)).names).toEqual(["p5-0", "p5-1"])
    expect((await queue.stats()).waiting).toBe(9_998)
  })

  it("lower runs first, priority 0 (the default) before all; FIFO within a priority, within one call too", async () => {
    const { queue, c } = setup()
    await queue.addBulk([
      { payload: "3a", options: { priority: 3 } },
      { payload: "0a" },
      { payload: "3b", options: { priority: 3 } },
      { payload: "1a", options: { priority: 1 } },
      { payload: "0b", options: { priority: 0 } },
      { payload: "1_000_000", options: { priority: 1_000_000 } },
      { payload: "3c", options: { priority: 3 } },
    ])
    expect((await take(c, 3)).names).toEqual(["0a", "0b", "1a"])
    expect((await take(c, 10)).names).toEqual(["3a", "3b", "3c", "1_000_000"])
  })

  it("lifo puts a job at the front of its priority; getJob shows the priority", async () => {
    const { queue, c } = setup()
    await addAll(queue, ["2a", "2b"], { priority: 2 })
    await addAll(queue, ["0a"])
    const id = await queue.add("2-front", { priority: 2, lifo: true })
    await queue.add("0-front", { lifo: true })
    expect((await queue.getJob(id))?.priority).toBe(2)
    expect((await queue.getJob(await queue.add("plain")))?.priority).toBe(0)
    expect((await take(c, 10)).names).toEqual(["0-front", "0a", "plain", "2-front", "2a", "2b"])
  })

  it("changePriority moves a waiting job to the back of its new priority; a delayed one gets it when due", async () => {
    const { queue, c } = setup()
    const [a, b] = await addAll(queue, ["a5", "b5", "c5"], { priority: 5 })
    const [z] = await addAll(queue, ["z0", "y0"])
    await addAll(queue, ["d1"], { priority: 1 })
    expect(await queue.changePriority(b!, 1)).toBe("waiting")
    expect(await queue.changePriority(z!, 7)).toBe("waiting")
    expect(await queue.changePriority(a!, 0)).toBe("waiting")
    // the same priority again (a re-sent call) keeps the job where it is
    expect(await queue.changePriority(b!, 1)).toBe("waiting")
    expect((await queue.getJob(b!))?.priority).toBe(1)
    expect((await take(c, 10)).names).toEqual(["y0", "a5", "d1", "b5", "c5", "z0"])

    const later = await queue.add("later", { priority: 9, delayMs: 1 })
    await addAll(queue, ["e3"], { priority: 3 })
    expect(await queue.changePriority(later, 2)).toBe("delayed")
    await until("the delayed job is due", async () => (await run(c.sweep(100))).promoted > 0)
    expect((await take(c, 10)).names).toEqual(["later", "e3"])
  })

  it("changePriority with lifo moves a waiting job to the front of its new priority, or of its own; a delayed one to the back when due", async () => {
    const { queue, c } = setup()
    const [, , c5] = await addAll(queue, ["a5", "b5", "c5"], { priority: 5 })
    const [, y0] = await addAll(queue, ["x0", "y0"])
    const [d3] = await addAll(queue, ["d3", "e3"], { priority: 3 })
    // to the front of another priority
    expect(await queue.changePriority(c5!, 3, { lifo: true })).toBe("waiting")
    // to the front of its own priority (without lifo it would keep its place)
    expect(await queue.changePriority(y0!, 0, { lifo: true })).toBe("waiting")
    // lifo: false is the default: the back
    expect(await queue.changePriority(d3!, 5, { lifo: false })).toBe("waiting")
    expect((await queue.getJob(c5!))?.priority).toBe(3)
    expect((await take(c, 10)).names).toEqual(["y0", "x0", "c5", "e3", "a5", "b5", "d3"])

    const later = await queue.add("later", { priority: 9, delayMs: 1 })
    await addAll(queue, ["f2"], { priority: 2 })
    expect(await queue.changePriority(later, 2, { lifo: true })).toBe("delayed")
    await until("the delayed job is due", async () => (await run(c.sweep(100))).promoted > 0)
    expect((await take(c, 10)).names).toEqual(["f2", "later"])
  })

  it("changePriority with lifo on a grouped job: the front of its priority within its group", async () => {
    const { queue, c } = setup()
    const [, g2] = await addAll(queue, ["g1", "g2", "g3"], { group: "t1", priority: 4 })
    expect(await queue.changePriority(g2!, 4, { lifo: true })).toBe("waiting")
    expect((await take(c, 10)).names).toEqual(["g2", "g1", "g3"])
  })

  it("changePriority refuses bad options naming the field, writing nothing", async () => {
    const { q, queue } = setup()
    const id = await queue.add("x", { priority: 4 })
    const before = await dumpQueue(shared.raw, q)
    await expect(queue.changePriority(id, 1, { lifo: "yes" } as never)).rejects.toMatchObject({
      _tag: "InvalidOptions",
      field: "options.lifo",
      value: "yes",
    })
    await expect(queue.changePriority(id, 1, { front: true } as never)).rejects.toMatchObject({
      field: "options.front",
    })
    await expect(queue.changePriority(id, 1, 3 as never)).rejects.toMatchObject({ field: "options" })
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })

  it("changePriority refuses a job that is not waiting (JobNotWaiting, naming its state) and bad input, writing nothing", async () => {
    const { q, queue, c } = setup()
    const id = await queue.add("x", { priority: 4 })
    await take(c, 1)
    const before = await dumpQueue(shared.raw, q)
    await expect(queue.changePriority(id, 1)).rejects.toMatchObject({ _tag: "JobNotWaiting", state: "active" })
    await expect(queue.changePriority("nope", 1)).rejects.toBeInstanceOf(JobNotWaiting)
    await expect(queue.changePriority("nope", 1)).rejects.toMatchObject({ state: "missing" })
    for (const bad of [-1, 1.5, 1_000_001, "2", undefined]) {
      await expect(queue.changePriority(id, bad as number)).rejects.toMatchObject({
        _tag: "InvalidOptions",
        field: "priority",
      })
    }
    await expect(queue.changePriority("", 1)).rejects.toMatchObject({ _tag: "InvalidOptions", field: "id" })
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })

  it("add refuses a bad priority or lifo, naming the field, and writes nothing (a bulk: none of it)", async () => {
    const { q, queue } = setup()
    await queue.add("seed", { priority: 3 })
    const before = await dumpQueue(shared.raw, q)
    for (const bad of [-1, 0.5, 1_000_001, "1", Number.NaN]) {
      await expect(queue.add("x", { priority: bad as number })).rejects.toMatchObject({
        _tag: "InvalidOptions",
        field: "options.priority",
      })
    }
    await expect(queue.add("x", { lifo: "yes" as unknown as boolean })).rejects.toMatchObject({
      field: "options.lifo",
    })
    await expect(
      queue.addBulk([
        { payload: "ok", options: { priority: 1 } },
        { payload: "bad", options: { priority: -5 } },
      ]),
    ).rejects.toMatchObject({ field: "jobs[1].options.priority", value: -5 })
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })
})

describe("the reads cover every priority", () => {
  it("stats, verify and cancel see the jobs of every priority as waiting", async () => {
    const { queue, c } = setup()
    await addAll(queue, ["a", "b"])
    const [x] = await addAll(queue, ["x", "y"], { priority: 4 })
    const stats = await queue.stats()
    expect(stats.waiting).toBe(4)
    expect(await queue.verify({ pageSize: 1 })).toEqual({ violations: 0, jobs: 4, lines: [] })
    expect(await queue.cancel(x!)).toBe("waiting")
    expect((await take(c, 10)).names).toEqual(["a", "b", "y"])
    // a priority left without its job is an orphan field
    await shared.raw.hset(queueKeys(queue.name).priority, "ghost", "3")
    expect(await queue.verify()).toMatchObject({
      violations: 1,
      lines: ["orphan-field ghost has priority but no payload"],
    })
  })
})

describe("a job keeps its priority when it becomes ready again", () => {
  /** Jobs z (priority 0), x then a (priority 3), b (priority 5); x leased alone. */
  const leasedX = async (leaseMs = 30_000) => {
    const s = setup()
    await addAll(s.queue, ["x", "a"], { priority: 3 })
    await addAll(s.queue, ["b"], { priority: 5 })
    const { jobs } = await take(s.c, 1, leaseMs)
    await addAll(s.queue, ["z"])
    return { ...s, x: jobs[0]! }
  }

  it("released: to the front of its priority (after priority 0, before the others of 3)", async () => {
    const { c, x } = await leasedX()
    expect(await run(c.release([{ id: x.id, token: x.token }]))).toEqual([true])
    expect((await take(c, 10)).names).toEqual(["z", "x", "a", "b"])
  })

  it("lost to a sweep: to the front of its priority", async () => {
    const { c } = await leasedX(20)
    await until("x's lease is reclaimed", async () => (await run(c.sweep(100))).reclaimed === 1)
    expect((await take(c, 10)).names).toEqual(["z", "x", "a", "b"])
  })

  it("failed and retried: to the back of its priority; retried from dead: likewise", async () => {
    const { c, x } = await leasedX()
    expect(await run(c.fail({ id: x.id, token: x.token }, { delayMs: 0, error: "{}", mode: "retry" }))).toBe("retry")
    const first = await take(c, 2)
    expect(first.names).toEqual(["z", "a"])
    const dead = first.jobs[1]!
    expect(await run(c.fail({ id: dead.id, token: dead.token }, { delayMs: 0, error: "{}", mode: "dead" }))).toBe(
      "dead",
    )
    expect(await run(c.deadRetry({ ids: [dead.id] }))).toMatchObject({ count: 1 })
    expect((await take(c, 10)).names).toEqual(["x", "a", "b"])
  })

  it("delayed by a failure's backoff: at its priority when due", async () => {
    const { queue, c, x } = await leasedX()
    await addAll(queue, ["c"], { priority: 4 })
    await run(c.fail({ id: x.id, token: x.token }, { delayMs: 1, error: "{}", mode: "retry" }))
    await until("x is due again", async () => (await run(c.sweep(100))).promoted > 0)
    expect((await take(c, 10)).names).toEqual(["z", "a", "x", "c", "b"])
  })

  it("completed or cancelled, not retained: its priority is dropped with its other fields (nothing is left per job)", async () => {
    const { q, queue, c, x } = await leasedX()
    await queue.setRetention({ completed: { count: 0 }, cancelled: { count: 0 } })
    expect(await run(c.complete([{ id: x.id, token: x.token }]))).toEqual([true])
    const waiting = await take(c, 10)
    await run(c.complete(waiting.jobs.map((j) => ({ id: j.id, token: j.token }))))
    expect(await queue.cancel(await queue.add("gone", { priority: 8 }))).toBe("waiting")
    const keys: QueueKeys = queueKeys(q)
    expect(await shared.raw.exists(keys.priority, keys.prioritized, keys.data)).toBe(0)
  })
})

describe("a partitioned queue", () => {
  it("orders each partition by priority (a priority holds within a partition); changePriority finds the job's partition", async () => {
    const P = 2
    const { q, queue } = setup(P)
    await addAll(
      queue,
      Array.from({ length: 10 }, (_, i) => `p5-${i}`),
      { priority: 5 },
    )
    const urgent = await addAll(queue, ["u0", "u1"], { priority: 1 })
    // u1 moves behind every p5 job of its partition
    expect(await queue.changePriority(urgent[1]!, 6)).toBe("waiting")
    for (let i = 0; i < P; i++) {
      const c = makeCommands(shared.client, partitionKeys(q, i))
      const { names } = await take(c, 100)
      expect(names).toHaveLength(6)
      const p5 = names.filter((n) => n.startsWith("p5-"))
      expect(p5).toEqual([...p5].sort((a, b) => Number(a.slice(3)) - Number(b.slice(3))))
      expect(names).toEqual(names.includes("u0") ? ["u0", ...p5] : [...p5, "u1"])
    }
  })
})
