/**
 * A worker's hooks, and user callbacks that never stop a worker. A worker calls code it
 * does not own from inside its loops: event listeners and hooks (from the heartbeat, fence,
 * reserve and sweep loops), the `backoff` function, the result encoder. Anything they throw
 * is caught and reported; the loops themselves are supervised (Lifecycle.ts's `supervise`),
 * so a defect restarts a loop instead of silently ending it.
 *
 * - {@link safeHooks}: every hook call is guarded; a throw becomes a {@link CallbackFailed}
 *   on the `error` hook, and a throwing `error` hook goes to the last resort (stderr).
 * - {@link stderrWarner}: the last resort, one line on stderr at most every 30 s.
 * - A result that cannot be serialised fails its job (run/Outcome.ts).
 */
import { CallbackFailed, type LoopBlocked } from "../model/Errors.ts"
import { type DEAD_REASONS, type DeadReason, describeError } from "../model/Failure.ts"
import type { Job } from "../model/HandlerJob.ts"

/** What happened to jobs, for events and hooks. */
export interface WorkerHooks<A> {
  readonly completed?: (job: Job<A>, result: unknown) => void
  /** A handler failed; `willRetry` is false when the job went to dead. */
  readonly failed?: (job: Job<A>, error: unknown, willRetry: boolean) => void
  /**
   * The lease was lost (reclaimed by a sweep, or self-fenced): the handler was aborted and
   * did not ack. `cause`: the handler blocked the event loop meanwhile, when it did.
   */
  readonly leaseLost?: (
    job: { readonly id: string; readonly token: number },
    reason: "lease-lost" | "self-fenced",
    cause?: LoopBlocked,
  ) => void
  /** An in-process handler blocked the event loop for at least half a lease (see LoopMonitor.ts). */
  readonly loopBlocked?: (blocked: LoopBlocked) => void
  /**
   * The job was cancelled while its handler ran: the handler was aborted (signal reason a
   * `JobCancelled`) and did not ack; the job is not retried.
   */
  readonly cancelled?: (job: { readonly id: string; readonly token: number }) => void
  /** The job went to dead, with its reason (one of {@link DEAD_REASONS}; "lease-expired" when found by this worker's sweep). */
  readonly dead?: (job: { readonly id: string; readonly token: number }, reason: DeadReason, error: unknown) => void
  /**
   * The worker had work and now has none: its last reserve found no job ready, and no job
   * of its own runs or waits for its ack (Drained.ts). Once per move to idle.
   */
  readonly drained?: () => void
  /** A Redis or infrastructure error the worker survived (it keeps retrying). */
  readonly error?: (error: unknown) => void
}

/** Default window of {@link stderrWarner}: at most one line per 30 s. */
export const WARN_WINDOW_MS = 30_000

/**
 * A limiter of one event per `windowMs`. Each call says whether this event may be shown:
 * `undefined` when it is suppressed, else how many were suppressed since the last shown one.
 */
export const makeRateLimiter = (windowMs: number) => {
  let last = Number.NEGATIVE_INFINITY
  let suppressed = 0
  return (now: number = Date.now()): number | undefined => {
    if (now - last < windowMs) {
      suppressed++
      return undefined
    }
    last = now
    const n = suppressed
    suppressed = 0
    return n
  }
}

/** An error as one line of text: `Name: message`, whitespace collapsed. */
export const oneLine = (error: unknown): string => {
  let text: string
  if (error instanceof Error) {
    const { name, message } = describeError(error)
    text = `${name ?? "Error"}: ${message}`
  } else {
    try {
      text = typeof error === "string" ? error : String(error)
    } catch {
      text = "an unprintable value"
    }
  }
  return text.replace(/\s+/g, " ").trim()
}

/**
 * The last resort for errors nobody listens to: writes one line to stderr for the first
 * error, then at most one line per `windowMs` (default 30 s), saying how many errors were
 * not shown in between. Never throws.
 */
export const stderrWarner = (who: string, windowMs: number = WARN_WINDOW_MS) => {
  const allow = makeRateLimiter(windowMs)
  return (error: unknown): void => {
    const suppressed = allow()
    if (suppressed === undefined) return
    const more = suppressed > 0 ? ` (+${suppressed} more since the last such line)` : ""
    const how = `listen to the "error" event to handle these; this line is written at most once per ${Math.round(windowMs / 1000)} s`
    try {
      process.stderr.write(`leaseq ${who}: ${oneLine(error)}${more}; ${how}\n`)
    } catch {
      // stderr closed: nothing left to tell
    }
  }
}

/**
 * The worker's hooks, guarded: a hook that throws is reported as a {@link CallbackFailed}
 * on the `error` hook; an `error` hook that throws (or a missing one) goes to `lastResort`.
 * No hook call can throw into the engine.
 */
export const safeHooks = <A>(hooks: WorkerHooks<A>, lastResort: (error: unknown) => void): Required<WorkerHooks<A>> => {
  const error = (e: unknown): void => {
    try {
      if (hooks.error) hooks.error(e)
      else lastResort(e)
    } catch (thrown) {
      lastResort(new CallbackFailed({ callback: "the error hook", cause: thrown }))
    }
  }
  const guard =
    <Args extends ReadonlyArray<unknown>>(name: string, hook: ((...args: Args) => void) | undefined) =>
    (...args: Args): void => {
      try {
        hook?.(...args)
      } catch (thrown) {
        error(new CallbackFailed({ callback: `the ${name} hook`, cause: thrown }))
      }
    }
  return {
    completed: guard("completed", hooks.completed),
    failed: guard("failed", hooks.failed),
    leaseLost: guard("lease-lost", hooks.leaseLost),
    dead: guard("dead", hooks.dead),
    cancelled: guard("cancelled", hooks.cancelled),
    drained: guard("drained", hooks.drained),
    loopBlocked: guard("loop-blocked", hooks.loopBlocked),
    error,
  }
}
