/**
 * The isolation options of a worker (both faces) and their validation: a handler module
 * run in threads or processes instead of a function run in the worker's own thread.
 */
import { existsSync } from "node:fs"
import { resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { ResourceLimits } from "node:worker_threads"
import { InvalidOptions } from "../model/Errors.ts"
import type { Job } from "../model/HandlerJob.ts"
import { type BatchSettings, makeBatchCollector } from "../worker/Batch.ts"
import { type Isolation, type Pool, startPool } from "./Pool.ts"

/** Options of a worker whose handler is a module run off the worker's thread. */
export interface IsolationOptions {
  /**
   * Run the handler module (its default export, given instead of a function: a path or a
   * file URL, ESM) in `concurrency` worker threads (`"thread"`) or child processes
   * (`"process"`). Leases, heartbeats and settling stay in the worker's thread, so a handler
   * that blocks its thread keeps its lease; a lost lease, a cancel or a timeout terminates
   * the thread (kills the process) at once, and a crash fails that attempt (`HandlerCrashed`).
   * Default: none (a function handler runs in the worker's thread).
   */
  readonly isolation?: Isolation | undefined
  /** With `isolation: "thread"`: each thread's heap limits (Node's `ResourceLimits`); a thread past them fails its attempt as crashed. Default: Node's. */
  readonly resourceLimits?: ResourceLimits | undefined
}

/** The option keys {@link resolveIsolation} reads (the faces allow them). */
export const ISOLATION_KEYS = ["isolation", "resourceLimits"] as const

/** A validated isolation: where the handler runs and its module as a file URL. */
export interface Isolated {
  readonly isolation: Isolation
  readonly module: string
  readonly resourceLimits?: ResourceLimits | undefined
}

const moduleUrl = (given: string | URL): string => {
  const href =
    given instanceof URL ? given.href : given.startsWith("file:") ? given : pathToFileURL(resolve(given)).href
  if (!href.startsWith("file:"))
    throw new InvalidOptions({ field: "handler", value: href, reason: "must be a file path or a file: URL" })
  if (!existsSync(fileURLToPath(href)))
    throw new InvalidOptions({ field: "handler", value: href, reason: "no such file: give the handler module's path" })
  return href
}

/**
 * The isolation of a worker given `handler` (a function, or a module path / file URL) and
 * its options; undefined for a function run in-process. Throws {@link InvalidOptions}.
 */
export const resolveIsolation = (handler: unknown, options: Record<string, unknown>): Isolated | undefined => {
  const isolation = options.isolation
  if (isolation === undefined) {
    if (options.resourceLimits !== undefined)
      throw new InvalidOptions({
        field: "resourceLimits",
        value: options.resourceLimits,
        reason: 'applies only with isolation: "thread"',
      })
    if (typeof handler === "string" || handler instanceof URL)
      throw new InvalidOptions({
        field: "isolation",
        value: undefined,
        reason: 'a handler module needs isolation: "thread" or "process" (or give a function)',
      })
    return undefined
  }
  if (isolation !== "thread" && isolation !== "process")
    throw new InvalidOptions({ field: "isolation", value: isolation, reason: 'must be "thread" or "process"' })
  if (typeof handler !== "string" && !(handler instanceof URL))
    throw new InvalidOptions({
      field: "handler",
      value: typeof handler,
      reason: "with isolation, give the handler module's path or file URL (its default export is the handler)",
    })
  const limits = options.resourceLimits
  if (limits !== undefined && (isolation !== "thread" || typeof limits !== "object" || limits === null))
    throw new InvalidOptions({
      field: "resourceLimits",
      value: limits,
      reason: 'must be an object ({ maxOldGenerationSizeMb, … }), with isolation: "thread"',
    })
  return { isolation, module: moduleUrl(handler), resourceLimits: limits as ResourceLimits | undefined }
}

/**
 * The pool of a worker's `isolated` handler: one member per slot of `concurrency` (with
 * `batch`, one per `batch.size` slots: a member runs a whole batch); a handler aborted by
 * close gets half of `shutdownAbortGraceMs` to end on its own before it is stopped (so its
 * job is released, not left to expire).
 */
export const workerPool = (
  isolated: {
    readonly isolation: Isolation
    readonly module: string
    readonly resourceLimits?: ResourceLimits | undefined
  },
  settings: {
    readonly concurrency: number
    readonly shutdownAbortGraceMs: number
    readonly batch?: BatchSettings | undefined
  },
  queue: string,
  onError: (e: unknown) => void,
): Pool =>
  startPool({
    ...isolated,
    size: settings.batch ? Math.ceil(settings.concurrency / settings.batch.size) : settings.concurrency,
    queue,
    abortGraceMs: Math.floor(settings.shutdownAbortGraceMs / 2),
    onError,
  })

/**
 * The engine's per-job handler of an isolated worker, and `close` (the worker closes: a
 * batch gathered is handed at once): each job on its own, or with `batch` gathered into
 * batches, each run on one member (the module's default export gets `jobs`).
 */
export const isolatedRunner = (pool: Pool, batch: BatchSettings | undefined) => {
  if (batch === undefined) return { run: (job: Job<unknown>) => pool.run(job), close: () => undefined }
  const collector = makeBatchCollector<unknown>(batch, (entries) => pool.runBatch(entries))
  return { run: (job: Job<unknown>) => collector.take(job).outcome, close: collector.close }
}
