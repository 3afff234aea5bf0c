/**
 * The Promise face's manual processing: the part of {@link Queue} for a consumer that is
 * not a `Worker` (see `engine/queue/Manual.ts`). Payloads and results are JSON.
 */
import * as Effect from "effect/Effect"
import type { AnyQueue } from "../engine/partition/Queue.ts"
import type { FailOptions, ReservedJob, ReserveOptions } from "../engine/queue/Manual.ts"

export type { FailOptions, ReservedJob, ReserveOptions } from "../engine/queue/Manual.ts"

/** The leased jobs of one reserve with their payloads parsed; one that does not parse goes to dead ("invalid-payload"). */
const parsed = <T>(queue: AnyQueue, jobs: ReadonlyArray<ReservedJob<string>>) =>
  Effect.gen(function* () {
    const out: Array<ReservedJob<T>> = []
    for (const job of jobs) {
      try {
        out.push({ ...job, payload: JSON.parse(job.payload) as T })
      } catch (e) {
        yield* queue.manual.refuse(job, String(e))
      }
    }
    return out
  })

/**
 * Manual processing on a queue (one of the call groups `Queue` is composed of): lease jobs with {@link reserve}, then
 * settle each by its id and token. A stale token (the lease expired and a sweep handed the
 * job on, or it was settled already) changes nothing and rejects with `LeaseLost`
 * (`JobCancelled` when a cancel revoked the lease). Attempts, dead jobs, events and counters
 * are a Worker's. On a partitioned queue a reserve leases from one partition (the next in
 * turn that has ready jobs), and a settle finds the job's partition first.
 */
export abstract class ManualQueue<T> {
  /** @internal */
  abstract readonly queue: AnyQueue

  /**
   * Lease up to `count` ready jobs (default 1, at most 500) for `leaseMs` (default 30 000):
   * resolves to each job with its `token` and lease `deadline` (none when none is ready; it
   * does not wait). A reserve re-sent after a lost reply answers the same leases.
   */
  reserve(options: ReserveOptions = {}): Promise<Array<ReservedJob<T>>> {
    return Effect.runPromise(Effect.flatMap(this.queue.manual.reserve(options), (jobs) => parsed<T>(this.queue, jobs)))
  }

  /** Complete a leased job (its `result` kept, as JSON, while completed jobs are retained). */
  complete(id: string, token: number, result?: unknown): Promise<void> {
    const text = result === undefined ? undefined : JSON.stringify(result)
    return Effect.runPromise(this.queue.manual.complete(id, token, text))
  }

  /**
   * Fail a leased job (`error` recorded as its last error): it counts an attempt and is retried
   * after its backoff, or goes to dead when its attempts are used up or `retry` is false.
   * Resolves to what happened: "retry" or "dead".
   */
  fail(id: string, token: number, error: unknown, options?: FailOptions): Promise<"retry" | "dead"> {
    return Effect.runPromise(this.queue.manual.fail(id, token, error, options))
  }

  /** Extend a lease to `leaseMs` from now (Redis clock); resolves to the new deadline. */
  extend(id: string, token: number, leaseMs: number): Promise<number> {
    return Effect.runPromise(this.queue.manual.extend(id, token, leaseMs))
  }

  /** Give a leased job back: it runs next, and it costs no attempt. */
  release(id: string, token: number): Promise<void> {
    return Effect.runPromise(this.queue.manual.release(id, token))
  }
}
