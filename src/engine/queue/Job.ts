/**
 * Job options: validation, defaults, and the job a handler receives.
 */

import * as Result from "effect/Result"
import type { NewJob } from "../calls/Commands.ts"
import { checkJobBackoff, type JobBackoff } from "../model/Backoff.ts"
import { namePayload } from "../model/Carrier.ts"
import { InvalidOptions } from "../model/Errors.ts"
import { checkCustomId, newJobId } from "../model/JobId.ts"
import { checkJobName } from "../model/JobName.ts"
import { type Checked, checkIntegerOr, checkKnownKeys, checkObject, Limits, orThrow } from "../model/Validate.ts"
import { checkDedupe } from "./JobDedupe.ts"
import { checkOrder } from "./JobOrder.ts"

export { newJobId } from "../model/JobId.ts"

/** Options of one job that do not depend on each other. */
interface JobOptionsBase {
  /**
   * The job's own id instead of a generated ULID: 1–128 characters from letters, digits,
   * `-`, `_`, `.` and `:`. While a job with this id exists in any state (waiting, delayed,
   * active, retained completed or cancelled, dead), adding another writes nothing and
   * answers this id, as a dedupe key does. Default: a new ULID. Not taken from `defaultJobOptions`.
   */
  readonly id?: string | undefined
  /** Run no earlier than this many ms from now (Redis clock). Default 0. Max 365 days. */
  readonly delayMs?: number | undefined
  /** Attempts that may fail (handler failures + lost leases) before the job goes to dead. Default 3. Range 1–1000. */
  readonly maxAttempts?: number | undefined
  /**
   * Longest run of one attempt, in ms: past it the handler's signal aborts (reason a
   * `JobTimedOut`) and the attempt counts as a failure with reason "timeout" (retried
   * with backoff, or dead). The server extends no lease past the run's start + timeoutMs +
   * one lease, so a handler that ignores its signal is reclaimed. Default: the worker's
   * `timeoutMs`, else none. Range 1 ms – 24 h.
   */
  readonly timeoutMs?: number | undefined
  /**
   * Lower runs first: a whole number from 0 to 1 000 000. Jobs of one priority run in the
   * order they became ready (FIFO); a job released, reclaimed, retried or delayed keeps its
   * priority. Default 0 (first). Change it while the job waits with `changePriority`.
   */
  readonly priority?: number | undefined
  /**
   * `true`: a job ready at once goes to the front of its priority (runs next among it)
   * instead of the back; a delayed job goes to the back when it becomes due. Default false.
   */
  readonly lifo?: boolean | undefined
  /** The job's group (a tenant): groups are served round robin, each with its own limits (docs/flow-control.md). 1–128 characters, no NUL. Default none. */
  readonly group?: string | undefined
  /** The job's own retry delays ({@link JobBackoff}) instead of the worker's backoff. Default: none. */
  readonly backoff?: JobBackoff | undefined
  /**
   * The job's name (BullMQ's `add(name, data)`), given to the handler as `job.name` and shown by
   * getJob, getJobs, the CLI and the dashboard. 1–128 characters, no control characters.
   * Default none (nothing stored). Not taken from `defaultJobOptions`.
   */
  readonly name?: string | undefined
}

/** No dedupe: `dedupeTtlMs` and `dedupeUntil` need a `dedupeKey`. */
export interface WithoutDedupe extends JobOptionsBase {
  readonly dedupeKey?: undefined
  readonly dedupeTtlMs?: undefined
  readonly dedupeUntil?: undefined
  readonly dedupeExtend?: undefined
  readonly dedupeReplace?: undefined
}

/** A dedupe key held for `dedupeTtlMs`. */
export interface DedupeForTtl extends JobOptionsBase {
  /** While a job with this key was added less than `dedupeTtlMs` ago, adding another returns the first id and adds nothing. */
  readonly dedupeKey: string
  /** How long a dedupe key holds, in ms. Default 3 600 000 (1 h). Range 1 ms – 30 days. */
  readonly dedupeTtlMs?: number | undefined
  readonly dedupeUntil?: undefined
  /** A duplicate add holds the key `dedupeTtlMs` from now again (BullMQ's `deduplication.extend`). Default false. */
  readonly dedupeExtend?: boolean | undefined
  /** A duplicate add replaces the holder's payload while it waits or is delayed (and its delay, if given): BullMQ's debounce `replace`. Default false. */
  readonly dedupeReplace?: boolean | undefined
}

/** A dedupe key held until the job finishes (not together with `dedupeTtlMs`). */
export interface DedupeUntilFinished extends JobOptionsBase {
  /** While the job with this key exists, adding another returns its id and adds nothing. */
  readonly dedupeKey: string
  readonly dedupeTtlMs?: undefined
  /**
   * `"finished"`: hold the dedupe key while the job exists, and free it when the job
   * completes, dies or is cancelled (instead of for `dedupeTtlMs`). Default: unset (a TTL).
   */
  readonly dedupeUntil: "finished"
  readonly dedupeExtend?: undefined
  /** As for a TTL key. Default false. */
  readonly dedupeReplace?: boolean | undefined
}

/**
 * Options of one job, given to `add` (or as a queue's `defaultJobOptions`): `delayMs`,
 * `maxAttempts`, `timeoutMs`, and a dedupe key held for a TTL or until the job finishes.
 * The types allow `dedupeTtlMs` and `dedupeUntil` only with a `dedupeKey`, and not both.
 */
export type JobOptions = WithoutDedupe | DedupeForTtl | DedupeUntilFinished

export { DEDUPE_UNTIL_FINISHED } from "./JobDedupe.ts"

/** One job of an `addBulk` call: its payload (before encoding) and options. */
export interface BulkJob<T> {
  readonly payload: T
  readonly options?: JobOptions | undefined
}

/** Default maxAttempts. */
export const DEFAULT_MAX_ATTEMPTS = 3
/** Default dedupeTtlMs (1 h). */
export const DEFAULT_DEDUPE_TTL_MS = 3_600_000

const JOB_OPTION_KEYS = [
  "id",
  "delayMs",
  "maxAttempts",
  "dedupeKey",
  "dedupeTtlMs",
  "dedupeUntil",
  "dedupeExtend",
  "dedupeReplace",
  "timeoutMs",
  "priority",
  "lifo",
  "group",
  "backoff",
  "name",
] as const

/**
 * Job options with every default filled in (`dedupeKey` "" for none; `dedupeTtlMs`
 * {@link DEDUPE_UNTIL_FINISHED} for `dedupeUntil: "finished"`; `timeoutMs` 0 for none).
 */
export type ResolvedJobOptions = {
  readonly [K in Exclude<keyof JobOptions, OwnResolved>]-?: Exclude<JobOptions[K], undefined>
} & {
  readonly id?: string | undefined
  readonly dedupeKey: string
  readonly timeoutMs: number
  readonly lifo: boolean
  readonly backoff?: string | undefined // validated, as the JSON text stored with it
  readonly name?: string | undefined
}
type OwnResolved = "id" | "dedupeKey" | "dedupeUntil" | "timeoutMs" | "lifo" | "backoff" | "name"

/** A job's `timeoutMs` validated (1 ms – 24 h); 0 for none. */
const checkTimeout = (field: string, value: unknown): Checked<number> =>
  checkIntegerOr(`${field}.timeoutMs`, value, 0, Limits.timeoutMs)

/** Job options validated, with defaults from `defaults`; else the {@link InvalidOptions} of the first bad one. */
export const checkJobOptions = (
  field: string,
  value: unknown,
  defaults: JobOptions = {},
): Checked<ResolvedJobOptions> => {
  const o = checkObject(field, value)
  if (Result.isFailure(o)) return Result.fail(o.failure)
  const given = o.success
  const unknown = checkKnownKeys(field, given, JOB_OPTION_KEYS)
  if (Result.isFailure(unknown)) return Result.fail(unknown.failure)
  const id = checkCustomId(field, given.id)
  if (Result.isFailure(id)) return Result.fail(id.failure)
  const delayMs = checkIntegerOr(`${field}.delayMs`, given.delayMs ?? defaults.delayMs, 0, Limits.delayMs)
  if (Result.isFailure(delayMs)) return Result.fail(delayMs.failure)
  const maxAttempts = checkIntegerOr(
    `${field}.maxAttempts`,
    given.maxAttempts ?? defaults.maxAttempts,
    DEFAULT_MAX_ATTEMPTS,
    Limits.maxAttempts,
  )
  if (Result.isFailure(maxAttempts)) return Result.fail(maxAttempts.failure)
  const dedupeTtlMs = checkIntegerOr(
    `${field}.dedupeTtlMs`,
    given.dedupeTtlMs ?? defaults.dedupeTtlMs,
    DEFAULT_DEDUPE_TTL_MS,
    Limits.dedupeTtlMs,
  )
  if (Result.isFailure(dedupeTtlMs)) return Result.fail(dedupeTtlMs.failure)
  const dedupe = checkDedupe(field, given, defaults, dedupeTtlMs.success)
  if (Result.isFailure(dedupe)) return Result.fail(dedupe.failure)
  const order = checkOrder(field, given, defaults)
  if (Result.isFailure(order)) return Result.fail(order.failure)
  const backoff = checkJobBackoff(field, given.backoff ?? defaults.backoff)
  if (Result.isFailure(backoff)) return Result.fail(backoff.failure)
  const name = checkJobName(`${field}.name`, given.name)
  if (Result.isFailure(name)) return Result.fail(name.failure)
  return Result.map(checkTimeout(field, given.timeoutMs ?? defaults.timeoutMs), (timeoutMs) => ({
    ...(id.success === undefined ? {} : { id: id.success }),
    ...(name.success === undefined ? {} : { name: name.success }),
    ...(backoff.success === undefined ? {} : { backoff: backoff.success }),
    delayMs: delayMs.success,
    maxAttempts: maxAttempts.success,
    ...dedupe.success,
    timeoutMs,
    ...order.success,
  }))
}

/** {@link checkJobOptions}, throwing its error (synchronous option parsing). */
export const resolveJobOptions = (field: string, value: unknown, defaults: JobOptions = {}): ResolvedJobOptions =>
  orThrow(checkJobOptions(field, value, defaults))

/** Build what `add` sends for one job. */
export const newJob = (payload: string, options: ResolvedJobOptions): NewJob => ({
  id: options.id ?? newJobId(),
  // a name travels in front of the payload (model/Carrier.ts): no field written without one
  payload: namePayload(payload, options.name),
  delayMs: options.delayMs,
  maxAttempts: options.maxAttempts,
  dedupeKey: options.dedupeKey,
  dedupeTtlMs: options.dedupeTtlMs,
  ...(options.dedupeExtend ? { dedupeExtend: true } : {}),
  ...(options.dedupeReplace ? { dedupeReplace: true } : {}),
  timeoutMs: options.timeoutMs,
  priority: options.priority,
  lifo: options.lifo,
  ...(options.group === "" ? {} : { group: options.group }),
  ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
})

export type { Job } from "../model/HandlerJob.ts"
