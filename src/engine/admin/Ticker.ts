/**
 * A sweep's ticks of the queue's schedules: read the due ones (`schedules.lua`), compute
 * each one's tick times and next tick from the Redis time (`Schedule.ts`), and make the
 * jobs with `tick.lua`, which makes a tick's jobs once however many sweepers run it.
 * Costs one small read per pass when the queue has no schedule.
 */
import * as Effect from "effect/Effect"
import type { RedisClient } from "../../redis/Client.ts"
import { runScript, type ScriptFailure } from "../calls/Commands.ts"
import { Scripts } from "../calls/Scripts.ts"
import type { QueueKeys } from "../model/Keys.ts"
import { dueTicks, SCHEDULE_LIMITS, timingOf } from "../model/Schedule.ts"
import type { ReadSchedule } from "../scripts/ScheduleScripts.ts"

/** Due schedules ticked per read. */
export const TICK_BATCH = 100

/** What the ticks of one pass did. */
export interface Ticks {
  /** Jobs the ticks made. */
  readonly made: number
  /** ms until the soonest next tick (Redis clock), or -1 when the queue has no schedule. */
  readonly nextTickMs: number
}

/** What one schedule's tick did: jobs made, its next tick after it (-1: gone), and whether its next tick moved. */
interface OneTick {
  readonly made: number
  readonly after: number
  readonly moved: boolean
}

/** Tick one due schedule read at the Redis time `now`. */
const tickOne = (client: RedisClient, keys: QueueKeys, read: ReadSchedule, now: number) => {
  const { schedule, next: due } = read
  let plan: ReturnType<typeof dueTicks>
  try {
    plan = dueTicks(schedule.name, timingOf(schedule), schedule.catchUp, due, now)
  } catch {
    // a timing this version cannot read (stored by another): left for one that can
    return Effect.succeed<OneTick>({ made: 0, after: -1, moved: false })
  }
  return runScript(client, keys, Scripts.tick, { name: schedule.name, due, next: plan.next, at: plan.ticks }).pipe(
    Effect.map((r): OneTick => {
      if (r.outcome === "ticked") return { made: r.made.length, after: plan.next, moved: true }
      if (r.outcome === "stale") return { made: 0, after: r.next, moved: true }
      // the Redis clock went back between the read and the tick: due again at once
      return { made: 0, after: due, moved: false }
    }),
  )
}

/** Tick every due schedule of the queue of `keys` once (in reads of {@link TICK_BATCH}). */
export const tickSchedules = (client: RedisClient, keys: QueueKeys): Effect.Effect<Ticks, ScriptFailure> =>
  Effect.gen(function* () {
    let made = 0
    while (true) {
      // at most TICK_BATCH and SCHEDULE_LIMITS.read.bytes of schedules per read (at least one)
      const read = yield* runScript(client, keys, Scripts.schedules, {
        due: true,
        limit: TICK_BATCH,
        maxBytes: SCHEDULE_LIMITS.read.bytes,
      })
      const each = yield* Effect.forEach(read.schedules, (s) => tickOne(client, keys, s, read.now))
      made += each.reduce((n, t) => n + t.made, 0)
      // read again only for more due schedules, and only when this batch's next ticks moved
      if (!read.more || !each.some((t) => t.moved)) {
        const nexts = [read.soonest, ...each.map((t) => t.after)].filter((t) => t >= 0)
        return { made, nextTickMs: nexts.length === 0 ? -1 : Math.max(0, Math.min(...nexts) - read.now) }
      }
    }
  })
