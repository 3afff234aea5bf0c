/**
 * The Promise face of a queue: `new Queue(name, options)`.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import type { SweepPassOptions, SweepTotals } from "../engine/admin/Sweeper.ts"
import type { QueueStats } from "../engine/calls/Commands.ts"
import { checkVerifyOptions, type VerifyOptions } from "../engine/calls/Verify.ts"
import type { EventsFrom, JobEvent } from "../engine/events/Events.ts"
import {
  type FinishedJob,
  makeQueueEvents,
  type QueueEvents,
  type WaitForFailure,
} from "../engine/events/QueueEvents.ts"
import {
  InvalidOptions,
  type InvalidPayload,
  type OutcomeUnknown,
  QueueClosed,
  type RedisUnavailable,
} from "../engine/model/Errors.ts"
import { validateQueueName } from "../engine/model/QueueName.ts"
import type { WorkerInfo } from "../engine/model/Registry.ts"
import { type Checked, checkPage, encodePayload } from "../engine/model/Validate.ts"
import type { PartitionedStats } from "../engine/partition/Producer.ts"
import { type AnyQueue, LAYOUT_KEYS, type LayoutInput, makeQueue, resolveLayout } from "../engine/partition/Queue.ts"
import { checkAddArity } from "../engine/queue/Adding.ts"
import type { BulkJob, JobOptions } from "../engine/queue/Job.ts"
import { deadByIds } from "../engine/queue/JobControl.ts"
import type { ListedDeadJob } from "../engine/queue/QueueApi.ts"
import { type QueueSettingsInput, resolveQueueOptions } from "../engine/queue/QueueCore.ts"
import { type ConnectionOption, connect, type RedisClient } from "../redis/Client.ts"
import { QueueControl } from "./Control.ts"
import { type DependencyOptions, QueueDependencies } from "./Dependencies.ts"
import { Grouping } from "./Grouping.ts"
import { ManualQueue } from "./Manual.ts"
import { QueueOperations } from "./QueueOps.ts"
import { Scheduling } from "./Schedules.ts"

/** Options of {@link Queue}. */
export interface QueueOptions extends QueueSettingsInput, LayoutInput {
  /** A redis:// or rediss:// URL, ioredis options, an ioredis Redis or Cluster (borrowed, never closed), or `{ cluster: nodes }`. Default: `REDIS_URL`, else `redis://127.0.0.1:6379`. */
  readonly connection?: ConnectionOption | undefined
}

export type { BulkJob } from "../engine/queue/Job.ts"

/**
 * The call groups {@link Queue} is composed of (one each of the engine's capabilities, see
 * src/engine/queue/Capabilities.ts): their methods are installed on its prototype below.
 */
const CALL_GROUPS = [QueueControl, QueueOperations, Grouping, Scheduling, ManualQueue, QueueDependencies] as const

/**
 * A queue's producer and admin handle: `T` is the payload type, `R` what its handlers return.
 *
 * ```ts
 * const queue = new Queue<{ to: string }>("emails")
 * const id = await queue.add({ to: "a@example.com" }, { maxAttempts: 5 })
 * await queue.close()
 * ```
 * Throws {@link InvalidQueueName} / {@link InvalidOptions} from the constructor for bad arguments.
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface above types the call groups installed on the prototype
export class Queue<T = unknown, R = unknown> {
  /** The queue name. */
  readonly name: string
  /** The key prefix (default "leaseq"). */
  readonly prefix: string
  /** @internal Every call goes through it: the {@link QueueApi} of the ordinary core, or of the partitioned one. */
  readonly queue: AnyQueue
  readonly #client: RedisClient
  readonly #maxPayloadBytes: number
  readonly #events: QueueEvents
  /** Resolved by close: ends every events() iteration of this queue. */
  readonly #closing: { promise: Promise<void>; resolve: () => void }

  constructor(name: string, options: QueueOptions = {}) {
    this.name = validateQueueName(name)
    const settings = resolveQueueOptions(options, ["connection", ...LAYOUT_KEYS])
    this.prefix = settings.prefix
    const layout = resolveLayout(options)
    this.#maxPayloadBytes = settings.maxPayloadBytes
    this.#client = connect(options.connection)
    this.queue = makeQueue(this.#client, name, settings, layout)
    this.#events = makeQueueEvents(this.#client, name, this.queue.keysByPartition)
    let resolve!: () => void
    const promise = new Promise<void>((r) => {
      resolve = r
    })
    this.#closing = { promise, resolve }
  }

  #run<A, E>(effect: Effect.Effect<A, E>): Promise<A> {
    return Effect.runPromise(effect)
  }

  /** @internal The payload as JSON text, checked against the queue's `maxPayloadBytes`. */
  encodeText(field: string, payload: unknown): Checked<string, InvalidPayload> {
    return encodePayload(field, payload, this.#maxPayloadBytes)
  }

  /**
   * Add a job. Resolves to its id (a ULID, or `options.id`) — or, when `dedupeKey` or `id` matched a job, that job's id.
   * Ends within `callTimeoutMs` (default 10 s): {@link RedisUnavailable} when it was not sent
   * (nothing written), {@link OutcomeUnknown} (with the job id) when it was sent and no reply
   * came — then a new add may store the job twice, unless it has a `dedupeKey`.
   */
  add(payload: T, options?: JobOptions & DependencyOptions): Promise<string> {
    return this.#run(
      Effect.suspend((): Effect.Effect<string, unknown> => {
        // biome-ignore lint/complexity/noArguments: a third argument is BullMQ's add(name, data, opts), refused with a hint
        const text = Result.flatMap(checkAddArity([...arguments]), () => this.encodeText("payload", payload))
        if (Result.isFailure(text)) return Effect.fail(text.failure)
        return this.addDependent(text.success, options) ?? this.queue.add({ payload: text.success, options })
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
          const text = this.encodeText(`jobs[${i}].payload`, j.payload)
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

  /** A page of dead jobs, oldest death first (partitioned: over every partition, each job naming its own in `queue`). Defaults: offset 0, count 100. */
  deadJobs(
    options: { readonly offset?: number; readonly count?: number } = {},
  ): Promise<{ total: number; jobs: ListedDeadJob[] }> {
    return this.#run(
      Effect.fromResult(checkPage(options)).pipe(
        Effect.flatMap(({ offset, count }) => this.queue.deadList(offset, count)),
      ),
    )
  }

  /** Give dead jobs (by id) a fresh set of attempts. Resolves to how many were retried (unknown ids are skipped). */
  retryDead(ids: ReadonlyArray<string>): Promise<number> {
    return this.#run(deadByIds(this.queue.deadRetry, ids))
  }

  /** Delete dead jobs (by id) for good. Resolves to how many were purged (unknown ids are skipped). */
  purgeDead(ids: ReadonlyArray<string>): Promise<number> {
    return this.#run(deadByIds(this.queue.deadPurge, ids))
  }

  /**
   * Check the queue's invariants, page by page: O(jobs) in total, in short read-only calls of `pageSize`
   * entries each (default 100, 1 .. 10 000). Lists at most `maxLines` violations (default 100; the count
   * is always complete). Exact on a queue nobody changes meanwhile; approximate under concurrent change.
   */
  verify(options: VerifyOptions = {}): Promise<{ violations: number; jobs: number; lines: string[] }> {
    return this.#run(
      Effect.fromResult(checkVerifyOptions(options)).pipe(
        Effect.flatMap(({ maxLines, pageSize }) => this.queue.verify(maxLines, pageSize)),
      ),
    )
  }

  /**
   * The queue's events, from any process: an async iterable of typed {@link JobEvent}s
   * (`added`, `active`, `completed`, `failed`, `lease-lost`, `released`, `dead`, …), read
   * from the queue's events stream on a connection of its own (closed when the loop
   * ends, by `break` or by {@link close}). `from`: "now" (default: events recorded after
   * this call — an add made after it on this queue is included), "start" (every retained
   * event) or an event's `eventId` (the events after it). It never ends by itself; after a lost connection it reads again
   * from the last event it passed on, so no retained event is missed or repeated.
   * For a partitioned queue the partitions' events are merged (each in its own order).
   * Throws {@link InvalidOptions} for a bad `from`.
   */
  events(options: { readonly from?: EventsFrom | undefined } = {}): AsyncIterable<JobEvent> {
    if (this.queue.isClosed()) throw this.closedError()
    const stream = this.#events.events(options.from)
    return Stream.toAsyncIterable(stream.pipe(Stream.interruptWhen(Effect.promise(() => this.#closing.promise))))
  }

  /**
   * Resolves once job `id` has ended (completed, dead or cancelled) with what the queue knows
   * of it (its result typed `R` while the completed job is retained). Rejects with `WaitForTimeout` when it is still pending after `timeoutMs`
   * (default 60 000), `JobGone` when the queue no longer has it and no retained event
   * tells its end, {@link InvalidOptions} for a bad id or timeout. See docs/jobs.md.
   */
  waitFor(id: string, options: { readonly timeoutMs?: number | undefined } = {}): Promise<FinishedJob<R>> {
    return this.#run(
      Effect.suspend(
        (): Effect.Effect<FinishedJob<R>, WaitForFailure | QueueClosed> =>
          this.queue.isClosed() ? Effect.fail(this.closedError()) : this.#events.waitFor(id, options),
      ).pipe(
        // close ends the wait (and closes its connection) rather than leave it to its timeout
        Effect.raceFirst(
          Effect.promise(() => this.#closing.promise).pipe(Effect.andThen(Effect.fail(this.closedError()))),
        ),
      ),
    ) as Promise<FinishedJob<R>>
  }

  /**
   * Keep about `maxLen` entries in the queue's events stream (every partition's; an entry is one job's event or one call's events for many jobs); 0 records
   * none. Stored in the queue (so every process writing to it follows it). Default, until
   * set: 10 000. Rejects with {@link InvalidOptions} for anything but a whole number 0 … 10 000 000.
   */
  setEventRetention(maxLen: number): Promise<void> {
    return this.#run(this.#events.setEventRetention(maxLen))
  }

  /** The queue's event retention (see {@link setEventRetention}). */
  eventRetention(): Promise<number> {
    return this.#run(this.#events.eventRetention)
  }

  /** Close the connection (if leaseq opened it). Later calls reject with {@link QueueClosed}. */
  async close(): Promise<void> {
    if (this.queue.isClosed()) return
    this.#closing.resolve()
    this.queue.markClosed()
    await this.#client.close()
  }

  /** @internal */
  closedError(): QueueClosed {
    return new QueueClosed({ queue: this.name })
  }
}

/** The methods of every call group: the calls of {@link CALL_GROUPS}, typed on the class below. */
export interface Queue<T = unknown, R = unknown>
  extends QueueControl<T, R>,
    QueueOperations<T>,
    Grouping,
    Scheduling<T>,
    ManualQueue<T>,
    QueueDependencies<T> {}

// composition, not a chain of base classes: each call group's methods on Queue's prototype
for (const group of CALL_GROUPS) {
  for (const [key, method] of Object.entries(Object.getOwnPropertyDescriptors(group.prototype))) {
    if (key !== "constructor") Object.defineProperty(Queue.prototype, key, method)
  }
}
