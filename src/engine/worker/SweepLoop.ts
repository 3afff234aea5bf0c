/**
 * The in-process sweep: with `sweep` on, every worker runs a sweep pass when it starts and
 * then now and then (the interval jittered ±20 % so workers spread out), reclaiming leases
 * that expired (Sweeper.ts) and ticking the queue's schedules. Between passes it looks at the
 * schedules at least every {@link SCHEDULE_LOOK_MS} (one small read: a schedule made while the
 * worker runs is seen within a second), and wakes at a schedule's next tick when that comes
 * first; a look or a tick's wake ticks the due schedules only. Jobs a pass moved to dead are
 * reported through the `dead` hook (reason `lease-expired`, or `timeout` for a lease
 * reclaimed at its timeout limit).
 */
import * as Effect from "effect/Effect"
import { sweepPass } from "../admin/Sweeper.ts"
import { tickSchedules } from "../admin/Ticker.ts"
import type { Commands, SweepResult, SweptDead } from "../calls/Commands.ts"
import type { WorkerHooks } from "./WorkerHooks.ts"

/** What the sweep loop uses of the worker. */
interface SweepDeps {
  readonly commands: Commands
  readonly hooks: Pick<Required<WorkerHooks<unknown>>, "dead">
  /** Report an error the worker survives on the error hook. */
  readonly report: (e: unknown) => Effect.Effect<void>
}

/** Most time one in-process sweep pass takes before it stops for this round. */
const SWEEP_PASS_MAX_MS = 100

/** Shortest wait before a pass woken for a tick (a tick reported due at once, e.g. after a clock step). */
const MIN_TICK_WAIT_MS = 10

/**
 * Longest wait between two looks at the queue's schedules (one `schedules` read of
 * O(log S), S schedules): a schedule made while the worker runs ticks within this of its
 * first tick. Cost: one small script call a second per worker, schedules or not.
 */
export const SCHEDULE_LOOK_MS = 1000

/** The interval between two full passes, jittered ±20 % (`jitter` in [0, 1)). */
export const jittered = (intervalMs: number, jitter: number = Math.random()): number =>
  Math.round(intervalMs * (0.8 + jitter * 0.4))

/**
 * The wait before the loop wakes: the time left to the next full pass (`untilPassMs`), at
 * most {@link SCHEDULE_LOOK_MS}, or less when a schedule's next tick comes first (`nextTickMs`,
 * -1: no schedule), never under {@link MIN_TICK_WAIT_MS} for a tick. 0: a pass is due now.
 */
export const nextWait = (untilPassMs: number, nextTickMs: number): number => {
  if (untilPassMs <= 0) return 0
  const look = Math.min(untilPassMs, SCHEDULE_LOOK_MS)
  return nextTickMs < 0 ? look : Math.min(look, Math.max(MIN_TICK_WAIT_MS, nextTickMs))
}

/** A look (or a tick's wake): the due schedules ticked; ms to the next tick, -1 when none or on a failure (the next pass reports it). */
const look = (ctx: SweepDeps) =>
  tickSchedules(ctx.commands.client, ctx.commands.keys).pipe(
    Effect.map((t) => t.nextTickMs),
    Effect.catch(() => Effect.succeed(-1)),
  )

/** One full pass: ms to the next tick (-1: none); jobs it moved to dead reported through the dead hook. */
const pass = (ctx: SweepDeps, limit: number) =>
  Effect.gen(function* () {
    // jobs this pass moved to dead (lease-expired) are reported through the dead hook
    const died: SweptDead[] = []
    const onBatch = (_: unknown, last: SweepResult) => died.push(...last.deadJobs)
    const totals = yield* sweepPass(ctx.commands, { limit, maxMs: SWEEP_PASS_MAX_MS, onBatch }).pipe(
      Effect.catch((e) => Effect.as(ctx.report(e), undefined)),
    )
    for (const d of died) {
      // a lease reclaimed at its timeout limit died of its timeout (lua/sweep.lua: "timed out…")
      const timedOut = d.message.startsWith("timed out")
      const error = Object.assign(new Error(d.message), { name: timedOut ? "JobTimedOut" : "LeaseExpired" })
      const reason = timedOut ? "timeout" : "lease-expired"
      yield* Effect.sync(() => ctx.hooks.dead?.({ id: d.id, token: d.token }, reason, error))
    }
    return totals?.nextTickMs ?? -1
  })

/**
 * The sweep loop, to be supervised: a pass at once, then one every `intervalMs` (jittered);
 * between passes the due schedules are ticked at each tick and looked at every second.
 */
export const sweepLoop = (ctx: SweepDeps, intervalMs: number, limit: number) =>
  Effect.gen(function* () {
    let nextTickMs = -1
    // the first pass runs at once: a due schedule ticks when a worker starts, not an interval later
    let untilPassMs = 0
    while (true) {
      const wait = nextWait(untilPassMs, nextTickMs)
      if (wait > 0) yield* Effect.sleep(wait)
      untilPassMs -= wait
      if (untilPassMs > 0) {
        nextTickMs = yield* look(ctx)
      } else {
        untilPassMs = jittered(intervalMs)
        nextTickMs = yield* pass(ctx, limit)
      }
    }
  })
