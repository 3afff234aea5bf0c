/** The events of the Promise face's {@link Worker}: their names and arguments. */
import type { LoopBlocked } from "../engine/model/Errors.ts"
import type { DeadReason } from "../engine/model/Failure.ts"
import type { Job } from "../engine/queue/Job.ts"

/** Events a {@link Worker} emits. */
export interface WorkerEvents<T, R> {
  completed: [job: Job<T>, result: R]
  failed: [job: Job<T>, error: unknown, willRetry: boolean]
  /** `cause`: the handler blocked the event loop for a large share of the lease meanwhile (then use `isolation: "thread"`). */
  "lease-lost": [job: { id: string; token: number }, reason: "lease-lost" | "self-fenced", cause?: LoopBlocked]
  /** An in-process handler blocked the event loop for at least half a lease (heartbeats could not run). */
  "loop-blocked": [blocked: LoopBlocked]
  /** The job was cancelled while its handler ran: the handler's signal aborted (reason a `JobCancelled`); no ack, no retry. */
  cancelled: [job: { id: string; token: number }]
  /** The job went to dead: reason "failed", "timeout", "invalid-payload" or "lease-expired". */
  dead: [job: { id: string; token: number }, reason: DeadReason, error: unknown]
  /**
   * Redis or infrastructure errors the worker survived (e.g. `RedisUnavailable` naming the
   * server, once per failed connection attempt), listeners and other callbacks that threw
   * (`CallbackFailed`), loops that failed (`WorkerLoopFailed`). With no listener, one line
   * goes to stderr instead, at most once per 30 s.
   */
  error: [error: unknown]
  /**
   * The worker had work and now has none (BullMQ's worker `drained`): its last reserve found
   * no job ready, and none of its jobs runs or waits for its ack. Once per move to idle, not
   * per empty poll; not while paused. A partitioned worker tells it per partition.
   */
  drained: []
  closed: []
}

/** The events a {@link Worker} emits: "completed", "failed", "lease-lost", "loop-blocked", "cancelled", "dead", "drained", "error", "closed". */
export type WorkerEventName =
  | "completed"
  | "failed"
  | "lease-lost"
  | "loop-blocked"
  | "cancelled"
  | "dead"
  | "drained"
  | "error"
  | "closed"
