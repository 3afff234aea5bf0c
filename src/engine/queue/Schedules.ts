/**
 * A queue's schedules (recurring jobs): `schedule` (create or replace), `unschedule` and
 * the list, validated before anything is written and each call bounded like the queue's
 * others. The sweep makes each tick's job (`admin/Ticker.ts`). A partitioned queue keeps
 * its schedules, and their jobs, in partition 0.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { RedisClient } from "../../redis/Client.ts"
import { runScript, type ScriptFailure } from "../calls/Commands.ts"
import { Scripts } from "../calls/Scripts.ts"
import { InvalidOptions, InvalidPayload, QueueClosed, type RedisUnavailable } from "../model/Errors.ts"
import type { QueueKeys } from "../model/Keys.ts"
import {
  checkScheduledJobOptions,
  checkScheduleName,
  checkWhen,
  nextTick,
  SCHEDULE_LIMITS,
  type ScheduledJobOptions,
  type StoredSchedule,
  timingKey,
} from "../model/Schedule.ts"
import { type Checked, checkIntegerOr, checkKnownKeys, checkObject } from "../model/Validate.ts"
import type { ScheduleChange, ScheduleCursor } from "../scripts/ScheduleScripts.ts"
import { readOnly } from "./Adding.ts"

export type { ScheduledJobOptions, ScheduleWhen } from "../model/Schedule.ts"
export type { ScheduleChange } from "../scripts/ScheduleScripts.ts"

/** What a schedule call can fail with (as job control: `ControlError` of `QueueApi.ts`). */
type ControlError = InvalidOptions | QueueClosed | ScriptFailure | RedisUnavailable

/** The job each tick makes: its payload (encoded by the face: JSON text) and options. */
export interface ScheduleJob {
  readonly payload: string
  readonly options?: ScheduledJobOptions | undefined
}

/** What `schedule` did, and the schedule's next run. */
export interface ScheduleSet {
  readonly name: string
  /** `created`, `replaced` (another timing: a new next run), or `kept` (same timing: its next run kept). */
  readonly change: ScheduleChange
  /** Its next tick (ms since the epoch, Redis clock). */
  readonly nextRunAt: number
}

/** A schedule as listed; `P` is the payload's type (JSON text in the engine). */
export interface ScheduleInfo<P = string> {
  readonly name: string
  /** Ms between ticks (an `every` schedule). */
  readonly every?: number
  /** The cron expression and its time zone (a `cron` schedule). */
  readonly cron?: string
  readonly tz?: string
  /** Jobs made for missed ticks after downtime (the latest of them). */
  readonly catchUp: number
  readonly payload: P
  readonly maxAttempts: number
  /** The jobs' timeoutMs; 0: none (the worker's). */
  readonly timeoutMs: number
  /** Its next tick (ms since the epoch, Redis clock). */
  readonly nextRunAt: number
}

/** The schedule calls of a queue. */
export interface ScheduleControl {
  readonly schedule: (
    name: unknown,
    when: unknown,
    job: ScheduleJob,
  ) => Effect.Effect<ScheduleSet, ControlError | InvalidPayload>
  readonly unschedule: (name: unknown) => Effect.Effect<boolean, ControlError>
  /**
   * One page of the schedules, soonest next run first: at most `count` (1 to 100, default
   * 100) and 1 MiB of schedule JSON (at least one), after `cursor` (the page before's).
   */
  readonly page: (options?: SchedulePageOptions) => Effect.Effect<SchedulePage, ControlError>
  /** Every schedule with its next run, soonest first: read page by page (see `page`). */
  readonly list: Effect.Effect<ReadonlyArray<ScheduleInfo>, ControlError>
}

/** Options of {@link ScheduleControl.page}. */
export interface SchedulePageOptions {
  /** The `cursor` of the page before; none for the first page. */
  readonly cursor?: string | undefined
  /** Schedules in the page: 1 to 100. Default 100. */
  readonly count?: number | undefined
}

/** A page of schedules, and the cursor of the next (absent on the last page). */
export interface SchedulePage<P = string> {
  readonly schedules: ReadonlyArray<ScheduleInfo<P>>
  readonly cursor?: string | undefined
}

/** A page's cursor as text: the last schedule's next tick and name. */
const cursorText = (c: ScheduleCursor): string => `${c.next}:${c.name}`

/** A cursor `cursorText` made, back; else the {@link InvalidOptions}. */
const checkPage = (value: unknown): Checked<{ readonly after?: ScheduleCursor; readonly count: number }> => {
  const o = checkObject("options", value ?? {})
  if (Result.isFailure(o)) return Result.fail(o.failure)
  const known = checkKnownKeys("options", o.success, ["cursor", "count"])
  if (Result.isFailure(known)) return Result.fail(known.failure)
  const { cursor } = o.success
  const m = typeof cursor === "string" ? /^(\d{1,16}):(.+)$/.exec(cursor) : null
  if (cursor !== undefined && (m === null || !Result.isSuccess(checkScheduleName(m[2])))) {
    return Result.fail(
      new InvalidOptions({
        field: "cursor",
        value: cursor,
        reason: "must be the cursor of the page before, as it was",
      }),
    )
  }
  const count = checkIntegerOr("count", o.success.count, SCHEDULE_LIMITS.read.count, {
    min: 1,
    max: SCHEDULE_LIMITS.read.count,
  })
  return Result.map(count, (n) => ({ count: n, ...(m === null ? {} : { after: { next: Number(m[1]), name: m[2]! } }) }))
}

/** The stored form of a schedule as listed. */
const infoOf = (s: StoredSchedule, nextRunAt: number): ScheduleInfo => ({
  name: s.name,
  ...(s.every !== undefined ? { every: s.every } : { cron: s.cron ?? "", tz: s.tz ?? "UTC" }),
  catchUp: s.catchUp,
  payload: s.payload,
  maxAttempts: s.maxAttempts,
  timeoutMs: s.timeoutMs,
  nextRunAt,
})

/** A payload over the queue's `maxPayloadBytes`, as `add` refuses it. */
const checkSize = (payload: string, maxBytes: number): Effect.Effect<void, InvalidPayload> => {
  const bytes = Buffer.byteLength(payload, "utf8")
  return bytes <= maxBytes
    ? Effect.void
    : Effect.fail(
        new InvalidPayload({
          field: "job.payload",
          reason: `is ${bytes} bytes as JSON; the limit is ${maxBytes} bytes (maxPayloadBytes): store large data elsewhere and enqueue a reference`,
        }),
      )
}

/** The schedule calls of the queue of `keys` on `client` (the queue's bounded client). */
export const makeSchedules = (
  client: RedisClient,
  keys: QueueKeys,
  isClosed: () => boolean,
  maxPayloadBytes: number,
): ScheduleControl => {
  const open = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E | QueueClosed> =>
    Effect.suspend(
      (): Effect.Effect<A, E | QueueClosed> =>
        isClosed() ? Effect.fail(new QueueClosed({ queue: keys.queue })) : effect,
    )
  const read = (limit: number, after?: ScheduleCursor) =>
    readOnly(
      runScript(client, keys, Scripts.schedules, { due: false, limit, maxBytes: SCHEDULE_LIMITS.read.bytes, after }),
    )
  const page = (options?: SchedulePageOptions) =>
    Effect.fromResult(checkPage(options)).pipe(
      Effect.flatMap(({ after, count }) => open(read(count, after))),
      Effect.map(
        (r): SchedulePage => ({
          schedules: r.schedules.map((s) => infoOf(s.schedule, s.next)),
          ...(r.cursor === undefined ? {} : { cursor: cursorText(r.cursor) }),
        }),
      ),
    )
  return {
    schedule: (name, when, job) =>
      Effect.gen(function* () {
        const n = yield* Effect.fromResult(checkScheduleName(name))
        const { timing, catchUp } = yield* Effect.fromResult(checkWhen(n, when))
        const options = yield* Effect.fromResult(checkScheduledJobOptions(job.options))
        yield* checkSize(job.payload, maxPayloadBytes)
        // the first tick comes from the Redis clock, as every tick after it
        const { now } = yield* open(read(0))
        const schedule: StoredSchedule = {
          name: n,
          key: timingKey(timing),
          ...(timing.kind === "every" ? { every: timing.every } : { cron: timing.cron, tz: timing.tz }),
          catchUp,
          payload: job.payload,
          ...options,
        }
        const next = nextTick(n, timing, now)
        const r = yield* runScript(client, keys, Scripts.schedule, { schedule, next, max: SCHEDULE_LIMITS.perQueue })
        return { name: n, change: r.change, nextRunAt: r.next }
      }),
    unschedule: (name) =>
      Effect.fromResult(checkScheduleName(name)).pipe(
        Effect.flatMap((n) => open(runScript(client, keys, Scripts.unschedule, n))),
      ),
    page,
    list: Effect.gen(function* () {
      // page by page, so no call moves every payload at once; a schedule whose next tick
      // moved while paging can come twice: the later reading of it is kept
      const all = new Map<string, ScheduleInfo>()
      let cursor: string | undefined
      do {
        const p: SchedulePage = yield* page(cursor === undefined ? {} : { cursor })
        for (const s of p.schedules) {
          all.delete(s.name)
          all.set(s.name, s)
        }
        cursor = p.cursor
      } while (cursor !== undefined)
      return [...all.values()].sort((a, b) => a.nextRunAt - b.nextRunAt)
    }),
  }
}

/** What a face's `schedule` takes as its third argument: each tick's job, payload not yet encoded. */
export interface ScheduledJob<T> {
  readonly payload: T
  readonly options?: ScheduledJobOptions | undefined
}

/**
 * A face's `schedule`: `job` checked to be `{ payload, options? }`, its payload encoded by
 * the face's `encode` (which checks it), then {@link ScheduleControl.schedule}.
 */
export const scheduleWith = <E, T>(
  control: ScheduleControl,
  name: unknown,
  when: unknown,
  job: ScheduledJob<T>,
  encode: (payload: T) => Effect.Effect<string, E>,
): Effect.Effect<ScheduleSet, ControlError | InvalidPayload | E> =>
  Effect.suspend(() => {
    if (typeof job !== "object" || job === null || !("payload" in job)) {
      return Effect.fail(
        new InvalidOptions({
          field: "job",
          value: job,
          reason: "must be { payload, options? }: the job each tick makes",
        }),
      )
    }
    return encode(job.payload).pipe(
      Effect.flatMap((payload) => control.schedule(name, when, { payload, options: job.options })),
    )
  })

/** A face's list of schedules: each payload decoded by the face's `decode`. */
export const schedulesWith = <P, E>(
  control: ScheduleControl,
  decode: (payload: string) => Effect.Effect<P, E>,
): Effect.Effect<ReadonlyArray<ScheduleInfo<P>>, ControlError | E> =>
  control.list.pipe(
    Effect.flatMap((list) =>
      Effect.forEach(list, (s) => Effect.map(decode(s.payload), (payload) => ({ ...s, payload }))),
    ),
  )

/** A face's page of schedules: each payload decoded by the face's `decode`. */
export const schedulePageWith = <P, E>(
  control: ScheduleControl,
  decode: (payload: string) => Effect.Effect<P, E>,
  options?: SchedulePageOptions,
): Effect.Effect<SchedulePage<P>, ControlError | E> =>
  control
    .page(options)
    .pipe(
      Effect.flatMap((page) =>
        Effect.forEach(page.schedules, (s) => Effect.map(decode(s.payload), (payload) => ({ ...s, payload }))).pipe(
          Effect.map((schedules) => ({ ...page, schedules })),
        ),
      ),
    )
