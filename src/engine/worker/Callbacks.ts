/**
 * User callbacks never stop a worker. A worker calls code it does not own from inside
 * its loops: event listeners and hooks (from the heartbeat, fence, reserve and sweep
 * loops), the `backoff` function, the result encoder. Anything they throw is caught
 * here and reported; the loops themselves are supervised, so a defect restarts a loop
 * instead of silently ending it.
 *
 * - {@link safeHooks}: every hook call is guarded; a throw becomes a {@link CallbackFailed}
 *   on the `error` hook, and a throwing `error` hook goes to the last resort (stderr).
 * - {@link supervise}: a loop that fails is reported and restarted after a pause; after
 *   too many failures in a row it is given up and the worker is told (state `failed`).
 * - {@link encodeOutcome}: a result that cannot be serialised fails its job.
 * - {@link stderrWarner}: the last resort, one line on stderr at most every 30 s.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { CallbackFailed, InvalidPayload, type LoopBlocked } from "../model/Errors.ts"
import { type DEAD_REASONS, type DeadReason, describeError } from "../model/Failure.ts"
import type { Job } from "../model/HandlerJob.ts"
import { serializePayload } from "../model/Validate.ts"

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

/** Options of {@link supervise}. */
export interface SuperviseOptions {
  /** Called with the cause each time the loop fails; `stopped` when it is given up. */
  readonly onFailure: (cause: unknown, stopped: boolean) => void
  /** Pauses before restarts, the last one repeated. Default 100, 200, 500, 1000, 2000, 5000 ms. */
  readonly pausesMs?: ReadonlyArray<number>
  /** Failures in a row after which the loop is given up. Default 5. */
  readonly maxFailures?: number
  /** A run that lasted this long resets the count of failures in a row. Default 60 000 ms. */
  readonly resetAfterMs?: number
}

const PAUSES_MS = [100, 200, 500, 1000, 2000, 5000] as const

/**
 * Run `loop` once. Undefined when it returned; its cause and how long it ran when it
 * failed or died; an interrupt of the loop interrupts the caller.
 */
const runOnce = (loop: Effect.Effect<unknown, unknown>) =>
  Effect.gen(function* () {
    const started = performance.now()
    const exit = yield* Effect.exit(loop)
    if (Exit.isSuccess(exit)) return undefined
    if (Cause.hasInterruptsOnly(exit.cause)) return yield* Effect.interrupt
    return { cause: exit.cause, ranMs: performance.now() - started }
  })

/**
 * Run a long-lived loop under supervision: when it fails or dies (a defect), the cause is
 * reported and the loop starts again after a pause. After `maxFailures` failures in a
 * row it is given up: reported with `stopped` true, and the returned effect ends. A loop
 * that returns ends the supervision; interrupting the supervisor interrupts the loop.
 */
export const supervise = (loop: Effect.Effect<unknown, unknown>, options: SuperviseOptions): Effect.Effect<void> =>
  Effect.gen(function* () {
    const pauses = options.pausesMs ?? PAUSES_MS
    const maxFailures = options.maxFailures ?? 5
    const resetAfterMs = options.resetAfterMs ?? 60_000
    let failures = 0
    while (true) {
      const failed = yield* runOnce(loop)
      if (failed === undefined) return
      // a run that lasted resetAfterMs starts the count of failures in a row again
      failures = failed.ranMs >= resetAfterMs ? 1 : failures + 1
      const stopped = failures >= maxFailures
      options.onFailure(Cause.squash(failed.cause), stopped)
      if (stopped) return
      yield* Effect.sleep(pauses[Math.min(failures - 1, pauses.length - 1)] ?? 1000)
    }
  })

/**
 * What to acknowledge for a handler's exit: the result serialised with `encode` (when
 * results are kept), or, when it cannot be serialised, a failed exit carrying an
 * {@link InvalidPayload} for the field `result` — the job then fails like any other.
 */
/**
 * A handler's result as JSON text to keep (completed jobs are retained, see queue.setRetention): `undefined` is kept as null;
 * what JSON would drop or change (a Map, a nested undefined, a BigInt, a cycle…) throws an
 * InvalidPayload naming its path, which fails the job (see {@link encodeOutcome}).
 */
export const resultJson = (result: unknown): string =>
  serializePayload("result", result ?? null, Number.MAX_SAFE_INTEGER)

export const encodeOutcome = (
  exit: Exit.Exit<unknown, unknown>,
  encode: ((result: unknown) => string) | undefined,
): { readonly exit: Exit.Exit<unknown, unknown>; readonly result: string } => {
  // no result (undefined) stores nothing: the usual case costs no bytes on the wire
  if (!Exit.isSuccess(exit) || encode === undefined || exit.value === undefined) return { exit, result: "" }
  try {
    const text: unknown = encode(exit.value)
    return { exit, result: typeof text === "string" ? text : "null" }
  } catch (e) {
    const reason = `cannot be serialised to keep it (completed jobs are retained per queue.setRetention): ${oneLine(e)}; return JSON data`
    return { exit: Exit.fail(new InvalidPayload({ field: "result", reason })), result: "" }
  }
}
