/**
 * Must-deliver acknowledgements: a complete or fail that meets an error reply (BUSY,
 * LOADING, READONLY, OOM, a dropped connection …) is sent again, with backoff, until Redis
 * answers it, the lease is surely gone on the local clock, or the worker stops waiting
 * (close, past its grace). Meanwhile the lease stays in the worker's table, so the
 * heartbeat keeps extending it. Resending is safe: every ack is fenced by the token.
 *
 * An attempt that failed in a way that may have run the script (the connection dropped
 * after the call was sent) makes the outcome *uncertain*: a later attempt answering
 * "lease lost" may only mean that the first one landed. {@link completeLanded} and
 * {@link failLanded} then look at the job in Redis to tell the two apart.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import type { Commands, ScriptFailure } from "../../calls/Commands.ts"
import { lookups } from "../../calls/Lookups.ts"
import type { RedisError } from "../../model/Errors.ts"
import { type Held, monotonicNow } from "./LeaseTable.ts"

/** How a must-deliver call ended. */
export type Delivery<A> =
  | { readonly _tag: "answered"; readonly value: A; readonly uncertain: boolean }
  | { readonly _tag: "undelivered"; readonly reason: "lease-expired" | "stopped"; readonly uncertain: boolean }
  /** An error that resending cannot change (a layout refusal; a write not confirmed by replicas): reported, not retried. */
  | { readonly _tag: "refused"; readonly error: ScriptFailure }

/**
 * A one-shot signal: the worker stops waiting for acks. Cheaper than racing a Deferred:
 * a waiter is one entry in a set, removed when it no longer waits (no fiber per race).
 */
export interface StopSignal {
  stopped: boolean
  readonly waiters: Set<() => void>
}

/** A signal not yet fired. */
export const makeStopSignal = (): StopSignal => ({ stopped: false, waiters: new Set() })

/** Fire the signal: every waiter is told, once. */
export const fireStop = (stop: StopSignal): void => {
  if (stop.stopped) return
  stop.stopped = true
  for (const wake of stop.waiters) wake()
  stop.waiters.clear()
}

/**
 * Call `done` once: with `register`'s answer, or "stopped" once `stop` fires (at once if it
 * has). `register` gets the function to call with the answer and returns how to stop
 * listening; so does this (for a listener that no longer waits).
 */
export const answerOrStopped = <A>(
  stop: StopSignal,
  register: (answer: (a: A) => void) => () => void,
  done: (a: A | "stopped") => void,
): (() => void) => {
  if (stop.stopped) {
    done("stopped")
    return () => {}
  }
  let unregister: (() => void) | undefined
  const onStop = () => {
    unregister?.()
    done("stopped")
  }
  stop.waiters.add(onStop)
  unregister = register((a) => {
    stop.waiters.delete(onStop)
    done(a)
  })
  return () => {
    stop.waiters.delete(onStop)
    unregister?.()
  }
}

/** {@link answerOrStopped} as an Effect: waits for the answer, or "stopped". */
export const untilStopped = <A>(
  stop: StopSignal,
  register: (answer: (a: A) => void) => () => void,
): Effect.Effect<A | "stopped"> =>
  Effect.callback<A | "stopped">((resume) =>
    Effect.sync(answerOrStopped(stop, register, (a) => resume(Effect.succeed(a)))),
  )

/** Join `fiber`, or "stopped" once `stop` fires: the fiber goes on unobserved. */
const joinUntilStopped = <A>(fiber: Fiber.Fiber<A>, stop: StopSignal) =>
  untilStopped<Exit.Exit<A>>(stop, (answer) => fiber.addObserver(answer))

/** Pauses between attempts, in ms (the last one repeats). */
export const ACK_RETRY_PAUSE = [50, 100, 200, 500, 1000] as const

/** Error replies given before a script runs: after one of these, the script surely did not run. */
const REFUSED_BEFORE_RUN = /\b(BUSY|OOM|LOADING|READONLY|NOSCRIPT|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|MOVED|ASK)\b/

/** True when the error is a reply Redis gives before running a script (so it did not run). */
export const refusedBeforeRun = (error: unknown): boolean =>
  REFUSED_BEFORE_RUN.test(error instanceof Error ? error.message : String(error))

/**
 * Errors that are an answer of sorts: the script refused (layout, key type, a size out of
 * its range), or it ran and only the replicas' confirmation is missing (durability's
 * NotReplicated, carried as the cause of a RedisUnavailable). Sending again would not
 * change them.
 */
const isFinal = (error: ScriptFailure): boolean =>
  error._tag === "LayoutMismatch" ||
  error._tag === "WrongKeyType" ||
  error._tag === "InvalidOptions" ||
  (error as { cause?: { _tag?: unknown } }).cause?._tag === "NotReplicated"

/** What {@link deliver} needs besides the call. */
export interface DeliverOptions {
  /** The lease the ack is for: the attempts stop once its local deadline has passed. */
  readonly held: Held
  /** Fired when the worker stops waiting for acks (close, past its grace). */
  readonly stop: StopSignal
  /** Each failed attempt (the worker's `error` event). */
  readonly onError: (error: ScriptFailure) => void
  /** True when an earlier attempt (e.g. a reserve carrying this ack) may have run. */
  readonly uncertain?: boolean
}

/**
 * One attempt of an ack: an Effect (run in a fiber of its own), or a function that sends
 * the call and answers `done` with its outcome (no fiber needed, e.g. a batcher's offer).
 */
export type AckCall<A> = Effect.Effect<A, ScriptFailure> | ((done: (exit: Exit.Exit<A, ScriptFailure>) => void) => void)

/** One attempt of `call`, or "stopped" once `stop` fires (the attempt goes on unobserved). */
const attemptOnce = <A>(call: AckCall<A>, stop: StopSignal) =>
  Effect.gen(function* () {
    if (typeof call === "function") {
      return yield* untilStopped<Exit.Exit<A, ScriptFailure>>(stop, (answer) => {
        call(answer)
        return () => {}
      })
    }
    // the attempt runs in a fiber of its own: a call that Redis does not answer (ioredis
    // retries for a minute or more) must not hold up a close that stops waiting
    const attempt = yield* Effect.forkDetach(Effect.exit(call), { startImmediately: true })
    const joined = yield* joinUntilStopped(attempt, stop)
    if (joined === "stopped") return joined
    // the attempt fiber never fails (its call's exit is its value); a defect or interrupt goes up
    return Exit.isSuccess(joined) ? joined.value : yield* Effect.failCause(joined.cause)
  })

/** One attempt's outcome: how the call ended, or "again" (with whether an attempt so far may have run). */
type Attempted<A> = Delivery<A> | { readonly _tag: "again"; readonly uncertain: boolean }

/** Send `call` once and judge its exit: answered, stopped, refused for good, or worth sending again. */
const attemptDelivery = <A>(
  call: AckCall<A>,
  options: DeliverOptions,
  uncertain: boolean,
): Effect.Effect<Attempted<A>> =>
  Effect.gen(function* () {
    const exit = yield* attemptOnce(call, options.stop)
    if (exit === "stopped") return { _tag: "undelivered", reason: "stopped", uncertain: true } as const
    if (Exit.isSuccess(exit)) return { _tag: "answered", value: exit.value, uncertain } as const
    const error = exit.cause.reasons.find((r) => r._tag === "Fail")?.error
    if (error === undefined) return yield* Effect.failCause(exit.cause).pipe(Effect.orDie)
    options.onError(error)
    if (isFinal(error)) return { _tag: "refused", error } as const
    return { _tag: "again", uncertain: uncertain || !refusedBeforeRun(error) } as const
  })

/** Send `call` until Redis answers it, the lease's local deadline passes, or `stop` completes. */
export const deliver = <A>(call: AckCall<A>, options: DeliverOptions): Effect.Effect<Delivery<A>> =>
  Effect.gen(function* () {
    let uncertain = options.uncertain ?? false
    const stopped = untilStopped<void>(options.stop, () => () => {})
    for (let i = 0; ; i++) {
      if (options.stop.stopped) return { _tag: "undelivered", reason: "stopped", uncertain } as const
      const attempted = yield* attemptDelivery(call, options, uncertain)
      if (attempted._tag !== "again") return attempted
      uncertain = attempted.uncertain
      const pause = ACK_RETRY_PAUSE[Math.min(i, ACK_RETRY_PAUSE.length - 1)]!
      if (monotonicNow() + pause > options.held.localDeadline) {
        return { _tag: "undelivered", reason: "lease-expired", uncertain } as const
      }
      yield* Effect.raceFirst(Effect.sleep(pause), stopped)
    }
  })

/**
 * An ack was refused (no lease under its token): was the job cancelled? It was when its
 * id is in the queue's `cancelled` set, where cancel records it (the newest 1,000 cancels
 * at least) — what a finished cancelled job keeps anyway, so no memory is added per job.
 * One ZSCORE (the command layer's look-up: a failure is a typed {@link RedisError}), only
 * on a refusal. (A job cancelled after its lease was lost for another reason is told as
 * cancelled too: it was, and nobody will run it again.) A queue obliterated with force
 * revoked the lease as a cancel does: its meta has no layout (a second read), told as cancelled.
 */
export const ackCancelled = (commands: Commands, id: string): Effect.Effect<boolean, RedisError> => {
  const look = lookups(commands.client, commands.keys)
  return Effect.flatMap(look.isCancelled(id), (cancelled) =>
    cancelled ? Effect.succeed(true) : Effect.map(look.hasLayout, (live) => !live),
  )
}

/**
 * After an uncertain attempt, a complete answered "lease lost": did an earlier attempt
 * land? It did when the job is retained as completed, or when its payload is gone from
 * the data hash (a completed job's data is deleted; a reclaimed one keeps it). Fails
 * with a {@link RedisError} when Redis does not answer the look-up.
 */
export const completeLanded = (commands: Commands, id: string): Effect.Effect<boolean, RedisError> =>
  Effect.gen(function* () {
    const look = lookups(commands.client, commands.keys)
    if (yield* look.isRetained(id)) return true
    return !(yield* look.hasPayload(id))
  })

/**
 * After an uncertain attempt, a fail answered "lease lost": did an earlier attempt land?
 * It did when the job's last error is the one this fail wrote; then the job is dead
 * (in the dead set) or waits for its retry. Fails with a {@link RedisError} when Redis
 * does not answer the look-up.
 */
export const failLanded = (
  commands: Commands,
  id: string,
  error: string,
): Effect.Effect<"retry" | "dead" | "lost", RedisError> =>
  Effect.gen(function* () {
    const look = lookups(commands.client, commands.keys)
    if ((yield* look.lastError(id)) !== error) return "lost"
    return (yield* look.isDead(id)) ? "dead" : "retry"
  })
