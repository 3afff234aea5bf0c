/**
 * The Promise face of a queue: `new Queue(name, options)`.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { DeadJob, QueueStats } from "../engine/Commands.ts"
import {
  InvalidOptions,
  type InvalidPayload,
  type OutcomeUnknown,
  QueueClosed,
  type RedisUnavailable,
} from "../engine/Errors.ts"
import type { BulkJob, JobOptions } from "../engine/Job.ts"
import { validateQueueName } from "../engine/Keys.ts"
import type { PartitionedStats } from "../engine/partition/Producer.ts"
import { type AnyQueue, LAYOUT_KEYS, type LayoutInput, makeQueue, resolveLayout } from "../engine/partition/Queue.ts"
import { type QueueCore, type QueueSettingsInput, resolveQueueOptions } from "../engine/QueueCore.ts"
import type { WorkerInfo } from "../engine/Registry.ts"
import type { SweepPassOptions, SweepTotals } from "../engine/Sweeper.ts"
import { type Checked, checkIntegerOr, checkPage, encodePayload } from "../engine/Validate.ts"
import { DEFAULT_VERIFY_LINES, DEFAULT_VERIFY_PAGE, VERIFY_PAGE_LIMITS } from "../engine/Verify.ts"
import { type ConnectionOption, connect, type RedisClient } from "../redis/Client.ts"

/** Options of {@link Queue}. */
export interface QueueOptions extends QueueSettingsInput, LayoutInput {
  /** A redis:// or rediss:// URL, ioredis options, an ioredis Redis or Cluster (borrowed, never closed), or `{ cluster: nodes }`. Default: `REDIS_URL`, else `redis://127.0.0.1:6379`. */
  readonly connection?: ConnectionOption | undefined
}

export type { BulkJob } from "../engine/Job.ts"

/**
 * A queue's producer and admin handle.
 *
 * ```ts
 * const queue = new Queue<{ to: string }>("emails")
 * const id = await queue.add({ to: "a@example.com" }, { maxAttempts: 5 })
 * await queue.close()
 * ```
 * Throws {@link InvalidQueueName} / {@link InvalidOptions} from the constructor for bad arguments.
 */
export class Queue<T = unknown> {
  /** The queue name. */
  readonly name: string
  /** @internal The ordinary core (its `calls` address `name` itself, not its partitions). */
  readonly core: QueueCore
  /** @internal Every call goes through it: the ordinary core, or the partitioned one. */
  readonly queue: AnyQueue
  readonly #client: RedisClient
  readonly #maxPayloadBytes: number

  constructor(name: string, options: QueueOptions = {}) {
    this.name = validateQueueName(name)
    const settings = resolveQueueOptions(options, ["connection", ...LAYOUT_KEYS])
    const layout = resolveLayout(options)
    this.#maxPayloadBytes = settings.maxPayloadBytes
    this.#client = connect(options.connection)
    this.queue = makeQueue(this.#client, name, settings, layout)
    this.core = this.queue.core
  }

  #run<A, E>(effect: Effect.Effect<A, E>): Promise<A> {
    return Effect.runPromise(effect)
  }

  #encode(field: string, payload: unknown): Checked<string, InvalidPayload> {
    return encodePayload(field, payload, this.#maxPayloadBytes)
  }

  /**
   * Add a job. Resolves to its id (a ULID) — or, when `dedupeKey` matched, the first job's id.
   * Ends within `callTimeoutMs` (default 10 s): {@link RedisUnavailable} when it was not sent
   * (nothing written), {@link OutcomeUnknown} (with the job id) when it was sent and no reply
   * came — then a new add may store the job twice, unless it has a `dedupeKey`.
   */
  add(payload: T, options?: JobOptions): Promise<string> {
    return this.#run(
      Effect.suspend((): Effect.Effect<string, unknown> => {
        const text = this.#encode("payload", payload)
        if (Result.isFailure(text)) return Effect.fail(text.failure)
        return this.queue.add({ payload: text.success, options })
      }),
    )
  }

  /** Add many jobs in one Redis call (at most 10 000); all are validated first, all or nothing. Errors as {@link add}. */
  addBulk(jobs: ReadonlyArray<BulkJob<T>>): Promise<string[]> {
    return this.#run(
      Effect.suspend((): Effect.Effect<Array<string>, unknown> => {
        if (!Array.isArray(jobs)) {
          return Effect.fail(
            new InvalidOptions({ field: "jobs", value: jobs, reason: "must be an array of { payload, options? }" }),
          )
        }
        const encoded: Array<{ readonly payload: string; readonly options: JobOptions | undefined }> = []
        for (const [i, j] of jobs.entries()) {
          if (typeof j !== "object" || j === null || !("payload" in j)) {
            return Effect.fail(
              new InvalidOptions({ field: `jobs[${i}]`, value: j, reason: "must be { payload, options? }" }),
            )
          }
          const text = this.#encode(`jobs[${i}].payload`, j.payload)
          if (Result.isFailure(text)) return Effect.fail(text.failure)
          encoded.push({ payload: text.success, options: j.options })
        }
        return this.queue.addBulk(encoded)
      }),
    )
  }

  /** Counts (waiting, active, expired-but-unswept, delayed, dead, …) and counters; for a partitioned queue, summed, with each partition's in `partitions`. */
  stats(): Promise<QueueStats & { readonly partitions?: PartitionedStats["partitions"] }> {
    return this.#run(this.queue.stats)
  }

  /**
   * The queue's live workers, each as its last heartbeat recorded it: `{ id, host, pid,
   * concurrency, running, state, startedAt, lastSeenAt }`. A worker that stops
   * heartbeating drops out after its lease length; a partitioned queue's worker is listed
   * once per partition. O(W) for W registered workers, one Redis call per partition.
   */
  workers(): Promise<ReadonlyArray<WorkerInfo>> {
    return this.#run(this.queue.workers)
  }

  /** One bounded sweep pass: reclaim expired leases, promote due delayed jobs. */
  sweep(options: SweepPassOptions = {}): Promise<SweepTotals> {
    return this.#run(Effect.suspend(() => this.queue.sweep(options)))
  }

  /** A page of dead jobs, oldest death first. Defaults: offset 0, count 100. */
  deadJobs(
    options: { readonly offset?: number; readonly count?: number } = {},
  ): Promise<{ total: number; jobs: DeadJob[] }> {
    return this.#run(
      Effect.fromResult(checkPage(options)).pipe(
        Effect.flatMap(({ offset, count }) => this.queue.deadList(offset, count)),
      ),
    )
  }

  /** Give dead jobs (by id) a fresh set of attempts. Resolves to how many were retried. */
  retryDead(ids: ReadonlyArray<string>): Promise<number> {
    return this.#run(this.queue.deadRetry(ids))
  }

  /** Delete dead jobs (by id) for good. Resolves to how many were purged. */
  purgeDead(ids: ReadonlyArray<string>): Promise<number> {
    return this.#run(this.queue.deadPurge(ids))
  }

  /**
   * Check the queue's invariants, page by page: O(jobs) in total, in short read-only
   * calls of `pageSize` entries each (default 100, 1 .. 10 000). Lists at most
   * `maxLines` violations (default 100; the count is always complete). Exact on a
   * queue nobody changes meanwhile; approximate under concurrent change (a job that
   * moves between pages may be missed or reported once).
   */
  verify(
    options: { readonly maxLines?: number; readonly pageSize?: number } = {},
  ): Promise<{ violations: number; jobs: number; lines: string[] }> {
    return this.#run(
      Effect.suspend((): Effect.Effect<{ violations: number; jobs: number; lines: string[] }, unknown> => {
        const maxLines = checkIntegerOr("maxLines", options.maxLines, DEFAULT_VERIFY_LINES, { min: 1, max: 100_000 })
        if (Result.isFailure(maxLines)) return Effect.fail(maxLines.failure)
        const pageSize = checkIntegerOr("pageSize", options.pageSize, DEFAULT_VERIFY_PAGE, VERIFY_PAGE_LIMITS)
        if (Result.isFailure(pageSize)) return Effect.fail(pageSize.failure)
        return this.queue.verify(maxLines.success, pageSize.success)
      }),
    )
  }

  /** Close the connection (if leaseq opened it). Later calls reject with {@link QueueClosed}. */
  async close(): Promise<void> {
    if (this.queue.isClosed()) return
    this.queue.markClosed()
    await this.#client.close()
  }

  /** @internal */
  closedError(): QueueClosed {
    return new QueueClosed({ queue: this.name })
  }
}
