/**
 * Helpers for users' own tests, as Oban.Testing and rivertest give them: `perform` runs one
 * job through a handler with the real engine (a real `Queue` and `Worker` on a real Redis,
 * one the helper starts unless given), and `enqueued` / `assertEnqueued` / `refuteEnqueued`
 * look at what a piece of code put on a queue.
 */
import { randomBytes } from "node:crypto"
import type { DeadReason } from "../engine/model/Failure.ts"
import type { Job, JobOptions } from "../engine/queue/Job.ts"
import type { JobInfo } from "../engine/queue/JobCommands.ts"
import type { ListedJob, ListState } from "../engine/queue/OpsApi.ts"
import { Queue } from "../promise/Queue.ts"
import { Worker, type WorkerOptions } from "../promise/Worker.ts"
import { startRedisServer } from "./RedisServer.ts"

/** Options of {@link perform}. */
export interface PerformOptions {
  /** A Redis URL to run on. Default: a redis-server started for this call (from PATH) and stopped after it. */
  readonly connection?: string | undefined
  /** The queue the job goes through. Default: a fresh `perform-<random>`, deleted after the call. */
  readonly queue?: string | undefined
  /** Key prefix. Default `"leaseq"`. */
  readonly prefix?: string | undefined
  /** The job's options (`maxAttempts` defaults to 1 here: one run, completed or dead). */
  readonly job?: JobOptions | undefined
  /** The worker's options besides `connection` and `prefix` (here concurrency 1 and `shutdownGraceMs` 0 unless given: a timed-out handler is aborted at once). */
  readonly worker?: Omit<WorkerOptions, "connection" | "prefix"> | undefined
  /** How long to wait for the job to complete or die before failing with a timeout. Default 10 000 ms. */
  readonly timeoutMs?: number | undefined
}

/** What became of the job {@link perform} ran. */
export type PerformOutcome<P, R> =
  | {
      readonly state: "completed"
      readonly id: string
      /** The handler's result. */
      readonly result: R
      /** Runs of the handler (1 unless retried). */
      readonly attempts: number
      /** What each failed attempt threw before it completed, in order. */
      readonly errors: ReadonlyArray<unknown>
      /** What the queue knows of the job once it finished (`getJob`; undefined if not retained). */
      readonly info: JobInfo<P, R> | undefined
    }
  | {
      readonly state: "dead"
      readonly id: string
      /** Why it died: "failed", "timeout", "invalid-payload", "lease-expired". */
      readonly reason: DeadReason
      /** The last attempt's error, as the worker saw it. */
      readonly error: unknown
      readonly attempts: number
      /** What each attempt threw, in order. */
      readonly errors: ReadonlyArray<unknown>
      readonly info: JobInfo<P, R> | undefined
    }

/** A fresh name: `<tag>-<12 hex>`. */
const freshName = (tag: string) => `${tag}-${randomBytes(6).toString("hex")}`

/**
 * Run one job with `payload` through `handler` with the real engine: a `Queue` adds it, a
 * `Worker` runs it (the handler gets a real `job`: id, attempt, signal, progress), and the
 * outcome says whether it completed (with the result) or died (with the reason and error),
 * after how many attempts. Retries take the job's backoff (give `job: { maxAttempts: 3,
 * backoff: { type: "fixed", delayMs: 0 } }` to retry at once). Everything the call made is
 * removed after it: the queue (unless `queue` was given), and the redis-server it started.
 *
 * ```ts
 * import { perform } from "leaseq/testing"
 * const outcome = await perform(async (job) => job.payload.n * 2, { n: 21 })
 * // { state: "completed", result: 42, attempts: 1, … }
 * ```
 */
export const perform = async <P, R>(
  handler: (job: Job<P>) => Promise<R> | R,
  payload: P,
  options: PerformOptions = {},
): Promise<PerformOutcome<P, R>> => {
  const started = options.connection === undefined ? await startRedisServer() : undefined
  const connection = options.connection ?? (started?.url as string)
  const name = options.queue ?? freshName("perform")
  const prefix = options.prefix
  const queue = new Queue<P, R>(name, { connection, prefix })
  let worker: Worker<P, R> | undefined
  try {
    const id = await queue.add(payload, { maxAttempts: 1, ...options.job })
    let attempts = 0
    const errors: unknown[] = []
    const settled = new Promise<
      { readonly state: "completed"; readonly result: R } | { readonly state: "dead"; readonly reason: DeadReason }
    >((resolve) => {
      worker = new Worker<P, R>(
        name,
        async (job) => {
          if (job.id === id) attempts++
          return handler(job)
        },
        { concurrency: 1, shutdownGraceMs: 0, ...options.worker, connection, prefix },
      )
      worker.on("completed", (job, result) => {
        if (job.id === id) resolve({ state: "completed", result })
      })
      worker.on("failed", (job, error) => {
        if (job.id === id) errors.push(error)
      })
      worker.on("dead", (job, reason, error) => {
        if (job.id !== id) return
        if (errors.length === 0 || errors[errors.length - 1] !== error) errors.push(error)
        resolve({ state: "dead", reason })
      })
      worker.on("error", () => {})
    })
    const timeoutMs = options.timeoutMs ?? 10_000
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `perform: job ${id} of queue ${name} neither completed nor died within ${timeoutMs} ms (timeoutMs); a retry waits for its backoff`,
            ),
          ),
        timeoutMs,
      )
    })
    const end = await Promise.race([settled, timedOut]).finally(() => clearTimeout(timer))
    const info = await queue.getJob(id)
    return end.state === "completed"
      ? { state: "completed", id, result: end.result, attempts, errors, info }
      : { state: "dead", id, reason: end.reason, error: errors[errors.length - 1], attempts, errors, info }
  } finally {
    await worker?.close()
    if (options.queue === undefined) await queue.obliterate({ force: true }).catch(() => undefined)
    await queue.close()
    await started?.stop()
  }
}

/** What {@link enqueued} looks for: jobs of these states, with this name, whose payload matches. */
export interface EnqueuedFilter<P> {
  /** A job's `name` (when jobs carry names). Default: any. */
  readonly name?: string | undefined
  /**
   * The payload: a partial object (every field given must be equal, recursively; arrays
   * whole), a value compared as JSON, or a predicate. Default: any.
   */
  readonly payload?: ((payload: P) => boolean) | DeepPartial<P> | undefined
  /** The states looked in. Default `["waiting", "delayed"]`: what was enqueued and not run yet. */
  readonly state?: ListState | ReadonlyArray<ListState> | undefined
}

/** `T` with every field optional, recursively (arrays whole). */
export type DeepPartial<T> =
  T extends ReadonlyArray<unknown> ? T : T extends object ? { readonly [K in keyof T]?: DeepPartial<T[K]> } : T

/** True when `actual` has every field of `expected` equal (recursively; arrays and other values whole, as JSON). */
export const matchesPartial = (actual: unknown, expected: unknown): boolean => {
  if (typeof expected === "object" && expected !== null && !Array.isArray(expected)) {
    if (typeof actual !== "object" || actual === null || Array.isArray(actual)) return false
    return Object.entries(expected).every(([k, v]) => matchesPartial((actual as Record<string, unknown>)[k], v))
  }
  return JSON.stringify(actual) === JSON.stringify(expected)
}

/** The most jobs {@link enqueued} reads per state (pages of 1,000): a test queue is small. */
export const ENQUEUED_MAX = 10_000

/**
 * The jobs on `queue` that match `filter` (default: every waiting and delayed job), oldest
 * first per state: what the code under test enqueued. Reads at most {@link ENQUEUED_MAX} per state.
 */
export const enqueued = async <P>(
  queue: Queue<P, unknown>,
  filter: EnqueuedFilter<P> = {},
): Promise<ReadonlyArray<ListedJob<P>>> => {
  const states: ReadonlyArray<ListState> =
    filter.state === undefined
      ? ["waiting", "delayed"]
      : typeof filter.state === "string"
        ? [filter.state]
        : filter.state
  const out: Array<ListedJob<P>> = []
  for (const state of states) {
    let cursor: string | undefined
    let read = 0
    do {
      const page = await queue.getJobs(state, { count: 1000, ...(cursor === undefined ? {} : { cursor }) })
      read += page.jobs.length
      out.push(...page.jobs.filter((j) => matches(j, filter)))
      cursor = page.cursor
    } while (cursor !== undefined && read < ENQUEUED_MAX)
  }
  return out
}

const matches = <P>(job: ListedJob<P>, filter: EnqueuedFilter<P>): boolean => {
  if (filter.name !== undefined && (job as { readonly name?: string }).name !== filter.name) return false
  const p = filter.payload
  if (p === undefined) return true
  if (typeof p === "function") return job.payload !== null && (p as (payload: P) => boolean)(job.payload)
  return matchesPartial(job.payload, p)
}

/** What the assertion failures say: the filter, and what was enqueued (the first 10). */
const describeMiss = async <P>(queue: Queue<P, unknown>, filter: EnqueuedFilter<P>, found: number, want: string) => {
  const all = await enqueued(queue, { state: filter.state })
  const shown = all
    .slice(0, 10)
    .map((j) => `  ${j.state} ${j.id} ${JSON.stringify(j.payload)}`)
    .join("\n")
  const what = JSON.stringify({
    ...filter,
    payload: typeof filter.payload === "function" ? "(predicate)" : filter.payload,
  })
  return `expected ${want} job(s) on queue ${queue.name} matching ${what}, found ${found}; enqueued (${all.length}):\n${shown || "  (none)"}`
}

/**
 * Throw unless `queue` holds a job matching `filter` (exactly `count` of them when given),
 * naming what it holds instead. Resolves with the matching jobs.
 */
export const assertEnqueued = async <P>(
  queue: Queue<P, unknown>,
  filter: EnqueuedFilter<P> = {},
  options: { readonly count?: number } = {},
): Promise<ReadonlyArray<ListedJob<P>>> => {
  const found = await enqueued(queue, filter)
  const ok = options.count === undefined ? found.length > 0 : found.length === options.count
  if (!ok)
    throw new Error(
      await describeMiss(
        queue,
        filter,
        found.length,
        options.count === undefined ? "at least 1" : String(options.count),
      ),
    )
  return found
}

/** Throw when `queue` holds a job matching `filter`, naming it. */
export const refuteEnqueued = async <P>(queue: Queue<P, unknown>, filter: EnqueuedFilter<P> = {}): Promise<void> => {
  const found = await enqueued(queue, filter)
  if (found.length > 0) throw new Error(await describeMiss(queue, filter, found.length, "no"))
}
