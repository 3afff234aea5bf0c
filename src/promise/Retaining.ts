/**
 * The retention calls of the Promise face's `Queue` (one of the call groups it is composed of):
 * `setRetention` and `retention`, the queue's policy of how long finished jobs stay.
 */
import * as Effect from "effect/Effect"
import type { AnyQueue } from "../engine/partition/Queue.ts"
import type { Retention, RetentionInput } from "../engine/queue/Retention.ts"

/** A queue's retention of finished jobs (see docs/jobs.md). */
export abstract class Retaining {
  /** @internal */
  abstract readonly queue: AnyQueue

  /**
   * Set how long finished jobs stay, so getJob and waitFor answer for them: `{ completed,
   * cancelled, dead }`, each `{ count, ageMs }` (at most `count` kept, none longer than `ageMs`
   * after it finished). What is not given takes its default: completed and cancelled jobs
   * 1,000 for 1 hour, dead jobs no bound (kept until retried or purged). Stored in Redis (every
   * partition): the next finish follows it, the sweep trims by age. Rejects with
   * {@link InvalidOptions} naming the field, nothing written. O(1).
   */
  setRetention(policy: RetentionInput): Promise<void> {
    return Effect.runPromise(this.queue.control.setRetention(policy))
  }

  /** The queue's retention policy (see {@link setRetention}): the defaults where none was set. O(1). */
  retention(): Promise<Retention> {
    return Effect.runPromise(this.queue.control.retention)
  }
}
