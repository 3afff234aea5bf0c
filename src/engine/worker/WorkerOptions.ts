/**
 * Worker options: what a user may set, the defaults, and their validation.
 */

import { DEFAULT_SWEEP_LIMIT } from "../admin/Sweeper.ts"
import { type Backoff, validateBackoff } from "../model/Backoff.ts"
import { InvalidOptions } from "../model/Errors.ts"
import { integer, integerOr, knownKeys, Limits, optionsObject } from "../model/Validate.ts"
import { type BatchOptions, type BatchSettings, DEFAULT_BATCH_WAIT_MS } from "./Batch.ts"

export type { BatchOptions, BatchSettings } from "./Batch.ts"

/** Options common to both faces' workers. */
export interface WorkerOptions {
  /** Key prefix. Default "leaseq". */
  readonly prefix?: string | undefined
  /** Jobs running at once (a batch of 50 holds 50). Default 1, or `batch.size` with `batch`. Range 1–10 000. */
  readonly concurrency?: number | undefined
  /** Lease length in ms: a job whose worker stops heartbeating is reclaimed this long after the last heartbeat. Default 30 000. Range 10 ms – 24 h. */
  readonly leaseMs?: number | undefined
  /** Heartbeat period in ms (one extend call for all held leases). Default leaseMs / 3. Must be below leaseMs / 2. */
  readonly heartbeatMs?: number | undefined
  /** Retry delay after a handler failure. Default exponential from 1 s with jitter, capped at 1 h. */
  readonly backoff?: Backoff | undefined
  /** On close, how long running handlers may go on before they are aborted and their jobs released. Default 10 000. Range 0 – 1 h. */
  readonly shutdownGraceMs?: number | undefined
  /**
   * On close, how long a handler aborted after `shutdownGraceMs` may take to end (its
   * promise to settle, its finalizers to run) while its lease stays held (heartbeated).
   * A job is released only once its handler has ended; past this bound its lease is left
   * to expire and an `error` event (`ShutdownOverrun`) names the job. Default 5000. Range 0 – 1 h.
   */
  readonly shutdownAbortGraceMs?: number | undefined
  /**
   * Server-side grace in ms: the worker asks Redis for leases of `leaseMs + leaseGraceMs`
   * while it fences itself on `leaseMs`, so a sweep (any sweep, also `leaseq sweep` from
   * cron) reclaims a lease only `leaseGraceMs` after the deadline the worker counts on.
   * Absorbs a process stall (GC, starved CPU) at that moment. A dead worker's job is
   * reclaimed this much later. Default max(1000, leaseMs / 10). Range 0 – 24 h.
   */
  readonly leaseGraceMs?: number | undefined
  /**
   * In-process sweeping of expired leases and due delayed jobs. Default on, every leaseMs / 2
   * (between 50 ms and 30 s, ±20 % jitter), up to 500 jobs per call. `false` turns it off
   * (sweep from cron with `leaseq sweep` instead).
   */
  readonly sweep?: boolean | { readonly intervalMs?: number; readonly limit?: number } | undefined
  /** Longest single blocking wait of an idle worker, in ms. Default 5000. Range 10 ms – 5 min. */
  readonly blockTimeoutMs?: number | undefined
  /**
   * Default `timeoutMs` of the jobs this worker runs (a job's own `timeoutMs` wins): past it
   * the handler's signal aborts (reason a `JobTimedOut`), the attempt counts as a failure
   * with reason "timeout" (retried with backoff, or dead), and the server extends the lease
   * no further than the run's start + timeoutMs + one lease. Default none. Range 1 ms – 24 h.
   */
  readonly timeoutMs?: number | undefined
  /**
   * Jobs a worker may hold beyond `concurrency`, leased (and heartbeated) but not started
   * yet: a freed slot starts the next one at once, and one reserve call fetches several.
   * Default `"auto"`: only while handlers are quick — as many as they finish in about
   * 2 ms at their measured pace, none while handlers are slow — so no job waits in one
   * worker's buffer while another worker could have run it for longer than that; and
   * only up to 48 jobs held in all (none at concurrency 48 or more, where the freed slots
   * already make reserve calls that large). A number fixes it (0: never prefetch). Range
   * 0 – 1000. Released unstarted at close.
   */
  readonly prefetch?: number | "auto" | undefined
  /**
   * Hand the handler up to `size` jobs at once (the handler then takes `jobs`, see
   * docs/flow-control.md), waiting at most `waitMs` (default 100) to fill a batch. Each job
   * keeps its own lease, token, attempts and outcome. `concurrency` counts jobs and must be
   * at least `size`. Default: none (one job per handler call).
   */
  readonly batch?: BatchOptions | undefined
}

/** Validated worker settings. */
export interface WorkerSettings {
  readonly concurrency: number
  readonly leaseMs: number
  readonly heartbeatMs: number
  readonly backoff: Backoff
  readonly shutdownGraceMs: number
  readonly shutdownAbortGraceMs: number
  readonly leaseGraceMs: number
  readonly sweep: false | { readonly intervalMs: number; readonly limit: number }
  readonly blockTimeoutMs: number
  /** Default timeout of a job run, in ms; 0 for none. */
  readonly timeoutMs: number
  /** Jobs held beyond concurrency (see {@link WorkerOptions.prefetch}); absent: 0. */
  readonly prefetch?: number | "auto"
  /**
   * Internal: let a finished job's complete ride along with the next reserve call
   * (default true). Off when completes must go alone, e.g. to be followed by WAIT.
   */
  readonly rideAlong?: boolean
  /** The `batch` option, when given (the faces gather the batches; the engine runs each job as usual). */
  readonly batch?: BatchSettings
}

/** Keys a worker's options object may have (the faces add `connection`). */
export const WORKER_OPTION_KEYS = [
  "prefix",
  "concurrency",
  "leaseMs",
  "heartbeatMs",
  "backoff",
  "shutdownGraceMs",
  "shutdownAbortGraceMs",
  "leaseGraceMs",
  "sweep",
  "blockTimeoutMs",
  "timeoutMs",
  "prefetch",
  "batch",
] as const

/** A fixed `prefetch`: a whole number from 0 to 1000 (else the error says "auto" is the other choice). */
const prefetchCount = (value: unknown): number => {
  if (typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= 1000) return value
  throw new InvalidOptions({ field: "prefetch", value, reason: 'must be "auto" or a whole number from 0 to 1000' })
}

/** The `batch` option: size 1 – 1000, waitMs 0 – 60 000 (default 100). */
const batchSettings = (value: unknown): BatchSettings | undefined => {
  if (value === undefined) return undefined
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new InvalidOptions({ field: "batch", value, reason: "must be { size, waitMs? }" })
  const b = value as Record<string, unknown>
  knownKeys("batch", b, ["size", "waitMs"])
  return {
    size: integer("batch.size", b.size, { min: 1, max: 1000 }),
    waitMs: integerOr("batch.waitMs", b.waitMs, DEFAULT_BATCH_WAIT_MS, { min: 0, max: 60_000 }),
  }
}

/** Validate worker options. Throws {@link InvalidOptions} naming the field and value. */
export const resolveWorkerOptions = (value: unknown, extraKeys: ReadonlyArray<string> = []): WorkerSettings => {
  const o = optionsObject("options", value)
  knownKeys("options", o, [...WORKER_OPTION_KEYS, ...extraKeys])
  const batch = batchSettings(o.batch)
  const concurrency = integerOr("concurrency", o.concurrency, batch?.size ?? 1, Limits.concurrency)
  if (batch !== undefined && concurrency < batch.size) {
    const reason = `must be at least batch.size (${batch.size}): a batch holds one slot per job`
    throw new InvalidOptions({ field: "concurrency", value: concurrency, reason })
  }
  const leaseMs = integerOr("leaseMs", o.leaseMs, 30_000, Limits.leaseMs)
  const heartbeatMs =
    o.heartbeatMs === undefined
      ? Math.max(1, Math.floor(leaseMs / 3))
      : integer("heartbeatMs", o.heartbeatMs, { min: 1, max: Math.max(1, Math.ceil(leaseMs / 2) - 1) })
  const shutdownGraceMs = integerOr("shutdownGraceMs", o.shutdownGraceMs, 10_000, Limits.shutdownGraceMs)
  const shutdownAbortGraceMs = integerOr("shutdownAbortGraceMs", o.shutdownAbortGraceMs, 5_000, Limits.shutdownGraceMs)
  const leaseGraceMs = integerOr("leaseGraceMs", o.leaseGraceMs, Math.max(1_000, Math.floor(leaseMs / 10)), {
    min: 0,
    max: Limits.leaseMs.max,
  })
  const blockTimeoutMs = integerOr("blockTimeoutMs", o.blockTimeoutMs, 5_000, { min: 10, max: 300_000 })
  const backoff = validateBackoff("backoff", o.backoff)
  const timeoutMs = o.timeoutMs === undefined ? 0 : integer("timeoutMs", o.timeoutMs, Limits.timeoutMs)
  const prefetch = o.prefetch === undefined || o.prefetch === "auto" ? ("auto" as const) : prefetchCount(o.prefetch)
  let sweep: WorkerSettings["sweep"]
  const defaultInterval = Math.min(30_000, Math.max(50, Math.floor(leaseMs / 2)))
  if (o.sweep === false) sweep = false
  else if (o.sweep === undefined || o.sweep === true)
    sweep = { intervalMs: defaultInterval, limit: DEFAULT_SWEEP_LIMIT }
  else if (typeof o.sweep === "object" && o.sweep !== null) {
    const s = o.sweep as Record<string, unknown>
    knownKeys("sweep", s, ["intervalMs", "limit"])
    sweep = {
      intervalMs: integerOr("sweep.intervalMs", s.intervalMs, defaultInterval, { min: 10, max: 3_600_000 }),
      limit: integerOr("sweep.limit", s.limit, DEFAULT_SWEEP_LIMIT, Limits.sweepLimit),
    }
  } else {
    throw new InvalidOptions({ field: "sweep", value: o.sweep, reason: "must be true, false or { intervalMs, limit }" })
  }
  return {
    concurrency,
    leaseMs,
    heartbeatMs,
    backoff,
    shutdownGraceMs,
    shutdownAbortGraceMs,
    leaseGraceMs,
    sweep,
    blockTimeoutMs,
    timeoutMs,
    prefetch,
    ...(batch === undefined ? {} : { batch }),
  }
}
