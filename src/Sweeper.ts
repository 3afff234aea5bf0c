/**
 * A sweep pass: call the bounded `sweep` script again and again until nothing
 * expired or due is left, or the time budget runs out. Used by workers in-process
 * and by the `leaseq sweep` CLI; safe to run from many places at once.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Commands, SweepResult } from "./Commands.ts"

/** Options of one sweep pass. */
export interface SweepPassOptions {
  /** Jobs per script call (reclaimed, and separately promoted). Default 500 (keeps one call near 5 ms). */
  readonly limit?: number
  /** Stop starting new calls after this many ms. Default: no limit. */
  readonly maxMs?: number
  /** Called after every script call (progress). */
  readonly onBatch?: (total: SweepTotals, last: SweepResult) => void
}

/** What one sweep pass did, summed over its script calls. */
export interface SweepTotals {
  readonly queue: string
  readonly reclaimed: number
  readonly dead: number
  readonly promoted: number
  /** Script calls made. */
  readonly calls: number
  /** True when the pass stopped at `maxMs` with work left. */
  readonly incomplete: boolean
  /** ms until the earliest live lease expires, or -1 when nothing is active. */
  readonly nextDeadlineMs: number
}

/** Default jobs per sweep call. */
export const DEFAULT_SWEEP_LIMIT = 500

/** The totals of a pass that has done nothing yet. */
export const emptyTotals = (queue: string): SweepTotals => ({
  queue,
  reclaimed: 0,
  dead: 0,
  promoted: 0,
  calls: 0,
  incomplete: false,
  nextDeadlineMs: -1,
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
      calls: totals.calls + 1,
      nextDeadlineMs: r.nextDeadlineMs,
    }
    options.onBatch?.(totals, r)
    if (!r.more) return totals
    if (options.maxMs !== undefined && (yield* Clock.currentTimeMillis) - start >= options.maxMs) {
      return { ...totals, incomplete: true }
    }
  }
})
