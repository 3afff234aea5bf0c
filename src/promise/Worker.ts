/**
 * The Promise face of a worker: `new Worker(name, async (job) => …, options)`.
 */
import { EventEmitter } from "node:events"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { redisError } from "../engine/calls/Replies.ts"
import {
  ISOLATION_KEYS,
  type IsolationOptions,
  isolatedRunner,
  resolveIsolation,
  workerPool,
} from "../engine/isolation/Options.ts"
import type { Pool } from "../engine/isolation/Pool.ts"
import { CallbackFailed, InvalidOptions, QueueClosed, WorkerNotRunning } from "../engine/model/Errors.ts"
import { DEFAULT_PREFIX } from "../engine/model/Keys.ts"
import { validatePrefix, validateQueueName } from "../engine/model/QueueName.ts"
import { orThrow } from "../engine/model/Validate.ts"
import { type Durability, unwrapNotReplicated } from "../engine/partition/Durability.ts"
import * as Serving from "../engine/partition/PartitionWorkers.ts"
import { LAYOUT_KEYS, resolveLayout } from "../engine/partition/Queue.ts"
import type { Job } from "../engine/queue/Job.ts"
import { checkPauseOptions } from "../engine/worker/Pause.ts"
import { resultJson } from "../engine/worker/run/Outcome.ts"
import type { PauseOptions, WorkerHandle } from "../engine/worker/Worker.ts"
import { stderrWarner } from "../engine/worker/WorkerHooks.ts"
import { type WorkerOptions as EngineWorkerOptions, resolveWorkerOptions } from "../engine/worker/WorkerOptions.ts"
import { makeStateCell, type StateCell, transition, type WorkerState } from "../engine/worker/WorkerState.ts"
import { type ConnectionOption, connect } from "../redis/Client.ts"
import { type BatchHandler, type BatchOptions, batchRunner } from "./Batch.ts"
import { decodeJson, invalidJson, runHandler } from "./PromiseHandler.ts"
import type { WorkerEventName, WorkerEvents } from "./WorkerEvents.ts"

export type { WorkerEventName, WorkerEvents } from "./WorkerEvents.ts"

/** Options of {@link Worker}. */
export interface WorkerOptions extends Omit<EngineWorkerOptions, "batch">, IsolationOptions {
  /** As for Queue. Default: `REDIS_URL`, else `redis://127.0.0.1:6379`. The worker opens one more connection for its blocking wait. */
  readonly connection?: ConnectionOption | undefined
  /**
   * Serve a partitioned queue of this many partitions (as its producers were given): one
   * engine worker per partition, each with `ceil(concurrency / partitions)` slots and its
   * own blocking connection (N + 1 connections in all). Default 1: an ordinary queue.
   */
  readonly partitions?: number | undefined
  /**
   * Confirm each `complete` reached this many replicas (Redis `WAIT`, on one more connection
   * of its own so heartbeats never queue behind it). A complete not confirmed in time is
   * reported as a {@link NotReplicated} `error` event (it was written; it may be redone after
   * a failover). Default: off.
   */
  readonly durability?: Durability | undefined
  /** Not for a one-job handler: with `batch`, the handler takes `jobs` (see {@link BatchWorkerOptions}). */
  readonly batch?: undefined
}

/** Options of a {@link Worker} given a handler module: `isolation` is required (docs/workers.md, "Isolation"). */
export interface IsolatedWorkerOptions extends WorkerOptions {
  readonly isolation: "thread" | "process"
}

/** Options of a batch {@link Worker}: `batch: { size, waitMs }` hands the handler up to `size` jobs at once. */
export interface BatchWorkerOptions extends Omit<WorkerOptions, "batch"> {
  readonly batch: BatchOptions
}

/** Options of a batch {@link Worker} given a handler module: its default export is the batch handler. */
export interface IsolatedBatchWorkerOptions extends BatchWorkerOptions {
  readonly isolation: "thread" | "process"
}

/**
 * A worker: starts on construction, runs `handler` for each job, at most `concurrency` at once.
 *
 * ```ts
 * const worker = new Worker<{ to: string }>("emails", async (job) => {
 *   await send(job.payload.to, { signal: job.signal })
 * }, { concurrency: 10 })
 * // …
 * await worker.close() // graceful: unfinished jobs are released, not lost
 * ```
 * The handler's promise resolving completes the job; rejecting retries it (with backoff) or,
 * when attempts are used up, moves it to dead. `job.signal` aborts when the lease is lost.
 */
// The base is the untyped EventEmitter: its typed form's on/once/off differ between @types/node
// majors (24 and 26), and an override that fits one fails the other (TS2416 under
// skipLibCheck: false). The typed on/once/off below, and #emit, carry the event types.
export class Worker<T = unknown, R = unknown> extends EventEmitter {
  /** The queue name. */
  readonly name: string
  /** Resolves once the worker runs; rejects (and the worker closes) if the queue cannot be used. */
  readonly ready: Promise<void>
  #handle: WorkerHandle | undefined
  #closing: Promise<void> | undefined
  readonly #closeConnections: () => Promise<void>
  /** The state until the engine's handle exists: starting, then failed (could not start) or closed. */
  readonly #start: { readonly lifecycle: StateCell }
  /** The last resort for errors nobody listens to: a rate-limited line on stderr. */
  readonly #warn: (error: unknown) => void
  /** Stop the start (interrupt it); resolves once it has stopped. */
  readonly #stopStart: () => Promise<void>
  /** A batch worker's: hand what is gathered at once (close). */
  readonly #closeBatches: () => void
  /** An isolated worker's threads or processes. */
  readonly #pool: Pool | undefined

  /** A batch worker: `handler` gets up to `batch.size` jobs at once (docs/flow-control.md). */
  constructor(name: string, handler: BatchHandler<T, R>, options: BatchWorkerOptions)
  /** An isolated batch worker: `module` (a path or file URL) default-exports the batch handler, run in threads or processes. */
  constructor(name: string, module: string | URL, options: IsolatedBatchWorkerOptions)
  /** An isolated worker: `module` (a path or file URL) default-exports the handler, run in threads or processes. */
  constructor(name: string, module: string | URL, options: IsolatedWorkerOptions)
  constructor(name: string, handler: (job: Job<T>) => Promise<R> | R, options?: WorkerOptions)
  constructor(
    name: string,
    given: ((job: Job<T>) => Promise<R> | R) | BatchHandler<T, R> | string | URL,
    options: WorkerOptions | BatchWorkerOptions = {},
  ) {
    super()
    this.name = validateQueueName(name)
    const isolated = resolveIsolation(given, options as Record<string, unknown>)
    if (isolated === undefined && typeof given !== "function") {
      throw new InvalidOptions({
        field: "handler",
        value: given,
        reason: "must be a function (job) => Promise<result>",
      })
    }
    const resolved = resolveWorkerOptions(options, ["connection", ...LAYOUT_KEYS, ...ISOLATION_KEYS])
    const batch = resolved.batch && !isolated ? batchRunner(given as BatchHandler<T, R>, resolved.batch) : undefined
    const prefix = options.prefix === undefined ? DEFAULT_PREFIX : validatePrefix(options.prefix)
    const { partitions, durability } = resolveLayout(options)
    const settings = Serving.durableSettings(resolved, durability)
    const keys = Serving.servedKeys(name, prefix, partitions)
    this.#warn = stderrWarner(`worker of queue "${this.name}"`)
    // from here nothing throws: the pool starts only for options that were valid
    const pool = isolated && workerPool(isolated, resolved, this.name, (e) => this.#emit("error", e))
    this.#pool = pool
    const runner = pool ? isolatedRunner(pool, resolved.batch) : batch
    const handler = runner ? (runner.run as (job: Job<T>) => Promise<R>) : (given as (job: Job<T>) => Promise<R> | R)
    this.#closeBatches = runner ? runner.close : () => undefined
    this.#start = { lifecycle: makeStateCell((e) => this.#emit("error", e)) }
    // every failed connection attempt is reported, so a wrong URL or a Redis that is down is seen at once
    const base = connect(options.connection, {
      onError: (e) => this.#emit("error", redisError("connect", e, base.describe)),
    })
    const { client, blocking, close } = Serving.openWorkerConnections(base, keys.length, durability)
    this.#closeConnections = async () => {
      await Promise.all([base.close(), close()])
    }
    const emit = <K extends keyof WorkerEvents<T, R>>(event: K, ...args: WorkerEvents<T, R>[K]) =>
      this.#emit(event, ...args)
    const loaded = pool ? Effect.tryPromise({ try: () => pool.ready, catch: (e) => e }) : Effect.void
    const serving = Effect.suspend(() =>
      Serving.startServing<T>(client, keys, blocking, settings, {
        decode: (text) => Effect.try({ try: () => JSON.parse(text) as T, catch: invalidJson }),
        handler: (job) => runHandler(handler, job),
        plain: { decode: decodeJson<T>, run: handler },
        encodeResult: resultJson,
        hooks: {
          completed: (job, result) => emit("completed", job, result as R),
          failed: (job, error, willRetry) => emit("failed", job, error, willRetry),
          leaseLost: (job, reason, cause) => emit("lease-lost", job, reason, cause),
          loopBlocked: (blocked) => emit("loop-blocked", blocked),
          dead: (job, reason, error) => emit("dead", job, reason, error),
          cancelled: (job) => emit("cancelled", job),
          drained: () => emit("drained"),
          error: (e) => emit("error", unwrapNotReplicated(e)),
        },
      }),
    )
    const program = Effect.flatMap(loaded, () => serving)
    const starting = Effect.runFork(program)
    this.#stopStart = () => Effect.runPromise(Fiber.interrupt(starting)).then(() => undefined)
    this.ready = Effect.runPromise(Fiber.join(starting)).then(
      (handle) => {
        this.#handle = handle
      },
      async (e) => {
        if (!this.#closing) transition(this.#start, "failed")
        await Promise.all([this.#closeConnections(), pool?.close()])
        // closed before it could start (see close): say so rather than how the start was cut off
        throw this.#closing ? new QueueClosed({ queue: this.name }) : e
      },
    )
    this.ready.catch((e) => {
      if (!this.#closing) emit("error", e)
    })
  }

  /**
   * The lifecycle state (drawn in docs/workers.md): starting (Redis not reached yet),
   * running, paused ({@link pause}), draining, releasing, closed, or failed (a loop was given up, or the worker
   * could not start: it takes no jobs; close() it).
   */
  get state(): WorkerState {
    return this.#handle?.state() ?? this.#start.lifecycle.current
  }

  /**
   * Call each listener of `event` on its own: one that throws (or returns a Promise that
   * rejects) is reported as a {@link CallbackFailed} `error` event and the others still run.
   * An `error` event with no listener, or whose listener throws, goes to stderr (rate-limited).
   */
  #emit<K extends keyof WorkerEvents<T, R>>(event: K, ...args: WorkerEvents<T, R>[K]): void {
    const listeners = this.rawListeners(event) as Array<(...a: unknown[]) => unknown>
    if (event === "error" && listeners.length === 0) {
      this.#warn(args[0])
      return
    }
    const onThrow = (cause: unknown) => {
      const failed = new CallbackFailed({ callback: `the "${String(event)}" listener`, cause })
      if (event === "error") this.#warn(failed)
      else this.#emit("error", failed)
    }
    for (const listener of listeners) {
      try {
        const returned = listener.apply(this, args)
        if (returned instanceof Promise) returned.catch(onThrow)
      } catch (e) {
        onThrow(e)
      }
    }
  }

  /** Listen to `event`, one of the names of {@link WorkerEvents} (a misspelt name is a type error naming them). */
  override on<K extends WorkerEventName>(event: K, listener: (...args: WorkerEvents<T, R>[K]) => void): this {
    return super.on(event as never, listener as never)
  }

  /** As {@link on}, for the next `event` only. */
  override once<K extends WorkerEventName>(event: K, listener: (...args: WorkerEvents<T, R>[K]) => void): this {
    return super.once(event as never, listener as never)
  }

  /** Remove a listener added with {@link on} or {@link once}. */
  override off<K extends WorkerEventName>(event: K, listener: (...args: WorkerEvents<T, R>[K]) => void): this {
    return super.off(event as never, listener as never)
  }

  /**
   * Pause this worker (BullMQ's local pause; `queue.pause()` pauses the whole queue): it
   * leases no new job and gives back at once those it holds unstarted (attempts unchanged);
   * running handlers go on, their leases heartbeated. Resolves once no new job will start,
   * or with `{ wait: true }` once the handlers running now have ended (default false). A
   * worker still starting is paused once it runs; one closing, closed or failed takes no
   * jobs: nothing to do. Bad options reject with `InvalidOptions`.
   */
  async pause(options?: PauseOptions): Promise<void> {
    const checked = orThrow(checkPauseOptions(options))
    if (!this.#handle) await this.ready.catch(() => undefined)
    if (this.#handle) await Effect.runPromise(this.#handle.pause(checked))
  }

  /** Lease jobs again after {@link pause}. Rejects with `WorkerNotRunning` when the worker is closing, closed or failed. */
  async resume(): Promise<void> {
    if (!this.#handle) await this.ready.catch(() => undefined)
    const handle = this.#handle
    if (!handle) throw new WorkerNotRunning({ queue: this.name, state: this.state })
    await Effect.runPromise(handle.resume)
  }

  /** Handlers running now. */
  get running(): number {
    return this.#handle?.running() ?? 0
  }

  /**
   * Graceful shutdown: stop reserving, let running handlers finish for up to
   * `shutdownGraceMs`, then abort the rest and release their jobs so they run again at once.
   * Always resolves, also when Redis is unreachable; a worker still `starting` (Redis not
   * reached yet) holds nothing and closes at once.
   */
  close(): Promise<void> {
    if (!this.#closing) {
      this.#closeBatches()
      const handle = this.#handle
      const closingNow = handle ? Effect.runPromise(handle.close) : undefined
      this.#closing = (async () => {
        if (closingNow) await closingNow
        else {
          // still starting (Redis not reached): it holds nothing, so the start is stopped at
          // once and `ready` rejects with QueueClosed; a start that ended first is closed as usual
          await this.#stopStart()
          await this.ready.catch(() => undefined)
          if (this.#handle) await Effect.runPromise(this.#handle.close)
        }
        await Promise.all([this.#closeConnections(), this.#pool?.close()])
        if (!this.#handle) transition(this.#start, "closed")
        this.#emit("closed")
      })()
    }
    return this.#closing
  }
}
