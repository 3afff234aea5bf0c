/**
 * What an Effect worker checks before it starts (LeaseWorker.ts): the queue service, the
 * handler, the options (the engine's, the hooks, durability), and its default error report.
 */
import { Effect, Result } from "effect"
import type { HandlerModuleFailed } from "../engine/isolation/IsolationErrors.ts"
import {
  ISOLATION_KEYS,
  type Isolated,
  isolatedRunner,
  resolveIsolation,
  workerPool,
} from "../engine/isolation/Options.ts"
import { InvalidOptions } from "../engine/model/Errors.ts"
import { type Checked, checkObject } from "../engine/model/Validate.ts"
import { checkDurability } from "../engine/partition/Durability.ts"
import { durableSettings } from "../engine/partition/PartitionWorkers.ts"
import type { Job } from "../engine/queue/Job.ts"
import { makeRateLimiter, WARN_WINDOW_MS } from "../engine/worker/WorkerHooks.ts"
import { resolveWorkerOptions, type WorkerSettings } from "../engine/worker/WorkerOptions.ts"
import { InternalsKey, type Service } from "./LeaseQueue.ts"
import { parseOptions } from "./Payload.ts"

const HOOK_KEYS = [
  "onCompleted",
  "onFailed",
  "onLeaseLost",
  "onLoopBlocked",
  "onDead",
  "onCancelled",
  "onDrained",
  "onError",
] as const

const invalid = (field: string, value: unknown, reason: string) => new InvalidOptions({ field, value, reason })

/**
 * The options a worker may not take or must take as functions: the queue's layout and key
 * prefix belong to its layer (a worker serves the queue as it is); hooks are functions.
 */
const checkOwnKeys = (given: Record<string, unknown>): Checked<void> => {
  for (const key of ["prefix", "partitions"] as const) {
    if (given[key] !== undefined) {
      return Result.fail(
        invalid(`options.${key}`, given[key], `a worker uses its queue's ${key}; set it on the queue layer`),
      )
    }
  }
  for (const key of HOOK_KEYS) {
    if (given[key] !== undefined && typeof given[key] !== "function") {
      return Result.fail(invalid(`options.${key}`, given[key], "must be a function returning an Effect"))
    }
  }
  return Result.void
}

/** Check what `make` was given, before anything is opened: the queue's internals, the engine settings, durability. */
export const checkStart = <A>(service: Service<A>, handler: unknown, options: object) =>
  Effect.gen(function* () {
    const internals = service[InternalsKey]
    if (internals === undefined) {
      const reason = "a worker needs a queue service built by LeaseQueue.make, layer or layerConfig"
      return yield* Effect.fail(invalid("queue", service.name, reason))
    }
    const given = yield* Effect.fromResult(checkObject("options", options))
    // a handler module with `isolation` (run in threads or processes), else a function
    const isolated = yield* parseOptions(() => resolveIsolation(handler, given))
    if (isolated === undefined && typeof handler !== "function") {
      return yield* Effect.fail(invalid("handler", handler, "must be a function (job) => Effect"))
    }
    yield* Effect.fromResult(checkOwnKeys(given))
    const resolved = yield* parseOptions(() =>
      resolveWorkerOptions(given, [...HOOK_KEYS, "durability", ...ISOLATION_KEYS]),
    )
    const durability =
      given.durability === undefined
        ? internals.queue.durability
        : yield* Effect.fromResult(checkDurability(given.durability))
    return { internals, durability, isolated, settings: durableSettings(resolved, durability) }
  })

/** The `onError` a worker reports to: the user's, or a warning log at most once per 30 s. */
export const errorReporter = <R>(
  queue: string,
  onError: ((error: unknown) => Effect.Effect<void, never, R>) | undefined,
) => {
  if (onError) return onError
  const allowWarning = makeRateLimiter(WARN_WINDOW_MS)
  return (error: unknown): Effect.Effect<void, never, R> =>
    Effect.suspend(() => {
      const suppressed = allowWarning()
      if (suppressed === undefined) return Effect.void
      const more = suppressed > 0 ? [`(+${suppressed} more since the last such warning)`] : []
      return Effect.logWarning("leaseq worker: error, it goes on", error, ...more).pipe(
        Effect.annotateLogs("queue", queue),
      )
    })
}

/**
 * The engine handler of an isolated worker: its pool (closed with the scope, after the
 * engine that was started later) runs each job (or batch), and `close`, to call when the
 * worker closes; fails with {@link HandlerModuleFailed} when the module does not load.
 */
export const isolatedHandler = (
  isolated: Isolated,
  settings: WorkerSettings,
  queue: string,
  onError: (e: unknown) => void,
) =>
  Effect.gen(function* () {
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => workerPool(isolated, settings, queue, onError)),
      (p) => Effect.promise(() => p.close()),
    )
    yield* Effect.tryPromise({ try: () => pool.ready, catch: (e) => e as HandlerModuleFailed })
    const runner = isolatedRunner(pool, settings.batch)
    return {
      run: (job: Job<unknown>) => Effect.tryPromise({ try: () => runner.run(job), catch: (e) => e }),
      close: runner.close,
    }
  })
