/**
 * Schedules against a real Redis: create, replace, list, remove; bad input writes
 * nothing; a due tick makes one job `<name>@<tick>` with its `scheduledFor`; downtime
 * makes one job (or `catchUp`); a tick re-sent, replayed after a lost score, or racing a
 * replace or an unschedule makes no second job; the worker's sweep loop wakes at ticks.
 *
 * Downtime is made as Redis sees it: the stored next tick set 30 s in the past (what a
 * fleet stopped for 30 s leaves), not 30 s of waiting.
 */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { LeaseQueue } from "../../src/effect.ts"
import { runScript } from "../../src/engine/calls/Commands.ts"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { SCHEDULE_LIMITS } from "../../src/engine/model/Schedule.ts"
import type { Job } from "../../src/index.ts"
import { run } from "../support/jobs.ts"
import { dumpQueue, queueNamer, redisUrl, sharedClients } from "../support/redis.ts"
import { redisNow, until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("schedules")
const shared = sharedClients()

const setup = () => {
  const q = name()
  const queue = useQueue<{ report: string }>(q)
  return { q, queue, keys: queueKeys(q) }
}

/** Make schedule `s` due as a fleet stopped for `downMs` leaves it: its next tick that long ago (on its grid). */
const downFor = async (keys: ReturnType<typeof queueKeys>, s: string, downMs: number, every = 1000) => {
  const due = Math.floor(((await redisNow(shared.raw)) - downMs) / every) * every
  await shared.raw.zadd(keys.schedAt, "XX", due, s)
  return due
}

const jobIds = async (keys: ReturnType<typeof queueKeys>) => (await shared.raw.hkeys(keys.data)).sort()

describe("schedule, schedules, unschedule", () => {
  it("creates with its next run on the grid, lists it, keeps the next run on a replace with the same timing, moves it on another", async () => {
    const { queue } = setup()
    const before = await redisNow(shared.raw)
    const set = await queue.schedule("report", { every: 60_000 }, { payload: { report: "a" } })
    expect(set).toMatchObject({ name: "report", change: "created" })
    expect(set.nextRunAt % 60_000).toBe(0)
    expect(set.nextRunAt).toBeGreaterThan(before)
    expect(await queue.schedules()).toEqual([
      {
        name: "report",
        every: 60_000,
        catchUp: 1,
        payload: { report: "a" },
        maxAttempts: 3,
        timeoutMs: 0,
        nextRunAt: set.nextRunAt,
      },
    ])
    const kept = await queue.schedule("report", { every: 60_000 }, { payload: { report: "b" } })
    expect(kept).toEqual({ name: "report", change: "kept", nextRunAt: set.nextRunAt })
    expect((await queue.schedules())[0]!.payload).toEqual({ report: "b" })
    const moved = await queue.schedule(
      "report",
      { cron: "0 3 * * *", tz: "Europe/Paris" },
      { payload: { report: "c" } },
    )
    expect(moved.change).toBe("replaced")
    expect(new Date(moved.nextRunAt).getUTCMinutes()).toBe(0)
    expect((await queue.schedules())[0]).toMatchObject({ cron: "0 3 * * *", tz: "Europe/Paris" })
    expect(await queue.unschedule("report")).toBe(true)
    expect(await queue.unschedule("report")).toBe(false)
    expect(await queue.schedules()).toEqual([])
  })

  it("bad input is refused naming the field, and writes nothing", async () => {
    const { q, queue } = setup()
    await queue.schedule("keep", { every: 1000 }, { payload: { report: "x" } })
    const before = await dumpQueue(shared.raw, q)
    const bad: Array<[() => Promise<unknown>, string]> = [
      [() => queue.schedule("a b", { every: 1000 }, { payload: { report: "x" } }), "name"],
      [() => queue.schedule("s", { every: 10 }, { payload: { report: "x" } }), "when.every"],
      [() => queue.schedule("s", { cron: "61 * * * *" }, { payload: { report: "x" } }), "when.cron"],
      [() => queue.schedule("s", { cron: "* * * * *", tz: "Nowhere/City" }, { payload: { report: "x" } }), "when.tz"],
      [
        () => queue.schedule("s", { every: 1000 }, { payload: { report: "x" }, options: { id: "x" } as never }),
        "options.id",
      ],
      [() => queue.schedule("s", { every: 1000 }, undefined as never), "job"],
      [() => queue.schedule("s", { every: 1000 }, { payload: undefined as never }), "job.payload"],
      [() => queue.unschedule("" as string), "name"],
    ]
    for (const [call, field] of bad) await expect(call()).rejects.toMatchObject({ field })
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })

  it("a new schedule on a queue holding 1000 is refused and writes nothing", async () => {
    const { q, queue, keys } = setup()
    const fields: string[] = []
    for (let i = 0; i < 1000; i++) fields.push(`s${i}`, "{}")
    await shared.raw.hset(keys.schedules, ...fields)
    const before = await dumpQueue(shared.raw, q)
    await expect(queue.schedule("one-more", { every: 1000 }, { payload: { report: "x" } })).rejects.toMatchObject({
      _tag: "InvalidOptions",
      field: "name",
    })
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })
})

describe("ticks", () => {
  it("a due tick makes one job <name>@<tick> with scheduledFor, its payload and options; the next pass makes none", async () => {
    const { queue, keys } = setup()
    // an hourly grid: with every 1000 a busy machine could cross the next second between the
    // tick made due and the sweep, and that sweep (at most 5 s late) rightly makes both ticks
    await queue.schedule("r", { every: 3_600_000 }, { payload: { report: "t" }, options: { maxAttempts: 5 } })
    const due = await downFor(keys, "r", 0, 3_600_000)
    const first = await queue.sweep()
    expect(first.scheduled).toBe(1)
    expect(first.nextTickMs).toBeGreaterThanOrEqual(0)
    const [id] = await jobIds(keys)
    expect(id).toMatch(/^r@\d+$/)
    const info = await queue.getJob(id!)
    expect(info).toMatchObject({ state: "waiting", payload: { report: "t" }, maxAttempts: 5 })
    expect(info!.scheduledFor).toBeGreaterThanOrEqual(due)
    expect(`r@${info!.scheduledFor}`).toBe(id)
    expect((await queue.sweep()).scheduled).toBe(0)
    expect(await jobIds(keys)).toEqual([id])
    expect((await queue.stats()).counters.added).toBe(1)
  })

  it("after 30 s of downtime the missed ticks make one job, for the latest; catchUp 3 makes the latest three", async () => {
    const { queue, keys } = setup()
    await queue.schedule("one", { every: 1000 }, { payload: { report: "1" } })
    await queue.schedule("three", { every: 1000, catchUp: 3 }, { payload: { report: "3" } })
    await downFor(keys, "one", 30_000)
    await downFor(keys, "three", 30_000)
    const now = await redisNow(shared.raw)
    expect((await queue.sweep()).scheduled).toBe(4)
    const ids = await jobIds(keys)
    const ticksOf = (s: string) => ids.filter((i) => i.startsWith(`${s}@`)).map((i) => Number(i.split("@")[1]))
    expect(ticksOf("one")).toHaveLength(1)
    expect(ticksOf("one")[0]).toBeGreaterThanOrEqual(Math.floor(now / 1000) * 1000)
    const three = ticksOf("three").sort()
    expect(three).toHaveLength(3)
    expect([three[1]! - three[0]!, three[2]! - three[1]!]).toEqual([1000, 1000])
    // the next run is after now again: nothing more is due
    for (const s of await queue.schedules()) expect(s.nextRunAt).toBeGreaterThan(now)
  })

  it("a tick whose reply was lost, sent again with the same ARGV, makes one job", async () => {
    const { queue, keys } = setup()
    await queue.schedule("r", { every: 1000 }, { payload: { report: "x" } })
    const due = await downFor(keys, "r", 0)
    const input = { name: "r", due, next: due + 1000, at: [due] }
    const once = await run(runScript(shared.client, keys, Scripts.tick, input))
    const again = await run(runScript(shared.client, keys, Scripts.tick, input))
    expect(once).toEqual({ outcome: "ticked", made: [`r@${due}`] })
    expect(again).toEqual({ outcome: "stale", next: due + 1000 })
    expect(await jobIds(keys)).toEqual([`r@${due}`])
  })

  it("a tick replayed after a failover lost its score update (the job kept) makes no second job", async () => {
    const { queue, keys } = setup()
    await queue.schedule("r", { every: 1000 }, { payload: { report: "x" } })
    const due = await downFor(keys, "r", 0)
    const input = { name: "r", due, next: due + 1000, at: [due] }
    await run(runScript(shared.client, keys, Scripts.tick, input))
    // what a replica promoted before the score write reached it would hold: the old next tick
    await shared.raw.zadd(keys.schedAt, "XX", due, "r")
    expect(await run(runScript(shared.client, keys, Scripts.tick, input))).toEqual({ outcome: "ticked", made: [] })
    expect(await jobIds(keys)).toEqual([`r@${due}`])
    expect((await queue.stats()).counters.added).toBe(1)
  })

  it("a tick read before a replace or an unschedule makes no job after it", async () => {
    const { queue, keys } = setup()
    await queue.schedule("a", { every: 1000 }, { payload: { report: "old" } })
    await queue.schedule("b", { every: 1000 }, { payload: { report: "old" } })
    const dueA = await downFor(keys, "a", 0)
    const dueB = await downFor(keys, "b", 0)
    // a sweeper read both due ticks, then the schedules changed before its ticks ran
    const read = await run(
      runScript(shared.client, keys, Scripts.schedules, { due: true, limit: 10, maxBytes: 1 << 20 }),
    )
    expect(read.schedules.map((s) => s.schedule.name).sort()).toEqual(["a", "b"])
    await queue.schedule("a", { every: 2000 }, { payload: { report: "new" } })
    await queue.unschedule("b")
    const tickA = await run(
      runScript(shared.client, keys, Scripts.tick, { name: "a", due: dueA, next: dueA + 1000, at: [dueA] }),
    )
    const tickB = await run(
      runScript(shared.client, keys, Scripts.tick, { name: "b", due: dueB, next: dueB + 1000, at: [dueB] }),
    )
    expect(tickA.outcome).toBe("stale")
    expect(tickB).toEqual({ outcome: "stale", next: -1 })
    expect(await jobIds(keys)).toEqual([])
  })

  it("a worker's handler gets job.scheduledFor; its sweep loop wakes at the ticks (consecutive 1 s ticks with a 2.5 s interval)", async () => {
    const { q, queue } = setup()
    await queue.schedule("beat", { every: 1000 }, { payload: { report: "b" } })
    const seen: Array<{ id: string; at: number | undefined; payload: unknown }> = []
    useWorker<{ report: string }>(
      q,
      (job: Job<{ report: string }>) => {
        seen.push({ id: job.id, at: job.scheduledFor, payload: job.payload })
      },
      { sweep: { intervalMs: 2500 } },
    )
    await until("four ticks ran", () => seen.length >= 4, { timeoutMs: 30_000 })
    for (const s of seen) expect(s).toEqual({ id: `beat@${s.at}`, at: expect.any(Number), payload: { report: "b" } })
    const ticks = seen.map((s) => s.at!).sort((a, b) => a - b)
    const gaps = ticks.slice(1).map((t, i) => t - ticks[i]!)
    // woken only by its 2-3 s interval, the loop could make no two ticks 1 s apart
    expect(gaps).toContain(1000)
  })
})

describe("a default worker ticks a new schedule on time", () => {
  // default options: leaseMs 30 000, so the full sweep pass comes every 12-18 s; a loop whose
  // first pass waited that long made its first job 12-18 s late, for the latest tick only
  // (more than 5 s late is downtime): the first tick's job would never be made
  it("a schedule made before the worker starts: its first job is its first tick's", async () => {
    const { q, queue } = setup()
    const set = await queue.schedule("first", { every: 1000 }, { payload: { report: "f" } })
    const seen: string[] = []
    useWorker<{ report: string }>(q, (job) => {
      seen.push(job.id)
    })
    await until("the first tick ran", () => seen.length >= 1, { timeoutMs: 30_000 })
    expect(seen[0]).toBe(`first@${set.nextRunAt}`)
  })

  it("a schedule made after the worker's first pass: its first job is its first tick's", async () => {
    const { q, queue } = setup()
    // the witness of the first pass: a lease run out, which only a sweep hands on
    await queue.add({ report: "expired" })
    const [held] = await queue.reserve({ count: 1, leaseMs: 10 })
    await until("the lease ran out", async () => (await redisNow(shared.raw)) > held!.deadline)
    const seen: string[] = []
    useWorker<{ report: string }>(q, (job) => {
      seen.push(job.id)
    })
    await until("the first pass handed the expired job on", () => seen.includes(held!.id), { timeoutMs: 30_000 })
    const set = await queue.schedule("later", { every: 1000 }, { payload: { report: "l" } })
    await until("the schedule ran", () => seen.find((id) => id.startsWith("later@")), { timeoutMs: 30_000 })
    expect(seen.filter((id) => id.startsWith("later@"))[0]).toBe(`later@${set.nextRunAt}`)
  })
})

describe("reading many large schedules (N5)", () => {
  it("each page holds at most count and 1 MiB of schedules; schedules() pages to them all; a sweep ticks every due one", async () => {
    const { queue, keys } = setup()
    const big = "x".repeat(300 * 1024)
    const names = Array.from({ length: 12 }, (_, i) => `big${String(i).padStart(2, "0")}`)
    for (const n of names) await queue.schedule(n, { every: 3_600_000 }, { payload: { report: big } })
    const pages: Array<ReadonlyArray<string>> = []
    let cursor: string | undefined
    do {
      const page = await queue.schedulePage(cursor === undefined ? {} : { cursor })
      // what one call moved: every schedule's JSON (its payload inside) stays within the page's budget
      const bytes = (await Promise.all(page.schedules.map((s) => shared.raw.hstrlen(keys.schedules, s.name)))).reduce(
        (a, b) => a + b,
        0,
      )
      expect(page.schedules.length).toBeGreaterThan(0)
      expect(bytes).toBeLessThanOrEqual(SCHEDULE_LIMITS.read.bytes)
      pages.push(page.schedules.map((s) => s.name))
      cursor = page.cursor
    } while (cursor !== undefined)
    expect(pages.length).toBeGreaterThan(1)
    expect(pages.flat().sort()).toEqual(names)
    expect((await queue.schedulePage({ count: 2 })).schedules).toHaveLength(2)
    const all = await queue.schedules()
    expect(all.map((s) => s.name).sort()).toEqual(names)
    expect(all.every((s) => s.payload.report === big)).toBe(true)
    // the sweep's read of due schedules is bounded the same way, and it still ticks them all
    for (const n of names) await downFor(keys, n, 0, 3_600_000)
    const due = await run(
      runScript(shared.client, keys, Scripts.schedules, {
        due: true,
        limit: 100,
        maxBytes: SCHEDULE_LIMITS.read.bytes,
      }),
    )
    expect(due.more).toBe(true)
    expect(due.schedules.length).toBeLessThan(names.length)
    await queue.sweep()
    expect((await jobIds(keys)).map((id) => id.split("@")[0])).toEqual(names)
  })

  it("a cursor that is not a page's is refused, naming it", async () => {
    const { queue } = setup()
    await expect(queue.schedulePage({ cursor: "nope" })).rejects.toThrow(/cursor = "nope": must be the cursor/)
    await expect(queue.schedulePage({ count: 101 })).rejects.toThrow(/count/)
  })
})

describe("the Effect face", () => {
  it("schedule, schedules (payload decoded with the queue's Schema), unschedule", async () => {
    const q = name()
    const keys = queueKeys(q)
    const Payload = Schema.Struct({ n: Schema.FiniteFromString })
    const program = Effect.scoped(
      Effect.gen(function* () {
        const queue = yield* LeaseQueue.make({ name: q, schema: Payload, connection: redisUrl() })
        const set = yield* queue.schedule("e", { cron: "*/10 * * * * *" }, { payload: { n: 1 } })
        // stored as the Schema encodes it (n as a string), listed as it decodes it
        const stored = yield* Effect.promise(() => shared.raw.hget(keys.schedules, "e"))
        expect(JSON.parse(JSON.parse(stored!).payload)).toEqual({ n: "1" })
        const listed = yield* queue.schedules
        const gone = yield* queue.unschedule("e")
        return { set, listed, gone }
      }),
    )
    const { set, listed, gone } = await Effect.runPromise(program)
    expect(set.change).toBe("created")
    expect(listed).toEqual([
      expect.objectContaining({ name: "e", cron: "*/10 * * * * *", tz: "UTC", payload: { n: 1 } }),
    ])
    expect(gone).toBe(true)
    expect(await shared.raw.exists(keys.schedules, keys.schedAt)).toBe(0)
  })
})
