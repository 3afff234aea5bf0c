import { describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { InvalidOptions } from "../../src/engine/model/Errors.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { Queue } from "../../src/index.ts"
import { onCleanup } from "../support/cleanup.ts"
import { run } from "../support/jobs.ts"
import { dumpQueue, queueNamer, redisUrl, sharedClients } from "../support/redis.ts"

const name = queueNamer("job-backoff")
const shared = sharedClients()

const setup = () => {
  const q = name()
  const queue = new Queue<number>(q, { connection: redisUrl() })
  onCleanup(() => queue.close())
  const keys = queueKeys(q)
  return { q, queue, keys, c: makeCommands(shared.client, keys) }
}

/** ms from now (Redis clock) until the delayed job `id` is due. */
const dueIn = async (key: string, id: string) => {
  const [s, us] = await shared.raw.time()
  return Number(await shared.raw.zscore(key, id)) - (Number(s) * 1000 + Math.floor(Number(us) / 1000))
}

describe("a job's own backoff", () => {
  it("sets the retry delay instead of the worker's, and goes with the job's data", async () => {
    const { queue, keys, c } = setup()
    const id = await queue.add(1, { backoff: { type: "fixed", delayMs: 2_000 } })
    const other = await queue.add(2)
    const { jobs } = await run(c.reserve(10, 5_000, 0))
    // the worker's plan says one hour: the job's own 2 s wins; the other job keeps the worker's
    for (const j of jobs) await run(c.fail(j, { delayMs: 3_600_000, error: "{}", mode: "retry" }))
    const own = await dueIn(keys.delayed, id)
    expect(own).toBeGreaterThan(1_000)
    expect(own).toBeLessThanOrEqual(2_000)
    expect(await dueIn(keys.delayed, other)).toBeGreaterThan(3_000_000)
    expect(await shared.raw.hkeys(keys.backoff)).toEqual([id])
    expect((await queue.verify()).violations).toBe(0)
    // dropped with the job: a cancel with cancelled jobs not retained deletes every field of it
    await queue.setRetention({ cancelled: { count: 0 } })
    expect(await queue.cancel(id)).toBe("delayed")
    expect(await shared.raw.exists(keys.backoff)).toBe(0)
    // one left behind is reported by verify
    await shared.raw.hset(keys.backoff, "ghost", "{}")
    expect((await queue.verify()).lines).toEqual(["orphan-field ghost has backoff but no payload"])
  })

  it("drain and clean delete it with the job's other fields", async () => {
    const { queue, keys, c } = setup()
    await queue.add(1, { backoff: { type: "fixed", delayMs: 1 } })
    await queue.add(2, { backoff: { type: "fixed", delayMs: 1 }, delayMs: 60_000 })
    await queue.drain({ delayed: true })
    expect(await shared.raw.exists(keys.backoff)).toBe(0)
    await queue.add(3, { backoff: { type: "fixed", delayMs: 1 }, maxAttempts: 1 })
    const { jobs } = await run(c.reserve(1, 5_000, 0))
    expect(await run(c.fail(jobs[0]!, { delayMs: 0, error: "{}", mode: "retry" }))).toBe("dead")
    expect(await shared.raw.hlen(keys.backoff)).toBe(1) // kept with the dead job
    await queue.clean("dead", { olderThanMs: 0 })
    expect(await shared.raw.exists(keys.backoff)).toBe(0)
  })

  it("an exponential one doubles per failed attempt, within its cap, without jitter when asked", async () => {
    const { queue, keys, c } = setup()
    const id = await queue.add(1, {
      maxAttempts: 5,
      backoff: { type: "exponential", delayMs: 100_000, maxDelayMs: 250_000, jitter: false },
    })
    const seen: number[] = []
    for (let attempt = 1; attempt <= 3; attempt++) {
      await shared.raw.zadd(keys.delayed, 0, id) // due now: the next reserve promotes it
      const { jobs } = await run(c.reserve(1, 5_000, 10))
      expect(jobs.map((j) => j.attempt)).toEqual([attempt])
      await run(c.fail(jobs[0]!, { delayMs: 0, error: "{}", mode: "retry" }))
      seen.push(await dueIn(keys.delayed, id))
    }
    // 100 s, 200 s, then capped at 250 s (each read a few ms after the fail)
    expect(seen.map((ms) => Math.round(ms / 1000))).toEqual([100, 200, 250])
  })

  it("a manual-style fail's fallback backoff applies to a job without its own", async () => {
    const { queue, keys, c } = setup()
    const id = await queue.add(1)
    const { jobs } = await run(c.reserve(1, 5_000, 0))
    const backoff = JSON.stringify({ type: "fixed", delayMs: 7_000 })
    await run(c.fail(jobs[0]!, { delayMs: 0, error: "{}", mode: "retry", backoff }))
    expect(Math.round((await dueIn(keys.delayed, id)) / 1000)).toBe(7)
  })

  it("a bad backoff is refused naming the field, before anything is written", async () => {
    const { q, queue } = setup()
    const before = await dumpQueue(shared.raw, q)
    const bad: ReadonlyArray<[unknown, string]> = [
      [{ type: "linear", delayMs: 1 }, "options.backoff.type"],
      [{ type: "fixed", delayMs: -1 }, "options.backoff.delayMs"],
      [{ type: "exponential", delayMs: 10, maxDelayMs: 5 }, "options.backoff.maxDelayMs"],
      [() => 1, "options.backoff"],
      ["fast", "options.backoff"],
    ]
    for (const [backoff, field] of bad) {
      const e = await queue.add(1, { backoff } as never).catch((x: unknown) => x)
      expect(e).toBeInstanceOf(InvalidOptions)
      expect((e as InvalidOptions).field).toBe(field)
    }
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })
})
