/**
 * The errors of handlers run off the main thread (`isolation: "thread" | "process"`).
 */
import * as Data from "effect/Data"

/**
 * The handler's thread or process ended while it ran a job: an uncaught exception,
 * `process.exit`, a thread past its `resourceLimits`, or a process killed by a signal.
 * The attempt counts as a failure (retried with backoff, or dead); `reason` is always
 * "crashed", `exitCode` or `signal` say how it ended, `cause` what it threw (if it did).
 */
export class HandlerCrashed extends Data.TaggedError("HandlerCrashed")<{
  readonly jobId: string
  readonly token: number
  readonly isolation: "thread" | "process"
  readonly exitCode?: number | undefined
  readonly signal?: string | undefined
  readonly cause?: unknown
}> {
  /** Always "crashed". */
  readonly reason = "crashed" as const
  override get message() {
    const how =
      this.signal !== undefined
        ? `was killed by ${this.signal}`
        : `exited with code ${this.exitCode ?? "unknown"}${this.cause === undefined ? "" : ` (${causeText(this.cause)})`}`
    return `the handler of job ${this.jobId} (lease token ${this.token}) crashed: its ${this.isolation} ${how}; the attempt counts as a failure (reason "crashed")`
  }
}

/**
 * The handler module of an isolated worker could not be loaded, or has no default export
 * that is a function. Reported once (the worker's `ready` rejects with it, or an `error`
 * event when a replacement fails to load); the pool tries again with backoff.
 */
export class HandlerModuleFailed extends Data.TaggedError("HandlerModuleFailed")<{
  readonly module: string
  readonly reason: string
}> {
  override get message() {
    return `the handler module ${this.module} could not be used: ${this.reason}; its default export must be a function (job) => result`
  }
}

const causeText = (e: unknown): string => {
  if (e instanceof Error) return `${e.name}: ${e.message}`
  try {
    return String(e)
  } catch {
    return "a value that cannot be turned into text"
  }
}
