/**
 * Every error leaseq raises, as tagged classes. The Effect face fails with them;
 * the Promise face rejects with the same objects, so `instanceof` works.
 */
import * as Data from "effect/Data"
import { type InvalidOptions, show } from "../../redis/Errors.ts"

export { InvalidOptions } from "../../redis/Errors.ts"
export { LoopBlocked } from "./LoopBlocked.ts"
export { QueueHasActiveJobs, WrongJobState } from "./OpsErrors.ts"
export { GroupFull, WorkerNotRunning } from "./StateErrors.ts"

/** The job is no longer leased under this token: it was reclaimed, completed or released. Nothing was changed. */
export class LeaseLost extends Data.TaggedError("LeaseLost")<{
  readonly queue: string
  readonly jobId: string
  readonly token: number
}> {
  override get message() {
    return `lease lost: job ${this.jobId} of queue ${this.queue} is no longer held under token ${this.token} (it was reclaimed after its lease expired, or already acknowledged); nothing was changed`
  }
}

/**
 * The abort reason of a handler whose job was cancelled while it ran: the worker's
 * heartbeat learned that the cancel revoked the lease. The job is not acknowledged and
 * not retried.
 */
export class JobCancelled extends Data.TaggedError("JobCancelled")<{
  readonly queue: string
  readonly jobId: string
  readonly token: number
}> {
  override get message() {
    return `job ${this.jobId} of queue ${this.queue} was cancelled while it ran (lease token ${this.token}): stop its work; it will not be acknowledged or retried`
  }
}

/**
 * The abort reason of a handler that ran past its `timeoutMs`, and the error recorded for
 * that attempt (reason "timeout"): it counts as a failure (retried with backoff, or dead).
 */
export class JobTimedOut extends Data.TaggedError("JobTimedOut")<{
  readonly queue: string
  readonly jobId: string
  readonly token: number
  readonly timeoutMs: number
}> {
  override get message() {
    return `job ${this.jobId} of queue ${this.queue} ran past its timeoutMs of ${this.timeoutMs} ms: the attempt counts as a failure (reason "timeout")`
  }
}

/**
 * A worker could not get a job's complete or fail answered by Redis before the lease ran
 * out on its local clock (`lease-expired`), or before it closed (`stopped`: the lease was
 * then released). Reported on the `error` event; the job may run again.
 */
export class AckUndelivered extends Data.TaggedError("AckUndelivered")<{
  readonly queue: string
  readonly jobId: string
  readonly token: number
  readonly ack: "complete" | "fail"
  readonly reason: "lease-expired" | "stopped"
  readonly cause?: unknown
}> {
  override get message() {
    const why =
      this.reason === "stopped"
        ? "before the worker closed; the lease was released, so the job may run again"
        : "before its lease ran out; the job runs again once the lease expires"
    return `the ${this.ack} of job ${this.jobId} of queue ${this.queue} (token ${this.token}) got no answer from Redis ${why}`
  }
}

/**
 * At close, a handler went on past `shutdownAbortGraceMs` after its signal aborted. Its
 * lease is left to expire (not released while the handler may still run). Reported on
 * the `error` event.
 */
export class ShutdownOverrun extends Data.TaggedError("ShutdownOverrun")<{
  readonly queue: string
  readonly jobId: string
  readonly token: number
  readonly waitedMs: number
}> {
  override get message() {
    return `job ${this.jobId} of queue ${this.queue} (token ${this.token}): its handler was still running ${this.waitedMs} ms after its signal aborted at close (shutdownAbortGraceMs); the lease is left to expire rather than released, so no one else starts the job while it may still run`
  }
}

/** A payload cannot be stored (not JSON-serialisable, too large, or rejected by the queue's Schema). Nothing was written. */
export class InvalidPayload extends Data.TaggedError("InvalidPayload")<{
  readonly field: string
  readonly reason: string
}> {
  override get message() {
    return `invalid ${this.field}: ${this.reason}`
  }
}

/** A queue name that would break the key layout. Nothing was written. */
export class InvalidQueueName extends Data.TaggedError("InvalidQueueName")<{
  readonly name: string
  readonly reason: string
}> {
  override get message() {
    return `invalid queue name ${show(this.name)}: ${this.reason}`
  }
}

/** The queue was written by a leaseq with another key layout. Nothing was written. */
export class LayoutMismatch extends Data.TaggedError("LayoutMismatch")<{
  readonly queue: string
  readonly found: string
  readonly expected: string
}> {
  override get message() {
    return `queue ${this.queue} uses key layout version ${show(this.found)}, this leaseq speaks version ${show(this.expected)}: upgrade leaseq or use another prefix`
  }
}

/** A key under the queue's names exists with a type leaseq does not use: not a leaseq queue. Nothing was written. */
export class WrongKeyType extends Data.TaggedError("WrongKeyType")<{
  readonly key: string
  readonly found: string
  readonly expected: string
}> {
  override get message() {
    return `key ${this.key} is a ${this.found}, leaseq expects a ${this.expected}: another program uses this name; choose another queue name or prefix`
  }
}

/** Redis could not be reached (connection refused, closed, timed out). */
export class RedisUnavailable extends Data.TaggedError("RedisUnavailable")<{
  readonly reason: string
  /** Where the client connects to, without any password (when known). */
  readonly server?: string | undefined
  readonly cause?: unknown
}> {
  override get message() {
    return `Redis unavailable${this.server ? ` at ${this.server}` : ""}: ${this.reason}`
  }
}

/**
 * A call was written to Redis but no reply came within the call's deadline (`callTimeoutMs`),
 * or the connection broke after it was written: it may or may not have been applied.
 * For an `add`/`addBulk`, `jobIds` are the ids the jobs have if they were stored
 * (a job whose `dedupeKey` matched keeps the first job's id instead).
 */
export class OutcomeUnknown extends Data.TaggedError("OutcomeUnknown")<{
  /** What was sent: `add`, `addBulk`, `sweep`, `retryDead`, … */
  readonly operation: string
  /** Why the outcome is unknown: no reply within the deadline, or the connection lost after sending. */
  readonly reason: string
  /** Where the client connects to, without any password (when known). */
  readonly server?: string | undefined
  /** For an `add`/`addBulk`: the ids of the jobs sent. */
  readonly jobIds?: ReadonlyArray<string> | undefined
  readonly cause?: unknown
}> {
  override get message() {
    const ids = this.jobIds?.length
      ? ` (job ids ${this.jobIds.slice(0, 5).join(", ")}${this.jobIds.length > 5 ? ", …" : ""})`
      : ""
    const what = this.jobIds?.length
      ? "look the job ids up before adding again: a new add of the same payload may store it twice unless it has a dedupeKey"
      : "check the queue's state before repeating it"
    return `${this.operation} was sent to Redis${this.server ? ` at ${this.server}` : ""}${ids} but its outcome is unknown: ${this.reason}; it may or may not have been applied: ${what}`
  }
}

/** Redis answered with an error (out of memory, ACL denial, wrong server settings, …). */
export class RedisCommandError extends Data.TaggedError("RedisCommandError")<{
  readonly command: string
  readonly reason: string
}> {
  override get message() {
    return `Redis refused ${this.command}: ${this.reason}`
  }
}

/** The queue or worker was closed; the call did nothing. */
export class QueueClosed extends Data.TaggedError("QueueClosed")<{
  readonly queue: string
}> {
  override get message() {
    return `queue ${this.queue} is closed`
  }
}

/**
 * A write (an `add`, a worker's `complete`) succeeded on the master, but fewer replicas
 * than `durability.replicas` acknowledged it within `durability.timeoutMs` (Redis `WAIT`).
 * The write is NOT undone: it is on the master, not yet known to be replicated, and a
 * failover of that master now could lose it.
 */
export class NotReplicated extends Data.TaggedError("NotReplicated")<{
  readonly operation: string
  readonly node: string
  readonly replicas: number
  readonly acknowledged: number
  readonly timeoutMs: number
  /** Why WAIT itself failed, when it did (e.g. the master turned into a replica). */
  readonly reason?: string | undefined
  /** For an `add`: the ids of the jobs written. */
  readonly jobIds?: ReadonlyArray<string> | undefined
}> {
  override get message() {
    const ids = this.jobIds?.length
      ? ` (job ids ${this.jobIds.slice(0, 5).join(", ")}${this.jobIds.length > 5 ? ", …" : ""})`
      : ""
    const why = this.reason
      ? `WAIT failed: ${this.reason}`
      : `${this.acknowledged} of ${this.replicas} replica(s) acknowledged it within ${this.timeoutMs} ms`
    return `${this.operation} was written on ${this.node}${ids} but is not yet replicated: ${why}; it is on the master and could still be lost if that master fails over now (retrying an add may duplicate it unless it has a dedupeKey)`
  }
}

/**
 * A function you gave leaseq threw or rejected: an event listener, a hook, a `backoff`
 * function. The worker caught it and goes on; it is reported as an `error` event.
 */
export class CallbackFailed extends Data.TaggedError("CallbackFailed")<{
  /** Which callback, e.g. `the "lease-lost" listener`, `the backoff function`. */
  readonly callback: string
  readonly cause: unknown
}> {
  override get message() {
    const why = this.cause instanceof Error ? `${this.cause.name}: ${this.cause.message}` : show(this.cause)
    return `${this.callback} threw ${why}; the worker caught it and goes on (fix the callback: leaseq never lets it stop a worker)`
  }
}

/**
 * One of a worker's long-lived loops (reserve, heartbeat, fence, sweep) failed. It is
 * restarted after a pause unless it failed too often in a row; then it is `stopped` and
 * the worker's state becomes `failed`: it takes no more jobs and should be closed.
 */
export class WorkerLoopFailed extends Data.TaggedError("WorkerLoopFailed")<{
  readonly queue: string
  readonly loop: string
  readonly cause: unknown
  /** True when the loop was given up and the worker is now `failed`. */
  readonly stopped: boolean
}> {
  override get message() {
    const why = this.cause instanceof Error ? `${this.cause.name}: ${this.cause.message}` : show(this.cause)
    return this.stopped
      ? `worker of queue ${this.queue}: its ${this.loop} loop failed too often in a row and was stopped (${why}); the worker is now "failed" and takes no more jobs: close() it and start a new one`
      : `worker of queue ${this.queue}: its ${this.loop} loop failed (${why}); it restarts after a pause`
  }
}

/**
 * A state machine of leaseq (a worker's lifecycle, or one lease) was asked for a move its
 * table does not allow. It is a defect of leaseq, reported on the worker's error hook; the
 * state stays as it was. Please report it with the message.
 */
export class IllegalStateMove extends Data.TaggedError("IllegalStateMove")<{
  readonly machine: string
  readonly from: string
  readonly to: string
}> {
  override get message() {
    return `leaseq defect: the ${this.machine} state machine refused the move ${this.from} → ${this.to}; the state stays ${this.from}. Please report this`
  }
}

/**
 * `changePriority` found the job not waiting (nor delayed): it is `active`, `completed`,
 * `dead` or `cancelled`, or `missing` (no job with this id). Nothing was changed.
 */
export class JobNotWaiting extends Data.TaggedError("JobNotWaiting")<{
  readonly jobId: string
  readonly state: string
}> {
  override get message() {
    return this.state === "missing"
      ? `job ${this.jobId} does not exist (never added, or finished and not retained); nothing changed`
      : `job ${this.jobId} is ${this.state}, not waiting or delayed: only a job that waits can change its priority; nothing changed`
  }
}

/** Any error a Redis call can end with. */
export type RedisError = RedisUnavailable | RedisCommandError | OutcomeUnknown

/** Any error of the queue's own rules (bad input, foreign keys, layout). */
export type QueueError =
  | InvalidOptions
  | InvalidPayload
  | InvalidQueueName
  | LayoutMismatch
  | WrongKeyType
  | QueueClosed
