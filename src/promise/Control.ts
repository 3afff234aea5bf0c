/**
 * The job-control calls of the Promise face's {@link Queue}: look up, cancel and re-prioritise
 * a job, pause and resume the queue, free a dedupe key (the engine's `JobControl`,
 * src/engine/queue/JobControl.ts; its flow limits are in `QueueFlow.ts`, its retention in
 * `Retaining.ts`). `Queue` is composed of this and its other call groups.
 */
import * as Effect from "effect/Effect"
import type { AnyQueue } from "../engine/partition/Queue.ts"
import { type CancelledFrom, type JobInfo, withJsonPayload } from "../engine/queue/JobCommands.ts"
import type { CancelOptions, PriorityOptions } from "../engine/queue/QueueApi.ts"

/** Job control of a queue; `T` is the payload type, `R` what its handlers return. */
export abstract class QueueControl<T, R> {
  /** @internal */
  abstract readonly queue: AnyQueue

  /**
   * What the queue knows about job `id` — state, payload, attempts, lease, result, last
   * error, dedupe key — or undefined when it is unknown (never added, or finished and not
   * retained: finished jobs are kept per the queue's retention, {@link setRetention}).
   * O(1) hash reads and at most five O(log N) lookups, in every state. For a partitioned
   * queue every partition is asked at once.
   */
  async getJob(id: string): Promise<JobInfo<T, R> | undefined> {
    const info = await Effect.runPromise(this.queue.control.getJob(id))
    return info && (withJsonPayload<T>(info) as JobInfo<T, R>)
  }

  /**
   * Cancel job `id` for good: the state it was in, or undefined when unknown or finished. An
   * active job's lease is revoked at once (its late ack is refused, no retry; its worker learns
   * it at its next heartbeat). A parent's pending children are cancelled too, unless `{ children:
   * "keep" }` (docs/flows.md). O(log N); O(N) in the jobs waiting at priority 0 for such a job.
   */
  cancel(id: string, options?: CancelOptions): Promise<CancelledFrom | undefined> {
    return Effect.runPromise(this.queue.control.cancel(id, options))
  }

  /** Job `id` to the back of `priority` (0 .. 1 000 000; `lifo`: its front) if waiting, or has it when due if delayed (its state); else `JobNotWaiting`. */
  changePriority(id: string, priority: number, options?: PriorityOptions): Promise<"waiting" | "delayed"> {
    return Effect.runPromise(this.queue.control.changePriority(id, priority, options))
  }

  /** Stop handing out jobs until {@link resume} (running jobs go on, adds still come in); false when paused already. O(1). */
  pause(): Promise<boolean> {
    return Effect.runPromise(this.queue.control.pause)
  }

  /** Hand out jobs again, waking idle workers. Resolves to false when it was not paused. O(1). */
  resume(): Promise<boolean> {
    return Effect.runPromise(this.queue.control.resume)
  }

  /** True while the queue is paused (for a partitioned queue: any partition). O(1). */
  isPaused(): Promise<boolean> {
    return Effect.runPromise(this.queue.control.isPaused)
  }

  /** Free dedupe key `key` now (TTL or until finished), so the next add with it is accepted; true when it was held. O(log N). */
  clearDedupe(key: string): Promise<boolean> {
    return Effect.runPromise(this.queue.control.clearDedupe(key))
  }

  /**
   * The id of the job holding dedupe key `key` (until its `dedupeTtlMs` runs out on the Redis
   * clock, or until it finishes with `dedupeUntil: "finished"`), or undefined when the key is
   * free: an add with it now would be accepted. BullMQ's `getDeduplicationJobId`. Read-only,
   * O(log N), one round trip (a partitioned queue: to the key's partition).
   */
  dedupeHolder(key: string): Promise<string | undefined> {
    return Effect.runPromise(this.queue.control.dedupeHolder(key))
  }
}
