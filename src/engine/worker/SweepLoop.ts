/**
 * The in-process sweep: with `sweep` on, every worker runs a sweep pass now and then
 * (the interval jittered ±20 % so workers spread out), reclaiming leases that expired
 * (Sweeper.ts). Jobs a pass moved to dead are reported through the `dead` hook (reason
 * `lease-expired`, or `timeout` for a lease reclaimed at its timeout limit).
 */
import * as Effect from "effect/Effect"
import { sweepPass } from "../admin/Sweeper.ts"
import type { SweepResult, SweptDead } from "../calls/Commands.ts"
import type { WorkerContext } from "./Context.ts"

/** Most time one in-process sweep pass takes before it stops for this round. */
const SWEEP_PASS_MAX_MS = 100

/** The sweep loop, to be supervised: forever, one pass every `intervalMs` (jittered). */
export const sweepLoop = <A>(ctx: WorkerContext<A>, intervalMs: number, limit: number) =>
  Effect.gen(function* () {
    while (true) {
      yield* Effect.sleep(Math.round(intervalMs * (0.8 + Math.random() * 0.4)))
      // jobs this pass moved to dead (lease-expired) are reported through the dead hook
      const died: SweptDead[] = []
      const onBatch = (_: unknown, last: SweepResult) => died.push(...last.deadJobs)
      yield* sweepPass(ctx.commands, { limit, maxMs: SWEEP_PASS_MAX_MS, onBatch }).pipe(Effect.catch(ctx.report))
      for (const d of died) {
        // a lease reclaimed at its timeout limit died of its timeout (lua/sweep.lua: "timed out…")
        const timedOut = d.message.startsWith("timed out")
        const error = Object.assign(new Error(d.message), { name: timedOut ? "JobTimedOut" : "LeaseExpired" })
        const reason = timedOut ? "timeout" : "lease-expired"
        yield* Effect.sync(() => ctx.hooks.dead?.({ id: d.id, token: d.token }, reason, error))
      }
    }
  })
