/**
 * A sweep pass: call the bounded `sweep` script again and again until nothing
 * expired, due or left to clean up remains, or the time budget runs out; then tick the
 * due schedules (Ticker.ts). Used by workers in-process
 * and by the `leaseq sweep` CLI; safe to run from many places at once.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Commands, SweepResult, SweptDead } from "../calls/Commands.ts"
import { DEFAULT_SWEEP_LIMIT } from "../model/CallDefaults.ts"
import { drainOutbox } from "./Outbox.ts"
import { tickSchedules } from "./Ticker.ts"

/** Options of one sweep pass. */
export interface SweepPassOptions {
  /** Jobs per script call (reclaimed, and separately promoted). Default 500 (keeps one call near 5 ms). */
  readonly limit?: number | undefined
  /** Stop starting new calls after this many ms. Default: no limit. */
  readonly maxMs?: number | undefined
  /** Called after every script call (progress; `last.deadJobs` lists every job that call moved to dead). */
  readonly onBatch?: ((total: SweepTotals, last: SweepResult) => void) | undefined
}

/** What one sweep pass did, summed over its script calls. */
export interface SweepTotals {
  readonly queue: string
  readonly reclaimed: number
  /** Jobs moved to dead (reason `lease-expired`); the first {@link SWEEP_DEAD_LISTED} are in `deadJobs`. */
  readonly dead: number
  readonly promoted: number
  /** Expired dedupe keys removed. */
  readonly dedupeDropped: number
  /** Finished jobs (completed, cancelled, dead) deleted by the queue's retention (count or age). */
  readonly trimmed: number
  /** The first {@link SWEEP_DEAD_LISTED} jobs moved to dead, in order. */
  readonly deadJobs: ReadonlyArray<SweptDead>
  /** Script calls made. */
  readonly calls: number
  /** True when the pass stopped at `maxMs` with work left. */
  readonly incomplete: boolean
  /** ms until the earliest live lease expires, or -1 when nothing is active. */
  readonly nextDeadlineMs: number
  /** Jobs the schedules' due ticks made. */
  readonly scheduled: number
  /** ms until the soonest next tick of a schedule (Redis clock), or -1 when the queue has none. */
  readonly nextTickMs: number
}

export { DEFAULT_SWEEP_LIMIT } from "../model/CallDefaults.ts"

/** Most dead jobs a pass lists by id in its totals (`dead` counts them all). */
export const SWEEP_DEAD_LISTED = 100

/** The totals of a pass that has done nothing yet. */
export const emptyTotals = (queue: string): SweepTotals => ({
  queue,
  reclaimed: 0,
  dead: 0,
  promoted: 0,
  dedupeDropped: 0,
  trimmed: 0,
  deadJobs: [],
  calls: 0,
  incomplete: false,
  nextDeadlineMs: -1,
  scheduled: 0,
  nextTickMs: -1,
})

/** Run one pass over one queue. */
export const sweepPass = Effect.fnUntraced(function* (commands: Commands, options: SweepPassOptions = {}) {
  const limit = options.limit ?? DEFAULT_SWEEP_LIMIT
  const start = yield* Clock.currentTimeMillis
  let totals = emptyTotals(commands.keys.queue)
  while (true) {
    const r = yield* commands.sweep(limit)
    totals = {
      ...totals,
      reclaimed: totals.reclaimed + r.reclaimed,
      dead: totals.dead + r.dead,
      promoted: totals.promoted + r.promoted,
      dedupeDropped: totals.dedupeDropped + r.dedupeDropped,
      trimmed: totals.trimmed + r.trimmed,
      deadJobs:
        r.deadJobs.length === 0 || totals.deadJobs.length >= SWEEP_DEAD_LISTED
          ? totals.deadJobs
          : [...totals.deadJobs, ...r.deadJobs].slice(0, SWEEP_DEAD_LISTED),
      calls: totals.calls + 1,
      nextDeadlineMs: r.nextDeadlineMs,
    }
    options.onBatch?.(totals, r)
    const over = options.maxMs !== undefined && (yield* Clock.currentTimeMillis) - start >= options.maxMs
    if (!r.more || over) {
      // the ticks run even when the budget is spent: a due tick is never starved by a backlog
      const ticks = yield* tickSchedules(commands.client, commands.keys)
      // the notes finished children left for parents in other queues (one call when there are none)
      yield* drainOutbox(commands.client, commands.keys)
      return { ...totals, incomplete: r.more, scheduled: ticks.made, nextTickMs: ticks.nextTickMs }
    }
  }
})
