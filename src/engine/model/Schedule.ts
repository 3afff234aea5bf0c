/**
 * Schedules (recurring jobs): what a schedule is, its checks, and its tick times. Pure:
 * every time here is given (the Redis clock, read by the caller), so the tick times of a
 * schedule are the same on every process that computes them.
 *
 * A tick's job id is `<name>@<tick ms>`: `@` is in no generated id (ULIDs) and in no
 * custom id (`JobId.ts`), so a tick's id cannot be taken by any other job, and a tick
 * sent twice finds its own job and makes no second one.
 */
import { createRequire } from "node:module"
import type * as CronParser from "cron-parser"
import * as Result from "effect/Result"
import { InvalidOptions } from "./Errors.ts"
import { type Checked, checkIntegerOr, checkKnownKeys, checkObject, Limits } from "./Validate.ts"

/** When a schedule ticks: every `every` ms (on multiples of it since the epoch), or by a cron expression in `tz`. */
export type ScheduleWhen =
  | {
      /** Ms between ticks, at least {@link SCHEDULE_LIMITS}.everyMs.min (1 s); ticks fall on multiples of it since the epoch. */
      readonly every: number
      readonly cron?: undefined
      readonly tz?: undefined
      /** Jobs made for ticks missed while nothing swept (downtime): the latest `catchUp` of them. Default 1; 1–100. */
      readonly catchUp?: number | undefined
    }
  | {
      /** A cron expression (5 fields, or 6 with seconds first), as cron-parser reads it. */
      readonly cron: string
      /** The IANA time zone the expression is read in (daylight-saving changes follow it). Default "UTC". */
      readonly tz?: string | undefined
      readonly every?: undefined
      /** Jobs made for ticks missed while nothing swept (downtime): the latest `catchUp` of them. Default 1; 1–100. */
      readonly catchUp?: number | undefined
    }

/** A schedule's timing, checked: `every` ms, or `cron` in `tz`. */
export type Timing =
  | { readonly kind: "every"; readonly every: number }
  | { readonly kind: "cron"; readonly cron: string; readonly tz: string }

/** Bounds of a schedule's settings. */
export const SCHEDULE_LIMITS = {
  /** `every`: 1 s .. 366 days. */
  everyMs: { min: 1000, max: 31_622_400_000 },
  /** `catchUp`: 1 .. 100 jobs for missed ticks. */
  catchUp: { min: 1, max: 100 },
  /** Schedules one queue holds: at most 1000. */
  perQueue: 1000,
  /**
   * One read of schedules (a page of `schedulePage`, a sweep's batch of due ones): at most
   * 100 schedules and 1 MiB of schedule JSON (at least one schedule, which can be up to
   * `maxPayloadBytes` plus its options), so no call moves every payload at once.
   */
  read: { count: 100, bytes: 1024 * 1024 },
} as const

const NAME = /^[A-Za-z0-9._:-]{1,100}$/

/** A schedule name: 1–100 characters from letters, digits, `.`, `_`, `:`, `-`. */
export const checkScheduleName = (name: unknown): Checked<string> =>
  typeof name === "string" && NAME.test(name)
    ? Result.succeed(name)
    : Result.fail(
        new InvalidOptions({
          field: "name",
          value: name,
          reason: "must be a schedule name: 1-100 characters from letters, digits, '.', '_', ':' and '-'",
        }),
      )

/** True when `tz` is an IANA time zone this runtime knows. */
const knownZone = (tz: string): boolean => {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz })
    return true
  } catch {
    return false
  }
}

let cronParser: typeof CronParser | undefined

/**
 * Parse `cron` in `tz` from `from` (ms). `name` seeds cron-parser's `H`, so every process picks the same.
 * cron-parser (and luxon) is required on the first cron seen: an import of leaseq does not load it.
 */
const parse = (cron: string, tz: string, from: number, name: string) => {
  cronParser ??= createRequire(import.meta.url)("cron-parser") as typeof CronParser
  return cronParser.CronExpressionParser.parse(cron, { currentDate: from, tz, hashSeed: name })
}

/** The cron half of `when`: the expression parsed (its error named) and the zone known. */
const checkCron = (name: string, o: Record<string, unknown>): Checked<Timing> => {
  const fail = (field: string, v: unknown, reason: string) =>
    Result.fail(new InvalidOptions({ field: `when.${field}`, value: v, reason }))
  if (typeof o.cron !== "string" || o.cron.trim() === "" || o.cron.length > 256) {
    return fail("cron", o.cron, "must be a cron expression (a string of 5 or 6 fields, at most 256 characters)")
  }
  const tz = o.tz ?? "UTC"
  if (typeof tz !== "string" || !knownZone(tz)) {
    return fail("tz", tz, "must be an IANA time zone such as 'UTC' or 'America/New_York'")
  }
  const cron = o.cron
  try {
    parse(cron, tz, 0, name).next()
  } catch (e) {
    return fail("cron", cron, `is not a cron expression cron-parser reads: ${(e as Error).message}`)
  }
  return Result.succeed({ kind: "cron", cron, tz })
}

/** `when` checked: its timing and catch-up; the expression parsed and the zone known, else {@link InvalidOptions}. */
export const checkWhen = (
  name: string,
  value: unknown,
): Checked<{ readonly timing: Timing; readonly catchUp: number }> =>
  Result.gen(function* () {
    const o = yield* checkObject("when", value)
    yield* checkKnownKeys("when", o, ["every", "cron", "tz", "catchUp"])
    const catchUp = yield* checkIntegerOr("when.catchUp", o.catchUp, 1, SCHEDULE_LIMITS.catchUp)
    const fail = (field: string, v: unknown, reason: string) =>
      Result.fail(new InvalidOptions({ field: `when.${field}`, value: v, reason }))
    if ((o.every === undefined) === (o.cron === undefined)) {
      return yield* fail("every", o.every, "give one of every (ms between ticks) or cron (an expression)")
    }
    if (o.every === undefined) return { timing: yield* checkCron(name, o), catchUp }
    if (o.tz !== undefined) return yield* fail("tz", o.tz, "goes with cron; every counts ms and has no time zone")
    const every = yield* checkIntegerOr("when.every", o.every, 0, SCHEDULE_LIMITS.everyMs)
    return { timing: { kind: "every" as const, every }, catchUp }
  })

/** The timing as one string (`every:<ms>` or `cron:<tz>:<expression>`): a replace keeping it keeps the next tick. */
export const timingKey = (t: Timing): string => (t.kind === "every" ? `every:${t.every}` : `cron:${t.tz}:${t.cron}`)

/** The first tick of `timing` after `now` (ms). */
export const nextTick = (name: string, timing: Timing, now: number): number => {
  if (timing.kind === "every") return (Math.floor(now / timing.every) + 1) * timing.every
  return parse(timing.cron, timing.tz, now, name).next().getTime()
}

/**
 * How late a sweep may come to a due tick and still make every tick it missed: a sweep at
 * most this long after the stored next tick is late, not back from downtime (a busy
 * machine, a sweeper's start-up), so no tick of a running fleet is merged away. At most
 * 5 s / 1 s + 1 = 6 ticks (a tick is at least 1 s apart).
 */
export const LATE_TICK_GRACE_MS = 5000

/**
 * The ticks a sweep makes jobs for, when the stored next tick `due` has come at `now`:
 * every tick in [due, now] when `now` is at most LATE_TICK_GRACE_MS past `due`, else (after
 * downtime) the latest `catchUp` of them (oldest first; `due` itself when none of the grid
 * falls there, after a change of timing), and the tick after `now`. Bounded: it never walks
 * the ticks missed over a long downtime one by one.
 */
export const dueTicks = (
  name: string,
  timing: Timing,
  catchUp: number,
  due: number,
  now: number,
): { readonly ticks: ReadonlyArray<number>; readonly next: number } => {
  const ticks: number[] = []
  if (now - due <= LATE_TICK_GRACE_MS) catchUp = Math.max(catchUp, LATE_TICK_GRACE_MS / 1000 + 1)
  if (timing.kind === "every") {
    const last = Math.floor(now / timing.every) * timing.every
    for (let t = last; t >= due && ticks.length < catchUp; t -= timing.every) ticks.unshift(t)
  } else {
    // cron-parser's `prev` answers ticks strictly before its date (whole seconds): start a second late
    const back = parse(timing.cron, timing.tz, now + 1000, name)
    while (ticks.length < catchUp) {
      const t = back.prev().getTime()
      if (t < due) break
      if (t <= now) ticks.unshift(t)
    }
  }
  if (ticks.length === 0) ticks.push(due)
  return { ticks, next: nextTick(name, timing, now) }
}

/** The id of the job schedule `name` makes for its tick at `at` (ms). */
export const tickJobId = (name: string, at: number): string => `${name}@${at}`

const TICK_ID = /^[A-Za-z0-9._:-]{1,100}@(\d{1,16})$/

/** The tick time (ms) of a job a schedule made (from its id), or undefined for any other job. */
export const scheduledForOf = (id: string): number | undefined => {
  // no other id has an `@`: most answer here, without the pattern
  if (id.indexOf("@") < 0) return undefined
  const m = TICK_ID.exec(id)
  return m ? Number(m[1]) : undefined
}

/** Options of the jobs a schedule makes: the job options that apply to every tick's job. */
export interface ScheduledJobOptions {
  /** As `add`'s `maxAttempts`. Default 3. */
  readonly maxAttempts?: number | undefined
  /** As `add`'s `timeoutMs`. Default: none (the worker's). */
  readonly timeoutMs?: number | undefined
}

/** The job options of a schedule checked (`maxAttempts`, `timeoutMs`; an id, delay or dedupe key refused by name). */
export const checkScheduledJobOptions = (
  value: unknown,
): Checked<{ readonly maxAttempts: number; readonly timeoutMs: number }> =>
  Result.gen(function* () {
    const o = yield* checkObject("options", value)
    for (const k of ["id", "delayMs", "dedupeKey", "dedupeTtlMs", "dedupeUntil"]) {
      if (o[k] !== undefined) {
        return yield* Result.fail(
          new InvalidOptions({
            field: `options.${k}`,
            value: o[k],
            reason: "does not apply to a schedule's jobs: each tick's job has the id <name>@<tick>, made once",
          }),
        )
      }
    }
    yield* checkKnownKeys("options", o, ["maxAttempts", "timeoutMs"])
    const maxAttempts = yield* checkIntegerOr("options.maxAttempts", o.maxAttempts, 3, Limits.maxAttempts)
    const timeoutMs = yield* checkIntegerOr("options.timeoutMs", o.timeoutMs, 0, Limits.timeoutMs)
    return { maxAttempts, timeoutMs }
  })

/** A schedule as stored (the `schedules` hash holds its JSON) and listed. */
export interface StoredSchedule {
  readonly name: string
  /** {@link timingKey} of its timing. */
  readonly key: string
  readonly every?: number
  readonly cron?: string
  readonly tz?: string
  readonly catchUp: number
  /** The payload of each job, as stored (JSON text). */
  readonly payload: string
  readonly maxAttempts: number
  readonly timeoutMs: number
}

/** The timing of a stored schedule. */
export const timingOf = (s: StoredSchedule): Timing =>
  s.every !== undefined ? { kind: "every", every: s.every } : { kind: "cron", cron: s.cron ?? "", tz: s.tz ?? "UTC" }
