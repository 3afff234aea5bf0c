/**
 * The refusals of the operator's calls (src/engine/queue/Operations.ts), re-exported by
 * Errors.ts with every other tagged error.
 */
import * as Data from "effect/Data"

/**
 * An operator's call on one job (`promote`, `reschedule`, `retry`, `updatePayload`) found the
 * job in a state it cannot act on (`unknown`: never added, deleted, or finished and no longer
 * retained). Nothing was changed.
 */
export class WrongJobState extends Data.TaggedError("WrongJobState")<{
  readonly queue: string
  readonly jobId: string
  readonly operation: string
  readonly state: string
  readonly allowed: ReadonlyArray<string>
}> {
  override get message() {
    const is = this.state === "unknown" ? "unknown (never added, deleted, or no longer retained)" : this.state
    return `${this.operation} refused: job ${this.jobId} of queue ${this.queue} is ${is}; only a ${this.allowed.join(", ")} job can be; nothing was changed`
  }
}

/** `obliterate` found jobs active and was not forced. Nothing was changed. */
export class QueueHasActiveJobs extends Data.TaggedError("QueueHasActiveJobs")<{
  readonly queue: string
  readonly active: number
}> {
  override get message() {
    return `obliterate refused: queue ${this.queue} has ${this.active} active jobs; stop its workers first, or pass force: true to revoke their leases (their late acks are refused); nothing was changed`
  }
}
