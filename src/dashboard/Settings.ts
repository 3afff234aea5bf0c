/**
 * What the queue page shows of a queue's settings: its schedules with their next run on the
 * Redis clock (the first {@link SETTINGS_LIMITS.schedules} by next run, each payload cut
 * inside Redis by `schedules-peek`, so a reading's cost is bounded by bytes whatever the
 * schedules hold).
 */
import * as Effect from "effect/Effect"
import { runScript } from "../engine/calls/Commands.ts"
import { Scripts } from "../engine/calls/Scripts.ts"
import type { QueueKeys } from "../engine/model/Keys.ts"
import type { PeekedSchedule } from "../engine/scripts/PeekScripts.ts"
import type { RedisClient } from "../redis/Client.ts"

/** Rows the settings' tables show (the totals are exact). */
export const SETTINGS_LIMITS = { schedules: 100 } as const

/**
 * How much of the schedules one reading loads in Redis: a schedule up to `loadMax` bytes
 * (its payload inside) is loaded and its payload cut to `cut` bytes; a longer one, or one
 * past `budget` bytes for the reading, is not loaded (only its name, next run and length).
 */
export const SCHEDULE_PEEK_LIMITS = { cut: 300, loadMax: 64 * 1024, budget: 1024 * 1024 } as const

/** A schedule as the page shows it. */
export interface ScheduleRow {
  readonly name: string
  /** Its next run (ms, Redis clock). */
  readonly nextRunAt: number
  readonly every?: number
  readonly cron?: string
  readonly tz?: string
  readonly catchUp?: number
  readonly maxAttempts?: number
  readonly timeoutMs?: number
  /** Its payload's start (null when hidden or not loaded), and its length in bytes. */
  readonly payload: { readonly text: string | null; readonly length: number }
  /** Not loaded: over the limits above (its length is the schedule's). */
  readonly notLoaded?: boolean
}

const rowOf = (p: PeekedSchedule, hide: boolean): ScheduleRow => {
  const s = p.schedule
  if (s === null) return { name: p.name, nextRunAt: p.next, payload: { text: null, length: p.length }, notLoaded: true }
  return {
    name: p.name,
    nextRunAt: p.next,
    ...(s.every !== undefined ? { every: s.every } : { cron: s.cron ?? "", tz: s.tz ?? "UTC" }),
    catchUp: s.catchUp,
    maxAttempts: s.maxAttempts,
    timeoutMs: s.timeoutMs,
    payload: { text: hide ? null : s.payload, length: p.length },
  }
}

/** The schedules of the queue of `keys`: the Redis time, how many, the first by next run. */
export const readSchedules = (client: RedisClient, keys: QueueKeys, hide: boolean) =>
  runScript(client, keys, Scripts.schedulesPeek, {
    count: SETTINGS_LIMITS.schedules,
    limits: { ...SCHEDULE_PEEK_LIMITS, hide },
  }).pipe(Effect.map((r) => ({ now: r.now, total: r.total, rows: r.schedules.map((s) => rowOf(s, hide)) })))

/** The schedules part of a queue reading. */
export type SchedulesView = Effect.Success<ReturnType<typeof readSchedules>>
