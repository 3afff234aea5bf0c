/**
 * The flow-control calls of the Promise face's {@link Queue} (one of the call groups
 * src/promise/Queue.ts is composed of): the queue-wide rate limit and concurrency cap, stored in Redis and enforced
 * by every worker's reserve (see docs/flow-control.md).
 */
import * as Effect from "effect/Effect"
import type { RateLimit } from "../engine/model/Flow.ts"
import type { AnyQueue } from "../engine/partition/Queue.ts"

/** The flow-control calls of a queue (see the top of this file). */
export abstract class QueueFlow {
  /** @internal */
  abstract readonly queue: AnyQueue

  /**
   * At most `max` jobs leased per `perMs` ms of the Redis clock (in any such window), by
   * all workers together; `null` clears the limit and lifts a RateLimited hold (see
   * {@link QueueFlow.clearHold}). Stored in the queue (a partitioned queue:
   * in each partition, holding per partition). Rejects with `InvalidOptions` naming the
   * field (`max`, `perMs`: whole numbers from 1) and writes nothing. O(1).
   */
  setRateLimit(limit: RateLimit | null): Promise<void> {
    return Effect.runPromise(this.queue.control.setRateLimit(limit))
  }

  /** The queue's rate limit, or null when none is set. O(1). */
  rateLimit(): Promise<RateLimit | null> {
    return Effect.runPromise(this.queue.control.rateLimit)
  }

  /**
   * Lift a RateLimited hold (a handler's `RateLimited` holds the whole queue for its
   * `retryAfterMs`, up to 30 days; `stats().limits.heldMs` shows what is left): the queue
   * leases again at once, and idle workers are woken (a worker waiting out the hold sees the
   * lift within its `blockTimeoutMs`, default 5 s). The rate limit and concurrency cap stay.
   * Resolves true when a hold was in force (a partitioned queue: lifts every partition's,
   * true when any was). O(1).
   */
  clearHold(): Promise<boolean> {
    return Effect.runPromise(this.queue.control.clearHold)
  }

  /**
   * At most `n` jobs active at once across all workers (a lease holds a slot until it
   * leaves active: completed, failed, released, snoozed, cancelled, dead, or reclaimed by
   * the sweep); `null` clears the cap. Stored in the queue (a partitioned queue: in each
   * partition, holding per partition). Rejects with `InvalidOptions` for anything but a
   * whole number from 1, and writes nothing. O(1).
   */
  setConcurrency(n: number | null): Promise<void> {
    return Effect.runPromise(this.queue.control.setConcurrency(n))
  }

  /** The queue's concurrency cap, or null when none is set. O(1). */
  concurrency(): Promise<number | null> {
    return Effect.runPromise(this.queue.control.concurrency)
  }
}
