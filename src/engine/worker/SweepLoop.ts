/**
 * The in-process sweep: with `sweep` on, every worker runs a sweep pass now and then
 * (the interval jittered ±20 % so workers spread out), reclaiming leases that expired
 * (Sweeper.ts) and ticking the queue's schedules: when a schedule's next tick comes
 * before the next pass, the loop wakes at that tick instead (a queue without schedules
 * keeps the interval). Jobs a pass moved to dead are reported through the `dead` hook (reason
 * `lease-expired`, or `timeout` for a lease reclaimed at its timeout limit).
 */
import * as Effect from "effect/Effect"
import { sweepPass } from "../admin/Sweeper.ts"
import type { SweepResult, SweptDead } from "../calls/Commands.ts"
import type { WorkerContext } from "./Context.ts"

/** Most time one in-process sweep pass takes before it stops for this round. */
const SWEEP_PASS_MAX_MS = 100

/** Shortest wait before a pass woken for a tick (a tick reported due at once, e.g. after a clock step). */
const MIN_TICK_WAIT_MS = 10

/** The wait before the next pass: the jittered interval, or less when a schedule's next tick comes first. */
export const nextWait = (intervalMs: number, nextTickMs: number, jitter: number = Math.random()): number => {
  const interval = Math.round(intervalMs * (0.8 + jitter * 0.4))
  return nextTickMs < 0 ? interval : Math.min(interval, Math.max(MIN_TICK_WAIT_MS, nextTickMs))
}

/** The sweep loop, to be supervised: forever, one pass every `intervalMs` (jittered), or at a schedule's tick. */
export const sweepLoop = <A>(ctx: WorkerContext<A>, intervalMs: number, limit: number) =>
  Effect.gen(function* () {
    let nextTickMs = -1
    while (true) {
      yield* Effect.sleep(nextWait(intervalMs, nextTickMs))
      // jobs this pass moved to dead (lease-expired) are reported through the dead hook
      const died: SweptDead[] = []
      const onBatch = (_: unknown, last: SweepResult) => died.push(...last.deadJobs)
      const totals = yield* sweepPass(ctx.commands, { limit, maxMs: SWEEP_PASS_MAX_MS, onBatch }).pipe(
        Effect.catch((e) => Effect.as(ctx.report(e), undefined)),
      )
      nextTickMs = totals?.nextTickMs ?? -1
      for (const d of died) {
        // a lease reclaimed at its timeout limit died of its timeout (lua/sweep.lua: "timed out…")
        const timedOut = d.message.startsWith("timed out")
        const error = Object.assign(new Error(d.message), { name: timedOut ? "JobTimedOut" : "LeaseExpired" })
        const reason = timedOut ? "timeout" : "lease-expired"
        yield* Effect.sync(() => ctx.hooks.dead?.({ id: d.id, token: d.token }, reason, error))
      }
    }
  })
