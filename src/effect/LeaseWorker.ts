/**
 * A worker as a scoped Effect ({@link make}) or a Layer ({@link layer}), running on a
 * queue service built by `LeaseQueue`. It is the same engine as the Promise `Worker`:
 * handlers return Effects; when a lease is lost (or self-fenced) the handler's fiber is
 * interrupted and the job is never acknowledged; closing the scope is the graceful close.
 *
 * ```ts
 * const WorkerLive = LeaseWorker.layer(Emails, (job) => send(job.payload), { concurrency: 10 })
 * Layer.launch(WorkerLive.pipe(Layer.provide(EmailsLive)))
 * ```
 * @module
 */
import { Cause, type Context, Effect, Fiber, FiberSet, Layer, type Scope } from "effect"
import type { ScriptFailure } from "../engine/Commands.ts"
import { InvalidOptions, type QueueClosed, RedisUnavailable } from "../engine/Errors.ts"
import type { Job } from "../engine/Job.ts"
import type { LeaseRef } from "../engine/scripts/Lease.ts"
import { checkObject } from "../engine/Validate.ts"
import { makeRateLimiter, WARN_WINDOW_MS } from "../engine/worker/Callbacks.ts"
import { startWorker, type WorkerState } from "../engine/worker/Worker.ts"
import { type WorkerOptions as EngineOptions, resolveWorkerOptions } from "../engine/worker/WorkerOptions.ts"
import type { RedisClient } from "../redis/Client.ts"
import { InternalsKey, type Service } from "./LeaseQueue.ts"
import { parseOptions, type ValidationError } from "./Payload.ts"

/** A job's lease, as lease-lost and dead hooks see it. */
export type { LeaseRef } from "../engine/scripts/Lease.ts"

/**
 * What happened to jobs. Each hook returns an Effect, run in its own fiber (hooks never
 * delay the worker); hooks still running 2 s after the worker closed are interrupted.
 * A hook that fails is logged. Defaults: none, except `onError`, which logs a warning.
 */
export interface Hooks<A, Out, E, R> {
  /** The handler succeeded and the job was acknowledged. */
  readonly onCompleted?: ((job: Job<A>, result: Out) => Effect.Effect<void, never, R>) | undefined
  /** The handler failed (or died); `willRetry` is false when the job went to dead. */
  readonly onFailed?:
    | ((job: Job<A>, cause: Cause.Cause<E>, willRetry: boolean) => Effect.Effect<void, never, R>)
    | undefined
  /** The lease was lost (reclaimed by a sweep, or self-fenced): the handler was interrupted and did not ack. */
  readonly onLeaseLost?:
    | ((job: LeaseRef, reason: "lease-lost" | "self-fenced") => Effect.Effect<void, never, R>)
    | undefined
  /** The job went to dead: reason `failed` (attempts used up), `invalid-payload` (it did not decode) or `lease-expired` (this worker's sweep found its lease expired once too often). */
  readonly onDead?: ((job: LeaseRef, reason: string, error: unknown) => Effect.Effect<void, never, R>) | undefined
  /**
   * An error the worker survived (it keeps retrying): a Redis error (`RedisUnavailable`
   * naming the server, also while the worker waits for an unreachable Redis to start), a
   * backoff function that threw or answered nonsense (`CallbackFailed`, `InvalidOptions`),
   * a loop that failed (`WorkerLoopFailed`). A hook that fails is logged, not passed here.
   * Default: `Effect.logWarning`, at most one warning per 30 s (saying how many were not shown).
   */
  readonly onError?: ((error: unknown) => Effect.Effect<void, never, R>) | undefined
}

/**
 * Options of a worker: the engine's options (concurrency 1, leaseMs 30 000, heartbeatMs
 * leaseMs / 3, exponential backoff from 1 s, shutdownGraceMs 10 000, shutdownAbortGraceMs
 * 5000, leaseGraceMs max(1000, leaseMs / 10), in-process sweeping on, keepCompleted 0,
 * blockTimeoutMs 5000 — see `WorkerOptions`) and the hooks. The
 * prefix and connection are the queue's.
 */
export interface Options<A, Out, E, R> extends Omit<EngineOptions, "prefix">, Hooks<A, Out, E, R> {}

/** A running worker. */
export interface Handle {
  /** The queue name. */
  readonly queue: string
  /** The lifecycle state: running, draining, releasing, closed, or failed (a loop was given up: close it). */
  readonly state: Effect.Effect<WorkerState>
  /** Handlers running now. */
  readonly running: Effect.Effect<number>
  /** Close early (graceful, as on scope close). Never fails, always ends; every later call waits for the same shutdown. */
  readonly close: Effect.Effect<void>
}

/** What starting a worker can fail with: bad options, or a queue that cannot be used. */
export type StartError = ValidationError | QueueClosed | ScriptFailure

const UNREACHABLE_POLL_MS = 500

/**
 * Run `effect`; while it runs, report the client's connection error as a
 * {@link RedisUnavailable} naming the server: when it first appears or changes, and again
 * every 30 s while it lasts. Without this, a worker started on an unreachable Redis says
 * nothing until the client gives up on its first command.
 */
const whileUnreachable =
  (client: RedisClient, report: (e: RedisUnavailable) => void) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.gen(function* () {
      const check = unreachableCheck(client, report)
      const watcher = yield* Effect.forkChild(
        Effect.gen(function* () {
          while (true) {
            yield* Effect.sleep(UNREACHABLE_POLL_MS)
            check()
          }
        }),
      )
      return yield* effect.pipe(Effect.ensuring(Fiber.interrupt(watcher)))
    })

/** One look at the client, for {@link whileUnreachable}: reports a new or changed error, or one 30 s old. */
const unreachableCheck = (client: RedisClient, report: (e: RedisUnavailable) => void) => {
  let last: string | undefined
  let at = 0
  return () => {
    const why = client.status() === "ready" ? undefined : client.lastError?.()
    const now = Date.now()
    if (why !== undefined && (why !== last || now - at >= WARN_WINDOW_MS)) {
      at = now
      report(new RedisUnavailable({ reason: why, server: client.describe }))
    }
    last = why
  }
}

const HOOK_KEYS = ["onCompleted", "onFailed", "onLeaseLost", "onDead", "onError"] as const
const HOOK_DRAIN_MS = 2_000

/**
 * Start a worker on the queue service `queue`, running `handler` for each job, at most
 * `concurrency` at once. Scoped: closing the scope closes the worker gracefully (stop
 * reserving, let handlers finish for up to `shutdownGraceMs`, then interrupt the rest and
 * release their jobs). The handler succeeding completes the job; failing retries it with
 * backoff or, when attempts are used up, moves it to dead. Each handler runs in its own
 * scope, closed when it ends; it may use any service the worker's context provides.
 */
export const make = <I, A, Out, E, R, RH = never>(
  queue: Context.Key<I, Service<A>>,
  handler: (job: Job<A>) => Effect.Effect<Out, E, R>,
  options: Options<A, Out, E, RH> = {},
): Effect.Effect<Handle, StartError, I | Scope.Scope | Exclude<R, Scope.Scope> | RH> =>
  Effect.gen(function* () {
    const service = yield* queue
    const internals = service[InternalsKey]
    if (internals === undefined) {
      return yield* Effect.fail(
        new InvalidOptions({
          field: "queue",
          value: service.name,
          reason: "a worker needs a queue service built by LeaseQueue.make, layer or layerConfig",
        }),
      )
    }
    if (typeof handler !== "function") {
      return yield* Effect.fail(
        new InvalidOptions({ field: "handler", value: handler, reason: "must be a function (job) => Effect" }),
      )
    }
    const given = yield* Effect.fromResult(checkObject("options", options))
    if (given.prefix !== undefined) {
      return yield* Effect.fail(
        new InvalidOptions({
          field: "options.prefix",
          value: given.prefix,
          reason: "a worker uses its queue's prefix; set it on the queue layer",
        }),
      )
    }
    const settings = yield* parseOptions(() => resolveWorkerOptions(given, HOOK_KEYS))
    for (const key of HOOK_KEYS) {
      if (given[key] !== undefined && typeof given[key] !== "function") {
        return yield* Effect.fail(
          new InvalidOptions({
            field: `options.${key}`,
            value: given[key],
            reason: "must be a function returning an Effect",
          }),
        )
      }
    }
    const { core, client, codec } = internals

    const context = yield* Effect.context<Exclude<R, Scope.Scope> | RH>()
    const hookFibers = yield* FiberSet.make()
    const runHook = yield* FiberSet.runtime(hookFibers)<RH>()
    const fire = (hook: () => Effect.Effect<void, never, RH> | undefined) => {
      runHook(
        Effect.suspend(() => hook() ?? Effect.void).pipe(
          Effect.catchCause((cause) => Effect.logError("leaseq worker hook failed", cause)),
        ),
      )
    }
    const allowWarning = makeRateLimiter(WARN_WINDOW_MS)
    const onError =
      options.onError ??
      ((error: unknown) =>
        Effect.suspend(() => {
          const suppressed = allowWarning()
          if (suppressed === undefined) return Effect.void
          const more = suppressed > 0 ? [`(+${suppressed} more since the last such warning)`] : []
          return Effect.logWarning("leaseq worker: error, it goes on", error, ...more).pipe(
            Effect.annotateLogs("queue", service.name),
          )
        }))
    // a Redis that cannot be reached is reported while the worker waits for it, not only when it gives up
    yield* core.ensureOpen.pipe(whileUnreachable(client, (e) => fire(() => onError(e))))
    // the engine gives hooks a squashed error; keep each failed job's full, typed cause
    const causes = new WeakMap<Job<A>, Cause.Cause<E>>()

    const blocking = yield* Effect.acquireRelease(
      Effect.sync(() => client.duplicate()),
      (b) => Effect.promise(() => b.close(200)),
    )
    const engine = yield* Effect.acquireRelease(
      startWorker<A>(core.commands, blocking, settings, {
        decode: codec.decode,
        handler: (job) =>
          Effect.suspend(() => handler(job)).pipe(
            Effect.onError((cause) => Effect.sync(() => causes.set(job, cause))),
            Effect.scoped,
            Effect.provideContext(context),
          ),
        // throws for a result JSON cannot hold (a BigInt, a cycle): the engine fails the job with it
        encodeResult: (result) => JSON.stringify(result ?? null) ?? "null",
        hooks: {
          completed: (job, result) => fire(() => options.onCompleted?.(job, result as Out)),
          failed: (job, error, willRetry) =>
            fire(() => {
              const cause = causes.get(job) ?? Cause.die(error)
              causes.delete(job)
              return options.onFailed?.(job, cause, willRetry)
            }),
          leaseLost: (job, reason) => fire(() => options.onLeaseLost?.(job, reason)),
          dead: (job, reason, error) => fire(() => options.onDead?.(job, reason, error)),
          error: (error) => fire(() => onError(error)),
        },
      }),
      (h) =>
        h.close.pipe(
          Effect.andThen(FiberSet.awaitEmpty(hookFibers).pipe(Effect.timeoutOption(HOOK_DRAIN_MS))),
          Effect.ensuring(Effect.sync(() => internals.workers.delete(h))),
        ),
    )
    internals.workers.add(engine)
    const handle: Handle = {
      queue: service.name,
      state: Effect.sync(engine.state),
      running: Effect.sync(engine.running),
      close: engine.close,
    }
    return handle
  })

/**
 * The worker of {@link make} as a layer that provides nothing: it runs while the layer
 * lives. `Layer.launch(LeaseWorker.layer(...).pipe(Layer.provide(QueueLive)))` runs it
 * until interrupted, then closes it gracefully.
 */
export const layer = <I, A, Out, E, R, RH = never>(
  queue: Context.Key<I, Service<A>>,
  handler: (job: Job<A>) => Effect.Effect<Out, E, R>,
  options: Options<A, Out, E, RH> = {},
): Layer.Layer<never, StartError, I | Exclude<R, Scope.Scope> | RH> =>
  Layer.effectDiscard(make(queue, handler, options))
