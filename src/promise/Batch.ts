/**
 * The Promise face of batches (the `batch` worker option): the handler gets `jobs`, an
 * array of {@link BatchJob}s, and settles them (see src/engine/worker/Batch.ts).
 */
import type { Job } from "../engine/queue/Job.ts"
import { type BatchEntry, type BatchRun, makeBatchCollector } from "../engine/worker/Batch.ts"
import type { BatchSettings } from "../engine/worker/WorkerOptions.ts"

export type { BatchOptions } from "../engine/worker/Batch.ts"

/**
 * A job of a batch: a {@link Job} (its own id, payload, attempt, token and signal) that
 * the batch handler may settle on its own. Each job's outcome is settled once, by the first of:
 * its `complete` or `fail`, the handler resolving (completes the rest, result undefined)
 * or throwing (fails the rest with that error, each spending its own attempt).
 */
export interface BatchJob<T, R = unknown> extends Job<T> {
  /** Complete this job now (its slot is freed at once), with `result` kept as a job's handler result is. */
  readonly complete: (result?: R) => void
  /** Fail this job now, with `error`: retried with backoff, or dead when its attempts are used up. */
  readonly fail: (error: unknown) => void
}

/** A batch handler: `jobs` holds 1 to `batch.size` jobs. */
export type BatchHandler<T, R = unknown> = (jobs: ReadonlyArray<BatchJob<T, R>>) => Promise<unknown> | unknown

/** The engine job a batch job is, with its entry's settle functions. */
class PromiseBatchJob<T, R> implements BatchJob<T, R> {
  readonly id: string
  readonly payload: T
  readonly attempt: number
  readonly maxAttempts: number
  readonly token: number
  readonly progress: (value: unknown) => void
  readonly log: (line: string) => Promise<void>
  readonly complete: (result?: R) => void
  readonly fail: (error: unknown) => void
  readonly #job: Job<T>
  constructor(entry: BatchEntry<T>) {
    const job = entry.job
    this.#job = job
    this.id = job.id
    this.payload = job.payload
    this.attempt = job.attempt
    this.maxAttempts = job.maxAttempts
    this.token = job.token
    this.progress = job.progress
    this.log = (line) => job.log(line)
    this.complete = entry.complete
    this.fail = entry.fail
  }
  get signal(): AbortSignal {
    return this.#job.signal
  }
  get name(): string | undefined {
    return this.#job.name
  }
}

/**
 * The per-job handler that gathers jobs into batches for `handler`, and `close`, to call
 * when the worker closes (what is gathered is handed at once).
 */
export const batchRunner = <T, R>(handler: BatchHandler<T, R>, settings: BatchSettings) => {
  const collector = makeBatchCollector<T>(settings, (entries): BatchRun => {
    const jobs = entries.map((e) => new PromiseBatchJob<T, R>(e))
    return { done: Promise.resolve(handler(jobs)) }
  })
  return {
    run: (job: Job<T>): Promise<unknown> => collector.take(job).outcome,
    close: collector.close,
  }
}
