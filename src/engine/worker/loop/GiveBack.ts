/**
 * Close began (or the worker failed): jobs leased and not started go straight back to the
 * queue, attempts unchanged. Every place that meets such jobs (a reserve landing after
 * close, the loop's own queue of landed calls, jobs not yet started) calls this.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { Reservation } from "../../calls/Commands.ts"
import type { LoopDeps } from "./LoopDeps.ts"

/** The jobs a reserve call's answer leased (none when it failed). */
export const reservedJobs = (
  reserved: Exit.Exit<{ readonly jobs: ReadonlyArray<Reservation> }, unknown>,
): ReadonlyArray<Reservation> => (Exit.isSuccess(reserved) ? reserved.value.jobs : [])

/**
 * Close began (or the worker failed): give `jobs`, leased and not started, straight back
 * to the queue, attempts unchanged. A failure is reported; a job not given back is
 * reclaimed by a sweep after its lease.
 */
export const giveBack = (
  ctx: Pick<LoopDeps, "commands" | "report">,
  jobs: ReadonlyArray<Reservation>,
): Effect.Effect<void> => (jobs.length === 0 ? Effect.void : ctx.commands.release(jobs).pipe(Effect.catch(ctx.report)))
