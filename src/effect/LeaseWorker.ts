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
import { Cause, Context, Effect, FiberSet, Layer, type Scope, Tracer } from "effect"
import type { ScriptFailure } from "../engine/calls/Commands.ts"
import type { HandlerModuleFailed } from "../engine/isolation/IsolationErrors.ts"
import { type InvalidOptions, JobTimedOut, type QueueClosed, type WorkerNotRunning } from "../engine/model/Errors.ts"
import { unwrapNotReplicated } from "../engine/partition/Durability.ts"
import { openWorkerConnections, servedKeys, startServing } from "../engine/partition/PartitionWorkers.ts"
import type { Job as EngineJob } from "../engine/queue/Job.ts"
import { checkPauseOptions } from "../engine/worker/Pause.ts"
import { resultJson } from "../engine/worker/run/Outcome.ts"
import type { PauseOptions, WorkerHooks, WorkerState } from "../engine/worker/Worker.ts"
import { type BatchJob as BatchJobOf, batchRunner } from "./BatchWorker.ts"
import { asEffectJob, type Job } from "./EffectJob.ts"
import type { Service } from "./LeaseQueue.ts"
import type { BatchOptions, Hooks, IsolatedBatchOptions, IsolatedOptions, Options } from "./LeaseWorkerOptions.ts"
import type { ValidationError } from "./Payload.ts"
import { checkStart, errorReporter, isolatedHandler } from "./WorkerStart.ts"

/** A job's lease, as lease-lost and dead hooks see it. */
export type { LeaseRef } from "../engine/scripts/LeaseScripts.ts"

export type { Job } from "./EffectJob.ts"
export type {
  BatchOptions,
  Hooks,
  IsolatedBatchOptions,
  IsolatedOptions,
  Options,
} from "./LeaseWorkerOptions.ts"

/**
 * A job of a batch: a {@link Job} the batch handler may settle on its own with `complete`
 * or `fail` (Effects); the handler succeeding completes the rest, failing fails the rest.
 */
export type BatchJob<A, Out = unknown, E = unknown> = BatchJobOf<Job<A>, Out, E>

/** A running worker. */
export interface Handle {
  /** The queue name. */
  readonly queue: string
  /**
   * The lifecycle state: running, paused, draining, releasing, closed, or failed (a loop was given
   * up: close it). Never `starting`: `make` returns once the worker reached Redis, and
   * closing its scope before then ends at once (it holds nothing yet).
   */
  readonly state: Effect.Effect<WorkerState>
  /** Handlers running now. */
  readonly running: Effect.Effect<number>
  /** Close early (graceful, as on scope close). Never fails, always ends; every later call waits for the same shutdown. */
  readonly close: Effect.Effect<void>
  /**
   * Pause this worker (as the Promise `worker.pause`): no new job is leased, those held
   * unstarted go back, running handlers go on; `{ wait: true }` ends once they have ended.
   * A closing, closed or failed worker: nothing to do. Bad options: `InvalidOptions`.
   */
  readonly pause: (options?: PauseOptions) => Effect.Effect<void, InvalidOptions>
  /** Lease again after `pause`; fails with `WorkerNotRunning` when the worker is closing, closed or failed. */
  readonly resume: Effect.Effect<void, WorkerNotRunning>
}

/** What starting a worker can fail with: bad options, a queue that cannot be used, a handler module that does not load. */
export type StartError = ValidationError | QueueClosed | ScriptFailure | HandlerModuleFailed

const HOOK_DRAIN_MS = 2_000

/** The engine's handler for a one-job `handler`, run with `context`; each failed job's full cause goes to `causes`. */
const oneJobHandler =
  <A, Out, E, R>(
    handler: (job: Job<A>) => Effect.Effect<Out, E, R>,
    context: Context.Context<Exclude<R, Scope.Scope>>,
    causes: WeakMap<Job<A>, Cause.Cause<E>>,
  ) =>
  (engineJob: EngineJob<A>) =>
    Effect.suspend(() => handler(asEffectJob(engineJob))).pipe(
      Effect.onError((cause) => Effect.sync(() => causes.set(asEffectJob(engineJob), cause))),
      Effect.scoped,
      Effect.provideContext(context),
    )

/**
 * The engine's hooks for the Effect hooks of `options`: each runs through `fire` (a fiber
 * of its own); a failed job's hook gets its full, typed cause from `causes`.
 */
const engineHooks = <A, Out, E, RH>(
  options: Hooks<A, Out, E, RH>,
  fire: (hook: () => Effect.Effect<void, never, RH> | undefined) => void,
  causes: WeakMap<Job<A>, Cause.Cause<E>>,
  onError: (error: unknown) => Effect.Effect<void, never, RH>,
): WorkerHooks<A> => ({
  completed: (job, result) => fire(() => options.onCompleted?.(asEffectJob(job), result as Out)),
  failed: (engineJob, error, willRetry) =>
    fire(() => {
      const job = asEffectJob(engineJob)
      // a timeout interrupted the handler: the failure is the timeout, not that interruption
      const cause = error instanceof JobTimedOut ? Cause.die(error) : (causes.get(job) ?? Cause.die(error))
      causes.delete(job)
      return options.onFailed?.(job, cause, willRetry)
    }),
  cancelled: (job) => fire(() => options.onCancelled?.(job)),
  leaseLost: (job, reason, cause) => fire(() => options.onLeaseLost?.(job, reason, cause)),
  loopBlocked: (blocked) => fire(() => options.onLoopBlocked?.(blocked)),
  dead: (job, reason, error) => fire(() => options.onDead?.(job, reason, error)),
  drained: () => fire(() => options.onDrained?.()),
  error: (error) => fire(() => onError(unwrapNotReplicated(error))),
})

/**
 * Start a worker on the queue service `queue`, running `handler` for each job, at most
 * `concurrency` at once. Scoped: closing the scope closes the worker gracefully (stop
 * reserving, let handlers finish for up to `shutdownGraceMs`, then interrupt the rest and
 * release their jobs). The handler succeeding completes the job; failing retries it with
 * backoff or, when attempts are used up, moves it to dead. Each handler runs in its own
 * scope, closed when it ends; it may use any service the worker's context provides.
 * A partitioned queue is served partition by partition (see `partitions` on the queue).
 * For a queue service typed `Service<A, Out>` the handler must succeed with an `Out`.
 */
export function make<I, A, QueueOut, E, R, RH = never>(
  queue: Context.Key<I, Service<A, QueueOut>>,
  handler: (jobs: ReadonlyArray<BatchJob<A, QueueOut, E>>) => Effect.Effect<unknown, E, R>,
  options: BatchOptions<A, QueueOut | undefined, E, RH>,
): Effect.Effect<Handle, StartError, I | Scope.Scope | Exclude<R, Scope.Scope> | RH>
export function make<I, A, QueueOut, Out extends QueueOut, E, R, RH = never>(
  queue: Context.Key<I, Service<A, QueueOut>>,
  handler: (job: Job<A>) => Effect.Effect<Out, E, R>,
  options?: Options<A, Out, E, RH>,
): Effect.Effect<Handle, StartError, I | Scope.Scope | Exclude<R, Scope.Scope> | RH>
/** An isolated worker: the handler module's default export (a plain function, `job.progress` plain too) runs in threads or processes. */
export function make<I, A, QueueOut, RH = never>(
  queue: Context.Key<I, Service<A, QueueOut>>,
  module: string | URL,
  options: IsolatedBatchOptions<A, QueueOut | undefined, unknown, RH>,
): Effect.Effect<Handle, StartError, I | Scope.Scope | RH>
export function make<I, A, QueueOut, RH = never>(
  queue: Context.Key<I, Service<A, QueueOut>>,
  module: string | URL,
  options: IsolatedOptions<A, QueueOut, unknown, RH>,
): Effect.Effect<Handle, StartError, I | Scope.Scope | RH>
export function make<I, A, QueueOut, Out extends QueueOut, E, R, RH = never>(
  queue: Context.Key<I, Service<A, QueueOut>>,
  given: ((job: never) => Effect.Effect<unknown, E, R>) | string | URL,
  options: Options<A, Out, E, RH> | BatchOptions<A, Out, E, RH> = {},
): Effect.Effect<Handle, StartError, I | Scope.Scope | Exclude<R, Scope.Scope> | RH> {
  return Effect.gen(function* () {
    const service = yield* queue
    const { internals, durability, settings, isolated } = yield* checkStart(service, given, options)
    const { queue: served, client, codec } = internals

    // without the span current here: a handler's spans are children of its job's process span
    const context = Context.omit(Tracer.ParentSpan)(
      yield* Effect.context<Exclude<R, Scope.Scope> | RH>(),
    ) as Context.Context<Exclude<R, Scope.Scope> | RH>
    const hookFibers = yield* FiberSet.make()
    const runHook = yield* FiberSet.runtime(hookFibers)<RH>()
    const fire = (hook: () => Effect.Effect<void, never, RH> | undefined) => {
      runHook(
        Effect.suspend(() => hook() ?? Effect.void).pipe(
          Effect.catchCause((cause) => Effect.logError("leaseq worker hook failed", cause)),
        ),
      )
    }
    const onError = errorReporter(service.name, options.onError)
    // every failed connection attempt is reported while the worker lives (also while it waits to start)
    const reportConnection = (e: unknown) => fire(() => onError(e))
    yield* Effect.acquireRelease(
      Effect.sync(() => internals.connectionErrors.add(reportConnection)),
      () => Effect.sync(() => internals.connectionErrors.delete(reportConnection)),
    )
    yield* served.ensureOpen
    // the engine gives hooks a squashed error; keep each failed job's full, typed cause
    const causes = new WeakMap<Job<A>, Cause.Cause<E>>()
    const batch =
      settings.batch && !isolated
        ? batchRunner(given as never, settings.batch, context, asEffectJob<A>, causes)
        : undefined

    const keys = servedKeys(service.name, service.prefix, served.partitions)
    const connections = yield* Effect.acquireRelease(
      Effect.sync(() => openWorkerConnections(client, keys.length, durability)),
      (c) => Effect.promise(() => c.close(200)),
    )
    // an isolated worker's handler runs in its pool, closed after the engine (released in reverse order)
    const pooled = isolated
      ? yield* isolatedHandler(isolated, settings, service.name, (e) => fire(() => onError(e)))
      : undefined
    const runner = pooled ?? batch
    const run = runner?.run ?? oneJobHandler(given as (job: Job<A>) => Effect.Effect<Out, E, R>, context, causes)
    const closeBatches = Effect.sync(() => runner?.close())
    const engine = yield* Effect.acquireRelease(
      startServing<A>(connections.client, keys, connections.blocking, settings, {
        decode: codec.decode,
        handler: run,
        // throws for a result JSON cannot hold or would change: the engine fails the job with it
        encodeResult: resultJson,
        hooks: engineHooks(options, fire, causes, onError),
      }),
      (h) =>
        closeBatches.pipe(
          Effect.andThen(h.close),
          Effect.andThen(FiberSet.awaitEmpty(hookFibers).pipe(Effect.timeoutOption(HOOK_DRAIN_MS))),
          Effect.ensuring(Effect.sync(() => internals.workers.delete(h))),
        ),
    )
    internals.workers.add(engine)
    const handle: Handle = {
      queue: service.name,
      state: Effect.sync(engine.state),
      running: Effect.sync(engine.running),
      close: Effect.andThen(closeBatches, engine.close),
      pause: (given) => Effect.flatMap(Effect.fromResult(checkPauseOptions(given)), engine.pause),
      resume: engine.resume,
    }
    return handle
  })
}

/**
 * The worker of {@link make} as a layer that provides nothing: it runs while the layer
 * lives. `Layer.launch(LeaseWorker.layer(...).pipe(Layer.provide(QueueLive)))` runs it
 * until interrupted, then closes it gracefully.
 */
export function layer<I, A, QueueOut, E, R, RH = never>(
  queue: Context.Key<I, Service<A, QueueOut>>,
  handler: (jobs: ReadonlyArray<BatchJob<A, QueueOut, E>>) => Effect.Effect<unknown, E, R>,
  options: BatchOptions<A, QueueOut | undefined, E, RH>,
): Layer.Layer<never, StartError, I | Exclude<R, Scope.Scope> | RH>
export function layer<I, A, QueueOut, Out extends QueueOut, E, R, RH = never>(
  queue: Context.Key<I, Service<A, QueueOut>>,
  handler: (job: Job<A>) => Effect.Effect<Out, E, R>,
  options?: Options<A, Out, E, RH>,
): Layer.Layer<never, StartError, I | Exclude<R, Scope.Scope> | RH>
/** An isolated worker as a layer (see {@link make}): the handler module runs in threads or processes. */
export function layer<I, A, QueueOut, RH = never>(
  queue: Context.Key<I, Service<A, QueueOut>>,
  module: string | URL,
  options: IsolatedBatchOptions<A, QueueOut | undefined, unknown, RH>,
): Layer.Layer<never, StartError, I | RH>
export function layer<I, A, QueueOut, RH = never>(
  queue: Context.Key<I, Service<A, QueueOut>>,
  module: string | URL,
  options: IsolatedOptions<A, QueueOut, unknown, RH>,
): Layer.Layer<never, StartError, I | RH>
export function layer<I, A, QueueOut, E, R, RH = never>(
  queue: Context.Key<I, Service<A, QueueOut>>,
  handler: ((job: never) => Effect.Effect<unknown, E, R>) | string | URL,
  options: Options<A, QueueOut, E, RH> | BatchOptions<A, QueueOut, E, RH> = {},
): Layer.Layer<never, StartError, I | Exclude<R, Scope.Scope> | RH> {
  return Layer.effectDiscard(make(queue, handler as never, options as Options<A, QueueOut, E, RH>))
}
