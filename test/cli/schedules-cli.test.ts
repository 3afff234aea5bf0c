/**
 * `leaseq schedules` and `leaseq unschedule`, run from source as processes against real
 * Redis: the list in text and --json, creating and replacing (bad flags write nothing), removal, a partitioned queue's schedules, and
 * `leaseq sweep` reporting the jobs its ticks made.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { runCli } from "../support/child.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("schedules-cli")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

const leaseq = (...args: string[]) => runCli([...args, "--url", redisUrl()])

describe("leaseq schedules", () => {
  it("lists the schedules with their next run (text and --json); unschedule removes one", async () => {
    const q = name()
    const queue = useQueue(q)
    const a = await queue.schedule(
      "nightly",
      { cron: "0 3 * * *", tz: "Europe/Paris" },
      { payload: { kind: "report" } },
    )
    await queue.schedule("beat", { every: 60_000 }, { payload: null })
    const text = await leaseq("schedules", "--queue", q)
    expect(text.code).toBe(0)
    expect(text.out).toMatch(/NAME\s+TIMING\s+NEXT RUN/)
    expect(text.out).toContain('cron "0 3 * * *" Europe/Paris')
    expect(text.out).toContain(new Date(a.nextRunAt).toISOString())
    expect(text.out).toContain("every 60000ms")
    const json = await leaseq("schedules", "--queue", q, "--json")
    expect(JSON.parse(json.out)).toMatchObject({
      queue: q,
      schedules: expect.arrayContaining([
        expect.objectContaining({ name: "nightly", payload: { kind: "report" }, nextRunAt: a.nextRunAt }),
      ]),
    })
    expect((await leaseq("unschedule", "nightly", "--queue", q)).out).toContain("schedule nightly removed")
    expect((await leaseq("unschedule", "nightly", "--queue", q)).out).toContain("schedule nightly not found")
    expect((await queue.schedules()).map((s) => s.name)).toEqual(["beat"])
  })

  it("leaseq schedule creates and replaces; bad flags exit 2 and write nothing", async () => {
    const q = name()
    const queue = useQueue(q)
    const made = await leaseq(
      "schedule",
      "nightly",
      "--queue",
      q,
      "--cron",
      "30 3 * * *",
      "--tz",
      "America/New_York",
      "--payload",
      '{"kind":"daily"}',
      "--max-attempts",
      "5",
      "--json",
    )
    expect(made.code).toBe(0)
    const set = JSON.parse(made.out)
    expect(set).toMatchObject({ queue: q, name: "nightly", change: "created" })
    expect(await queue.schedules()).toEqual([
      expect.objectContaining({ name: "nightly", tz: "America/New_York", payload: { kind: "daily" }, maxAttempts: 5 }),
    ])
    expect((await leaseq("schedule", "nightly", "--queue", q, "--every", "60000")).out).toContain(
      "schedule nightly replaced, next run",
    )
    const before = await dumpQueue(raw, q)
    for (const bad of [
      ["--every", "500"],
      ["--cron", "61 * * * *"],
      ["--cron", "* * * * *", "--tz", "Nowhere/City"],
      ["--every", "1000", "--payload", "{not json"],
      [],
    ]) {
      const r = await leaseq("schedule", "nightly", "--queue", q, ...bad)
      expect(r.code, `${bad.join(" ")}: ${r.err}`).toBe(2)
      expect(r.err.trim().split("\n")).toHaveLength(1)
    }
    expect(await dumpQueue(raw, q)).toEqual(before)
  })

  it("a partitioned queue's schedules are listed from its partition 0, and ticked there", async () => {
    const q = name()
    const queue = useQueue(q, { partitions: 3 })
    await queue.schedule("p", { every: 1000 }, { payload: 1 })
    const keys = queueKeys(`${q}~0`)
    expect(await raw.zcard(keys.schedAt)).toBe(1)
    expect(JSON.parse((await leaseq("schedules", "--queue", q, "--json")).out).schedules).toHaveLength(1)
    await raw.zadd(keys.schedAt, "XX", 1000, "p")
    const swept = await leaseq("sweep", "--queue", q)
    expect(swept.code).toBe(0)
    expect(swept.out).toContain("scheduled 1 jobs (due ticks)")
    expect((await queue.stats()).partitions![0]!.waiting).toBe(1)
  })
})
