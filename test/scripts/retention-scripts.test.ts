/**
 * Retention at the script level, against the suite's real Redis: a trimmed job leaves no
 * trace in any key of the queue (every per-job hash of Keys.ts, every set), whichever kind
 * it was and whichever bound trimmed it; the sweep trims in bounded calls; dead jobs stay
 * without a bound; a `completed` event carries a small result and refers to a large one.
 */
import { describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { decodeEntry, RESULT_IN_EVENT_BYTES, RESULTS_PER_ENTRY_BYTES } from "../../src/engine/events/EventDecode.ts"
import { KEY_NAMES, KEY_TYPES, type KeyName, queueKeys } from "../../src/engine/model/Keys.ts"
import { Queue } from "../../src/index.ts"
import { onCleanup } from "../support/cleanup.ts"
import { newJob, run } from "../support/jobs.ts"
import { queueNamer, redisUrl, sharedClients } from "../support/redis.ts"
import { redisNow, until } from "../support/until.ts"

const name = queueNamer("retention-scripts")
const shared = sharedClients()

const setup = () => {
  const q = name()
  const queue = new Queue(q, { connection: redisUrl() })
  onCleanup(() => queue.close())
  const keys = queueKeys(q)
  return { queue, keys, c: makeCommands(shared.client, keys) }
}

/** Whether key `k` of the queue holds anything of job `id` (a field, a member, an entry). */
const holds = async (keys: ReturnType<typeof queueKeys>, k: KeyName, id: string): Promise<boolean> => {
  const key = keys[k]
  switch (KEY_TYPES[k]) {
    case "hash":
      return (await shared.raw.hexists(key, id)) === 1
    case "zset":
      return (await shared.raw.zscore(key, id)) !== null
    case "list":
      return (await shared.raw.lrange(key, 0, -1)).some((e) => e.split("|")[0] === id)
    default:
      return false
  }
}

/** The keys of the queue that hold anything of job `id` (also a dedupe key mapping to it). */
const traces = async (keys: ReturnType<typeof queueKeys>, id: string): Promise<string[]> => {
  const found: string[] = []
  for (const k of KEY_NAMES) if (await holds(keys, k, id)) found.push(k)
  if (Object.values(await shared.raw.hgetall(keys.dedupeid)).includes(id)) found.push("dedupeid value")
  return found
}

/** A job that leaves something in every per-job hash: maxAttempts, dedupe key, own timeout, priority, a failure (and its errors), progress, a log line. */
const fullJob = async ({ c }: ReturnType<typeof setup>) => {
  const j = newJob({ maxAttempts: 5, dedupeKey: `k-${Math.random()}`, timeoutMs: 60_000, priority: 7 })
  await run(c.add([j]))
  const [first] = (await run(c.reserve(1, 60_000, 0))).jobs
  expect(await run(c.fail(first!, { delayMs: 0, error: '{"message":"once"}', mode: "retry" }))).toBe("retry")
  const [second] = (await run(c.reserve(1, 60_000, 0))).jobs
  await run(c.extend([{ ...second!, progress: "50" }], 60_000))
  expect(await run(c.log(second!, ['"a line"']))).toBe(1)
  return { id: j.id, lease: second! }
}

const redisPassed = (at: number) => until("the Redis clock passed", async () => (await redisNow(shared.raw)) > at)

describe("a trimmed job leaves nothing behind", () => {
  it("completed, trimmed by the count at a later completion", async () => {
    const s = setup()
    await s.queue.setRetention({ completed: { count: 1 } })
    const { id, lease } = await fullJob(s)
    expect(await run(s.c.complete([{ ...lease, result: '"r"' }]))).toEqual([true])
    expect((await traces(s.keys, id)).sort()).toEqual(
      [
        "data",
        "done",
        "err",
        "errors",
        "fails",
        "max",
        "progress",
        "result",
        "timeout",
        "dkey",
        "priority",
        "addedAt",
        "logs",
        "holder", // its run's start, kept with it
      ].sort(),
    )
    await run(s.c.add([newJob()]))
    const [next] = (await run(s.c.reserve(1, 60_000, 0))).jobs
    await run(s.c.complete([next!]))
    expect(await traces(s.keys, id)).toEqual([])
    expect(await s.queue.getJob(id)).toBeUndefined()
  })

  it("completed, trimmed by age in a sweep", async () => {
    const s = setup()
    const { id, lease } = await fullJob(s)
    await run(s.c.complete([{ ...lease, result: '"r"' }]))
    await run(s.c.sweep(100))
    expect(await s.queue.getJob(id)).toMatchObject({ state: "completed", result: "r", progress: 50 })
    await s.queue.setRetention({ completed: { ageMs: 0 } })
    await redisPassed(Number(await shared.raw.zscore(s.keys.done, id)))
    expect((await run(s.c.sweep(100))).trimmed).toBe(1)
    expect(await traces(s.keys, id)).toEqual([])
  })

  it("cancelled, trimmed by age in a sweep (the id is forgotten among the cancels too)", async () => {
    const s = setup()
    const { id } = await fullJob(s)
    expect(await s.queue.cancel(id)).toBe("active")
    await run(s.c.sweep(100))
    expect(await s.queue.getJob(id)).toMatchObject({ state: "cancelled" })
    await s.queue.setRetention({ cancelled: { ageMs: 0 } })
    await redisPassed(Number(await shared.raw.zscore(s.keys.cancelled, id)))
    expect((await run(s.c.sweep(100))).trimmed).toBe(1)
    expect(await traces(s.keys, id)).toEqual([])
  })

  it("dead: kept without a bound, then trimmed by count and by age in sweeps", async () => {
    const s = setup()
    const dead: string[] = []
    for (let i = 0; i < 3; i++) {
      const { id, lease } = await fullJob(s)
      await run(s.c.fail(lease, { delayMs: 0, error: '{"message":"for good"}', mode: "final" }))
      dead.push(id)
    }
    await redisPassed(Number(await shared.raw.zscore(s.keys.dead, dead[2]!)))
    expect((await run(s.c.sweep(100))).trimmed).toBe(0)
    expect(await shared.raw.zcard(s.keys.dead)).toBe(3)
    await s.queue.setRetention({ dead: { count: 2 } })
    expect((await run(s.c.sweep(100))).trimmed).toBe(1)
    expect(await traces(s.keys, dead[0]!)).toEqual([])
    expect(await s.queue.getJob(dead[1]!)).toMatchObject({ state: "dead", error: { message: "for good" } })
    await s.queue.setRetention({ dead: { ageMs: 0 } })
    expect((await run(s.c.sweep(100))).trimmed).toBe(2)
    for (const id of dead) expect(await traces(s.keys, id)).toEqual([])
  })
})

describe("a finishing script trims to the count", () => {
  it("fail: a job moved to dead beyond the dead count pushes out the oldest, leaving nothing of it", async () => {
    const s = setup()
    await s.queue.setRetention({ dead: { count: 1 } })
    const dead: string[] = []
    for (let i = 0; i < 3; i++) {
      const { id, lease } = await fullJob(s)
      expect(await run(s.c.fail(lease, { delayMs: 0, error: '{"message":"x"}', mode: "final" }))).toBe("dead")
      dead.push(id)
      expect(await shared.raw.zrange(s.keys.dead, "0", "-1")).toEqual([id])
    }
    for (const id of dead.slice(0, 2)) expect(await traces(s.keys, id)).toEqual([])
    expect(await s.queue.getJob(dead[2]!)).toMatchObject({ state: "dead", error: { message: "x" }, progress: 50 })
  })
})

describe("completions trim the retained jobs in batches", () => {
  it("count 32: done runs to 34 (slack 32 / 16 = 2), the completion past it trims back to 32, the oldest first, leaving nothing", async () => {
    const s = setup()
    await s.queue.setRetention({ completed: { count: 32 } })
    const jobs = Array.from({ length: 38 }, () => newJob())
    await run(s.c.add(jobs))
    const sizes: number[] = []
    const order: string[] = []
    for (let i = 0; i < jobs.length; i++) {
      const [lease] = (await run(s.c.reserve(1, 60_000, 0))).jobs
      expect(await run(s.c.complete([{ ...lease!, result: '"r"' }]))).toEqual([true])
      order.push(lease!.id)
      sizes.push(await shared.raw.zcard(s.keys.done))
    }
    // 1..34, then the 35th trims back to 32; 33, 34, and the 38th trims again
    expect(sizes.slice(30)).toEqual([31, 32, 33, 34, 32, 33, 34, 32])
    expect(Math.max(...sizes)).toBe(34)
    expect(new Set(await shared.raw.zrange(s.keys.done, "0", "-1"))).toEqual(new Set(order.slice(-32)))
    for (const id of order.slice(0, 6)) expect(await traces(s.keys, id)).toEqual([])
    expect(await shared.raw.hlen(s.keys.result)).toBe(32)
  })

  it("default count 1,000: calls of 100 completions keep at most 1,062, trimmed back to 1,000", async () => {
    const s = setup()
    const sizes: number[] = []
    for (let call = 0; call < 12; call++) {
      await run(s.c.add(Array.from({ length: 100 }, () => newJob())))
      const { jobs: leased } = await run(s.c.reserve(100, 60_000, 0))
      expect(leased).toHaveLength(100)
      await run(s.c.complete(leased))
      sizes.push(await shared.raw.zcard(s.keys.done))
    }
    expect(sizes).toEqual([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1000, 1000])
  })

  it("a count below 16 has no slack: each completion trims back to the count", async () => {
    const s = setup()
    await s.queue.setRetention({ completed: { count: 15 } })
    const jobs = Array.from({ length: 17 }, () => newJob())
    await run(s.c.add(jobs))
    const sizes: number[] = []
    for (let i = 0; i < jobs.length; i++) {
      const [lease] = (await run(s.c.reserve(1, 60_000, 0))).jobs
      await run(s.c.complete([lease!]))
      sizes.push(await shared.raw.zcard(s.keys.done))
    }
    expect(sizes.slice(13)).toEqual([14, 15, 15, 15])
  })

  it("a lowered count catches up by at most slack + 2 a completion, never more in one call", async () => {
    const s = setup()
    const first = Array.from({ length: 50 }, () => newJob())
    await run(s.c.add(first))
    await run(s.c.complete((await run(s.c.reserve(50, 60_000, 0))).jobs))
    expect(await shared.raw.zcard(s.keys.done)).toBe(50)
    await s.queue.setRetention({ completed: { count: 16 } }) // slack 1
    const sizes: number[] = []
    for (let i = 0; i < 3; i++) {
      await run(s.c.add([newJob()]))
      await run(s.c.complete((await run(s.c.reserve(1, 60_000, 0))).jobs))
      sizes.push(await shared.raw.zcard(s.keys.done))
    }
    // each call adds 1 and trims at most 1 + 2 = 3
    expect(sizes).toEqual([48, 46, 44])
  })
})

describe("the sweep trims in bounded calls", () => {
  it("at most `limit` per call, saying when more remain", async () => {
    const s = setup()
    const jobs = Array.from({ length: 5 }, () => newJob())
    await run(s.c.add(jobs))
    const { jobs: leased } = await run(s.c.reserve(5, 60_000, 0))
    await run(s.c.complete(leased))
    await s.queue.setRetention({ completed: { ageMs: 0 } })
    const [, last] = await shared.raw.zrange(s.keys.done, "-1", "-1", "WITHSCORES")
    await redisPassed(Number(last))
    const calls = []
    for (let i = 0; i < 3; i++) {
      const r = await run(s.c.sweep(2))
      calls.push([r.trimmed, r.more])
    }
    expect(calls).toEqual([
      [2, true],
      [2, true],
      [1, false],
    ])
    expect(await shared.raw.zcard(s.keys.done)).toBe(0)
  })
})

describe("a completed event carries the result", () => {
  it("inline up to RESULT_IN_EVENT_BYTES, by reference above it (getJob has it), none without one", async () => {
    const s = setup()
    const big = JSON.stringify("x".repeat(RESULT_IN_EVENT_BYTES))
    await run(s.c.add([newJob(), newJob(), newJob()]))
    const [a, b, d] = (await run(s.c.reserve(3, 60_000, 0))).jobs
    await run(s.c.complete([{ ...a!, result: '{"ok":1}' }, { ...b!, result: big }, d!]))
    // and one riding a reserve
    await run(s.c.add([newJob()]))
    const [e] = (await run(s.c.reserve(1, 60_000, 0))).jobs
    await run(s.c.reserve(0, 60_000, 0, [{ ...e!, result: "[1,2]" }]))
    const events = (await shared.raw.xrange(s.keys.events, "-", "+"))
      .flatMap(([id, fields]) => decodeEntry(s.keys.queue, id, fields))
      .filter((x) => x.kind === "completed")
    expect(
      events.map(({ jobId, ...rest }) => ({
        jobId,
        ...("result" in rest ? { result: rest.result } : {}),
        ...("resultBytes" in rest ? { resultBytes: rest.resultBytes } : {}),
      })),
    ).toEqual([
      { jobId: a!.id, result: { ok: 1 } },
      { jobId: b!.id, resultBytes: big.length },
      { jobId: d!.id },
      { jobId: e!.id, result: [1, 2] },
    ])
    expect((await s.queue.getJob(b!.id))?.result).toBe(JSON.parse(big))
  })
})

describe("a completed entry's results are bounded", () => {
  it("one call's results beyond RESULTS_PER_ENTRY_BYTES go by reference, so an entry stays small", async () => {
    const s = setup()
    const each = JSON.stringify("y".repeat(1000)) // 1,002 bytes: 4 fit in 4,096
    const added = Array.from({ length: 6 }, () => newJob())
    await run(s.c.add(added))
    const { jobs } = await run(s.c.reserve(6, 60_000, 0))
    await run(s.c.complete(jobs.map((j) => ({ ...j, result: each }))))
    const [entry] = await shared.raw
      .xrange(s.keys.events, "-", "+")
      .then((es) => es.filter(([, f]) => f[1] === "completed"))
    const events = decodeEntry(s.keys.queue, entry![0], entry![1])
    expect(events.map((e) => ("result" in e ? "inline" : "resultBytes" in e ? e.resultBytes : "none"))).toEqual([
      "inline",
      "inline",
      "inline",
      "inline",
      each.length,
      each.length,
    ])
    expect(entry![1].join("").length).toBeLessThan(RESULTS_PER_ENTRY_BYTES + 2_000)
  })
})
