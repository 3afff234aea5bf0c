/**
 * The tick times of schedules (src/engine/model/Schedule.ts), pure: no Redis, every time
 * given. `every` ticks on multiples of it; cron in a time zone across daylight-saving
 * changes; missed ticks after downtime (one job, or the latest `catchUp`); the checks of
 * `when` and the names; the sweep loop's wait (src/engine/worker/SweepLoop.ts).
 */
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import {
  checkScheduledJobOptions,
  checkScheduleName,
  checkWhen,
  dueTicks,
  LATE_TICK_GRACE_MS,
  nextTick,
  scheduledForOf,
  type Timing,
  tickJobId,
} from "../../src/engine/model/Schedule.ts"
import { jittered, nextWait, SCHEDULE_LOOK_MS } from "../../src/engine/worker/SweepLoop.ts"

const timing = (when: unknown, name = "s"): Timing => {
  const r = checkWhen(name, when)
  if (Result.isFailure(r)) throw r.failure
  return r.success.timing
}
const failure = (r: Result.Result<unknown, unknown>) => (Result.isFailure(r) ? r.failure : undefined)
const iso = (ms: number) => new Date(ms).toISOString()

describe("next ticks", () => {
  it("every: on multiples of it since the epoch, the first after now", () => {
    const t = timing({ every: 60_000 })
    expect(nextTick("s", t, 120_000)).toBe(180_000)
    expect(nextTick("s", t, 120_001)).toBe(180_000)
    expect(nextTick("s", t, 179_999)).toBe(180_000)
  })

  it('cron "30 2 * * *" in America/New_York: the spring-forward day has its tick at 03:30 EDT, once; the fall-back day once', () => {
    const t = timing({ cron: "30 2 * * *", tz: "America/New_York" })
    // 2026-03-08: clocks go from 02:00 EST to 03:00 EDT, so 02:30 does not exist that day
    const ticks: number[] = []
    let at = Date.parse("2026-03-07T12:00:00Z")
    for (let i = 0; i < 3; i++) {
      at = nextTick("s", t, at)
      ticks.push(at)
    }
    expect(ticks.map(iso)).toEqual([
      "2026-03-08T07:30:00.000Z", // 03:30 EDT (the skipped 02:30 runs as the hour is skipped)
      "2026-03-09T06:30:00.000Z", // 02:30 EDT
      "2026-03-10T06:30:00.000Z",
    ])
    // 2026-11-01: clocks go from 02:00 EDT back to 01:00 EST; 02:30 happens once (EST)
    const fall: number[] = []
    at = Date.parse("2026-10-31T12:00:00Z")
    for (let i = 0; i < 2; i++) {
      at = nextTick("s", t, at)
      fall.push(at)
    }
    expect(fall.map(iso)).toEqual(["2026-11-01T07:30:00.000Z", "2026-11-02T07:30:00.000Z"])
    // "30 1 * * *": 01:30 happens twice that night (EDT, then EST); it ticks once, at the first
    const repeated = timing({ cron: "30 1 * * *", tz: "America/New_York" })
    const first = nextTick("s", repeated, Date.parse("2026-10-31T12:00:00Z"))
    expect([iso(first), iso(nextTick("s", repeated, first))]).toEqual([
      "2026-11-01T05:30:00.000Z",
      "2026-11-02T06:30:00.000Z",
    ])
  })

  it("the fall-back night (America/New_York, 2026-11-01): an every-hour cron runs each real hour, both 01:00s; one naming its hours runs 01:xx once", () => {
    // the ticks a sweep every second makes from 23:30 EDT to 03:30 EST, as local times
    const local = (ms: number) =>
      new Date(ms).toLocaleTimeString("en-US", { timeZone: "America/New_York", hour12: false, timeZoneName: "short" })
    const swept = (cron: string) => {
      const t = timing({ cron, tz: "America/New_York" })
      const end = Date.parse("2026-11-01T08:30:00Z")
      let now = Date.parse("2026-11-01T03:30:00Z")
      let due = nextTick("s", t, now)
      const made: number[] = []
      for (; now < end; now += 1000) {
        if (now < due) continue
        const plan = dueTicks("s", t, 1, due, now)
        made.push(...plan.ticks)
        due = plan.next
      }
      expect(new Set(made).size).toBe(made.length) // no tick id twice
      return made.map(local)
    }
    const hourly = ["00:00:00 EDT", "01:00:00 EDT", "01:00:00 EST", "02:00:00 EST", "03:00:00 EST"]
    expect(swept("0 * * * *")).toEqual(hourly)
    expect(swept("0 0-23 * * *")).toEqual(hourly)
    expect(swept("30 1 * * *")).toEqual(["01:30:00 EDT"])
    expect(swept("*/20 1 * * *")).toEqual(["01:00:00 EDT", "01:20:00 EDT", "01:40:00 EDT"])
    expect(swept("0 1-3 * * *")).toEqual(["01:00:00 EDT", "02:00:00 EST", "03:00:00 EST"])
  })

  it("cron without tz is read in UTC; with seconds as a sixth field", () => {
    expect(iso(nextTick("s", timing({ cron: "0 9 * * *" }), Date.parse("2026-01-01T10:00:00Z")))).toBe(
      "2026-01-02T09:00:00.000Z",
    )
    expect(nextTick("s", timing({ cron: "*/5 * * * * *" }), 1_000)).toBe(5_000)
  })

  it("cron's H is seeded by the schedule's name: every process computes the same ticks", () => {
    const a = nextTick("nightly", timing({ cron: "H 3 * * *" }, "nightly"), 0)
    expect(nextTick("nightly", timing({ cron: "H 3 * * *" }, "nightly"), 0)).toBe(a)
  })
})

describe("missed ticks", () => {
  const every = timing({ every: 1000 })

  it("due now: one tick, and the next one after now", () => {
    expect(dueTicks("s", every, 1, 5_000, 5_000)).toEqual({ ticks: [5_000], next: 6_000 })
    expect(dueTicks("s", every, 1, 5_000, 5_400)).toEqual({ ticks: [5_000], next: 6_000 })
  })

  it("a sweep late by at most LATE_TICK_GRACE_MS (a busy machine) makes every tick it missed, not only the latest", () => {
    expect(dueTicks("s", every, 1, 5_000, 7_500)).toEqual({ ticks: [5_000, 6_000, 7_000], next: 8_000 })
    expect(dueTicks("s", every, 1, 5_000, 5_000 + LATE_TICK_GRACE_MS).ticks).toHaveLength(6)
    expect(dueTicks("s", every, 1, 5_000, 5_001 + LATE_TICK_GRACE_MS).ticks).toEqual([10_000])
  })

  it("30 s of downtime: one job for the missed ticks (the latest), not 30", () => {
    expect(dueTicks("s", every, 1, 5_000, 35_500)).toEqual({ ticks: [35_000], next: 36_000 })
  })

  it("catchUp n: the latest n missed ticks, oldest first, never more than were missed", () => {
    expect(dueTicks("s", every, 3, 5_000, 35_500).ticks).toEqual([33_000, 34_000, 35_000])
    expect(dueTicks("s", every, 100, 5_000, 7_000).ticks).toEqual([5_000, 6_000, 7_000])
  })

  it("cron: a year of downtime on a per-minute cron makes the latest catchUp ticks without walking the year", () => {
    const t = timing({ cron: "* * * * *" })
    const due = Date.parse("2025-01-01T00:00:00Z")
    const now = Date.parse("2026-01-01T00:00:30Z")
    const { ticks, next } = dueTicks("s", t, 2, due, now)
    expect(ticks.map(iso)).toEqual(["2025-12-31T23:59:00.000Z", "2026-01-01T00:00:00.000Z"])
    expect(iso(next)).toBe("2026-01-01T00:01:00.000Z")
  })

  it("cron: a tick exactly at now is due", () => {
    const t = timing({ cron: "* * * * *" })
    expect(dueTicks("s", t, 1, 60_000, 60_000)).toEqual({ ticks: [60_000], next: 120_000 })
  })

  it("a stored next tick off the grid (a timing changed under it) is made as it is", () => {
    expect(dueTicks("s", every, 1, 5_500, 5_600)).toEqual({ ticks: [5_500], next: 6_000 })
  })
})

describe("checks", () => {
  it("every under 1 s, both or neither of every and cron, tz with every: refused by field", () => {
    expect(failure(checkWhen("s", { every: 999 }))).toMatchObject({ field: "when.every", value: 999 })
    expect(failure(checkWhen("s", { every: 1.5e3 + 0.5 }))).toMatchObject({ field: "when.every" })
    expect(failure(checkWhen("s", {}))).toMatchObject({ field: "when.every" })
    expect(failure(checkWhen("s", { every: 1000, cron: "* * * * *" }))).toMatchObject({ field: "when.every" })
    expect(failure(checkWhen("s", { every: 1000, tz: "UTC" }))).toMatchObject({ field: "when.tz" })
    expect(failure(checkWhen("s", { every: 1000, catchUp: 0 }))).toMatchObject({ field: "when.catchUp" })
    expect(failure(checkWhen("s", { every: 1000, evry: 1 }))).toMatchObject({ field: "when.evry" })
  })

  it("a cron expression cron-parser cannot read: the expression and the parser's message", () => {
    const e = failure(checkWhen("s", { cron: "61 * * * *" })) as { field: string; value: unknown; message: string }
    expect(e).toMatchObject({ field: "when.cron", value: "61 * * * *" })
    expect(e.message).toContain("Constraint error, got value 61 expected range 0-59")
  })

  it("an unknown time zone is refused by name", () => {
    expect(failure(checkWhen("s", { cron: "* * * * *", tz: "Mars/Olympus" }))).toMatchObject({
      field: "when.tz",
      value: "Mars/Olympus",
    })
  })

  it("names: 1-100 characters of letters, digits, '.', '_', ':', '-'", () => {
    expect(Result.isSuccess(checkScheduleName("report:daily.v2_x-1"))).toBe(true)
    for (const bad of ["", "a b", "a@b", "x".repeat(101), 7, "a,b"]) {
      expect(failure(checkScheduleName(bad))).toMatchObject({ field: "name" })
    }
  })

  it("job options: an id, a delay or a dedupe key do not apply to a schedule's jobs", () => {
    expect(Result.getOrThrow(checkScheduledJobOptions({ maxAttempts: 5 }))).toEqual({ maxAttempts: 5, timeoutMs: 0 })
    expect(failure(checkScheduledJobOptions({ id: "x" }))).toMatchObject({ field: "options.id" })
    expect(failure(checkScheduledJobOptions({ delayMs: 5 }))).toMatchObject({ field: "options.delayMs" })
    expect(failure(checkScheduledJobOptions({ maxAttempts: 0 }))).toMatchObject({ field: "options.maxAttempts" })
  })
})

describe("tick ids", () => {
  it("a tick's job id gives its tick back; a ULID or custom id gives none", () => {
    expect(scheduledForOf(tickJobId("report:daily", 1_767_225_600_000))).toBe(1_767_225_600_000)
    expect(scheduledForOf("01JXYZABCDEFGHJKMNPQRSTVWX")).toBeUndefined()
    expect(scheduledForOf("order:42")).toBeUndefined()
  })
})

describe("the sweep loop's wait", () => {
  it("a pass due: no wait; else the time to the pass, at most the 1 s look; a tick sooner: the tick, never under 10 ms", () => {
    expect(nextWait(0, -1)).toBe(0)
    expect(nextWait(-5, 400)).toBe(0)
    expect(nextWait(15_000, -1)).toBe(SCHEDULE_LOOK_MS)
    expect(nextWait(300, -1)).toBe(300)
    expect(nextWait(15_000, 400)).toBe(400)
    expect(nextWait(15_000, 0)).toBe(10)
    expect(nextWait(15_000, 60_000)).toBe(SCHEDULE_LOOK_MS)
  })

  it("the interval between passes is jittered ±20 %", () => {
    expect(jittered(15_000, 0.5)).toBe(15_000)
    expect(jittered(15_000, 0)).toBe(12_000)
    expect(jittered(15_000, 1)).toBe(18_000)
  })
})
