/**
 * The error that explains a lease lost to a blocked event loop (worker/lease/LoopMonitor.ts).
 */
import * as Data from "effect/Data"

/**
 * An in-process handler kept the worker's event loop busy for a large share of its lease
 * (`blockedMs`, at least half of `leaseMs`): heartbeats could not run meanwhile. Told on
 * the worker's `loop-blocked` event, and given as the cause of a lease lost during or
 * right after it. Run CPU-bound handlers with `isolation: "thread"` (docs/workers.md).
 */
export class LoopBlocked extends Data.TaggedError("LoopBlocked")<{
  readonly queue: string
  readonly blockedMs: number
  readonly leaseMs: number
}> {
  override get message() {
    const s = (ms: number) => (ms >= 10_000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`)
    return `a handler blocked the event loop of queue ${this.queue}'s worker for ${s(this.blockedMs)} (the lease is ${s(this.leaseMs)}): heartbeats could not run; use isolation: "thread" for CPU-bound handlers`
  }
}
