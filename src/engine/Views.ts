/**
 * Read-only, bounded views of a queue for people looking at it (the dashboard): the
 * first leases by deadline and the first delayed jobs by due time, each with Redis'
 * clock. Each is one script call, O(log N + limit); neither ever scans a whole set.
 */
import * as Effect from "effect/Effect"
import type { RedisClient } from "../redis/Client.ts"
import type { RedisError } from "./Errors.ts"
import { LAYOUT_VERSION, type QueueKeys } from "./Keys.ts"
import { redisError } from "./Replies.ts"
import { type Script, Scripts } from "./Scripts.ts"

/** One live lease. */
export interface LeaseView {
  readonly id: string
  /** Lease deadline, ms on Redis' clock. */
  readonly deadline: number
  readonly token: number | null
  /** 1 + failures + lost leases so far: the attempt this lease is running. */
  readonly attempt: number
  readonly maxAttempts: number | null
}

/** The first leases of a queue, soonest deadline first. */
export interface LeasesView {
  /** Redis' clock when read (ms). */
  readonly now: number
  readonly total: number
  /** Leases past their deadline that no sweep has reclaimed yet. */
  readonly expired: number
  readonly leases: ReadonlyArray<LeaseView>
}

/** The first delayed jobs, soonest first. */
export interface DelayedView {
  readonly now: number
  readonly total: number
  readonly jobs: ReadonlyArray<{ readonly id: string; readonly dueAt: number }>
}

/** The most rows one view call returns. */
export const VIEW_LIMIT_MAX = 1000

const num = (v: unknown): number | null => (v === null || v === undefined || v === false ? null : Number(v))

/** The views of one queue. `limit` is clamped to 1…{@link VIEW_LIMIT_MAX}. */
export const makeViews = (client: RedisClient, k: QueueKeys) => {
  const call = (script: Script, keys: ReadonlyArray<string>, limit: number) =>
    Effect.tryPromise({
      try: () =>
        client.script(script, keys, [LAYOUT_VERSION, Math.max(1, Math.min(VIEW_LIMIT_MAX, Math.floor(limit)))]),
      catch: (e): RedisError => redisError(`${script.name} script`, e, client.describe, client.lastError?.()),
    }).pipe(Effect.map((r) => r as ReadonlyArray<unknown>))
  return {
    leases: (limit: number): Effect.Effect<LeasesView, RedisError> =>
      call(Scripts.leases, [k.active, k.lease, k.fails, k.lost, k.max], limit).pipe(
        Effect.map((r) => {
          const leases: LeaseView[] = []
          for (let i = 3; i + 5 < r.length; i += 6) {
            leases.push({
              id: String(r[i]),
              deadline: Number(r[i + 1]),
              token: num(r[i + 2]),
              attempt: 1 + (num(r[i + 3]) ?? 0) + (num(r[i + 4]) ?? 0),
              maxAttempts: num(r[i + 5]),
            })
          }
          return { now: Number(r[0]), total: Number(r[1]), expired: Number(r[2]), leases }
        }),
      ),
    delayed: (limit: number): Effect.Effect<DelayedView, RedisError> =>
      call(Scripts.delayedList, [k.delayed], limit).pipe(
        Effect.map((r) => {
          const jobs: Array<{ id: string; dueAt: number }> = []
          for (let i = 2; i + 1 < r.length; i += 2) jobs.push({ id: String(r[i]), dueAt: Number(r[i + 1]) })
          return { now: Number(r[0]), total: Number(r[1]), jobs }
        }),
      ),
  }
}

/** The views of one queue. */
export type Views = ReturnType<typeof makeViews>
