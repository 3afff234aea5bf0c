/**
 * A cheap check of this thread's event loop while in-process handlers run: one unref'd
 * timer every `sampleMs` (a tenth of the lease, 20 ms – 1 s), started when a job takes a
 * slot and stopped at the first tick with none running, so an idle worker runs no timer.
 * A tick that comes late by more than a sample measures a block (a handler that kept the
 * loop busy: CPU-bound code, a synchronous call); one of at least half the lease is told
 * (`onBlocked`: the `loop-blocked` event, counted in metrics), and a lease lost during or
 * just after it carries it as its cause ({@link LoopBlocked}).
 */
import { LoopBlocked } from "../../model/LoopBlocked.ts"

/** The event-loop check of one worker. */
export interface LoopMonitor {
  /** A handler starts: sample the loop while handlers run. */
  readonly touch: () => void
  /** The block a lost lease is put down to: the longest seen within the last lease (or going on now), if large. */
  readonly cause: (queue: string) => LoopBlocked | undefined
  /** Stop sampling (the worker closed). */
  readonly stop: () => void
}

/** Make the check of a worker with `leaseMs` leases; `running` says whether a handler runs. */
export const makeLoopMonitor = (
  leaseMs: number,
  running: () => boolean,
  onBlocked: (blockedMs: number) => void,
): LoopMonitor => {
  const sampleMs = Math.min(1000, Math.max(20, Math.floor(leaseMs / 10)))
  const large = leaseMs / 2
  let timer: ReturnType<typeof setInterval> | undefined
  let last = 0
  let worst = { ms: 0, at: Number.NEGATIVE_INFINITY }
  /** The block going on now (or just ended, before the tick that measures it has run). */
  const current = (now: number) => (timer === undefined ? 0 : Math.max(0, now - last - sampleMs))
  const tick = () => {
    const now = performance.now()
    const blocked = now - last - sampleMs
    last = now
    if (blocked > sampleMs) {
      if (blocked >= worst.ms || now - worst.at > leaseMs) worst = { ms: blocked, at: now }
      if (blocked >= large) onBlocked(Math.round(blocked))
    }
    if (!running()) stop()
  }
  const stop = () => {
    if (timer !== undefined) clearInterval(timer)
    timer = undefined
  }
  return {
    touch: () => {
      if (timer !== undefined) return
      last = performance.now()
      timer = setInterval(tick, sampleMs)
      timer.unref()
    },
    cause: (queue) => {
      const now = performance.now()
      const recent = now - worst.at <= leaseMs ? worst.ms : 0
      const ms = Math.max(recent, current(now))
      return ms >= large ? new LoopBlocked({ queue, blockedMs: Math.round(ms), leaseMs }) : undefined
    },
    stop,
  }
}
