/**
 * A queue as an Effect service. Declare one service key per queue (its payload type
 * is part of the key's shape), then provide it with {@link layer} or {@link layerConfig}:
 *
 * ```ts
 * class Emails extends Context.Service<Emails, LeaseQueue.Service<Email>>()("app/Emails") {}
 * const EmailsLive = LeaseQueue.layer(Emails, { name: "emails", schema: Email })
 * const program = Effect.gen(function* () {
 *   const emails = yield* Emails
 *   yield* emails.add({ to: "a@example.com" })
 * })
 * ```
 *
 * A program uses several queues by declaring several keys. The layer owns one Redis
 * connection and closes it on teardown (one more with `durability`, for the adds' `WAIT`);
 * workers of the queue share it (and open one more connection each for their blocking
 * wait, one per partition of a partitioned queue).
 * @module
 */
import { Config, type Context, Effect, Layer, Redacted, Schema, type Scope, Stream } from "effect"
import type { DeadJob, ScriptFailure } from "../engine/Commands.ts"
import {
  InvalidOptions,
  type InvalidPayload,
  type InvalidQueueName,
  type NotReplicated,
  QueueClosed,
  type RedisError,
} from "../engine/Errors.ts"
import type { EventsFrom, JobEvent } from "../engine/Events.ts"
import type { BulkJob, JobOptions } from "../engine/Job.ts"
import type { CancelledFrom, JobInfo } from "../engine/JobCommands.ts"
import type { ControlError } from "../engine/JobControl.ts"
import { checkQueueName, DEFAULT_PREFIX } from "../engine/Keys.ts"
import {
  type AnyQueue,
  type AnyQueueStats,
  checkLayout,
  type DurabilitySettings,
  LAYOUT_KEYS,
  type LayoutInput,
  makeQueue,
} from "../engine/partition/Queue.ts"
import { checkQueueOptions, type QueueSettingsInput } from "../engine/QueueCore.ts"
import { type FinishedJob, makeQueueEvents, type WaitForTimeout } from "../engine/QueueEvents.ts"
import type { WorkerInfo } from "../engine/Registry.ts"
import { redisError } from "../engine/Replies.ts"
import type { SweepPassOptions, SweepTotals } from "../engine/Sweeper.ts"
import { checkObject, checkPage, Limits } from "../engine/Validate.ts"
import { type ConnectionOption, connect, DEFAULT_REDIS_URL, type RedisClient } from "../redis/Client.ts"
import {
  makePayloadCodec,
  type PayloadCodec,
  type PayloadSchema,
  parseOptions,
  type ValidationError,
} from "./Payload.ts"

/** Options of {@link make} and {@link layer}. */
export interface Options<A> extends QueueSettingsInput, LayoutInput {
  /** The queue name: 1–100 characters of `[A-Za-z0-9._-]`. Required. */
  readonly name: string
  /**
   * An Effect `Schema` for the payload: `add` encodes with it (then stores JSON), workers
   * decode with it; a stored payload that does not decode goes to dead with reason
   * `invalid-payload`. Default: none — payloads are stored as plain JSON.
   */
  readonly schema?: PayloadSchema<A> | undefined
  /** A redis:// or rediss:// URL, ioredis options, an ioredis Redis or Cluster (borrowed, never closed), or `{ cluster: nodes }`. Default: `REDIS_URL`, else `redis://127.0.0.1:6379`. */
  readonly connection?: ConnectionOption | undefined
}

/** Options of {@link layerConfig}: as {@link Options}, with the connection and prefix read from `Config`. */
export type ConfigOptions<A> = Omit<Options<A>, "connection" | "prefix">

export type { BulkJob } from "../engine/Job.ts"

/**
 * Everything `add` and `addBulk` can fail with. Nothing is written when they fail, except
 * with `OutcomeUnknown`: the call was sent and no reply came within `callTimeoutMs`
 * (default 10 s), so the jobs (`jobIds`) may or may not be stored; and with
 * `NotReplicated` (only with `durability`): the jobs were written, not yet replicated.
 */
export type AddError = InvalidOptions | InvalidPayload | QueueClosed | ScriptFailure | NotReplicated

const invalid = (field: string, value: unknown, reason: string) => new InvalidOptions({ field, value, reason })

const jobIds = (ids: unknown): Effect.Effect<ReadonlyArray<string>, InvalidOptions> =>
  Array.isArray(ids) && ids.length <= Limits.bulk && ids.every((id) => typeof id === "string" && id.length > 0)
    ? Effect.succeed(ids)
    : Effect.fail(invalid("ids", ids, `must be an array of at most ${Limits.bulk} job ids (non-empty strings)`))

/** @internal What a worker needs from the queue it runs on. */
export interface Internals<A> {
  /** The queue, ordinary or partitioned, with its validated `partitions` and `durability`. */
  readonly queue: AnyQueue
  readonly client: RedisClient
  /** Told of each failed connection attempt of `client` (and of its duplicates), as a Redis error naming the server. */
  readonly connectionErrors: Set<(error: RedisError) => void>
  readonly codec: PayloadCodec<A>
  /** Workers running on this queue: closed before the queue's connection is. */
  readonly workers: Set<{ readonly close: Effect.Effect<void> }>
}

/** @internal The key of {@link Internals} on a service built by this module. */
export const InternalsKey: unique symbol = Symbol.for("leaseq/effect/QueueInternals")

/** The queue service: what `yield* MyQueue` gives. Every method validates first and writes nothing on bad input. */
export interface Service<A> {
  /** The queue name. */
  readonly name: string
  /** The key prefix (default "leaseq"). */
  readonly prefix: string
  /** Add a job; succeeds with its id (a ULID) — or, when `options.dedupeKey` matched, the first job's id. */
  readonly add: (payload: A, options?: JobOptions) => Effect.Effect<string, AddError>
  /** Add up to 10 000 jobs in one Redis call, all validated and encoded first: all or nothing. */
  readonly addBulk: (jobs: ReadonlyArray<BulkJob<A>>) => Effect.Effect<ReadonlyArray<string>, AddError>
  /** Counts (waiting, active, expired-but-unswept, delayed, dead, …) and counters; for a partitioned queue, summed, with each partition's in `partitions`. */
  readonly stats: Effect.Effect<AnyQueueStats, QueueClosed | ScriptFailure>
  /**
   * The queue's live workers, each as its last heartbeat recorded it (see `Queue.workers`
   * of the Promise face). O(W) for W registered workers.
   */
  readonly workers: Effect.Effect<ReadonlyArray<WorkerInfo>, QueueClosed | ScriptFailure>
  /** One bounded sweep pass: reclaim expired leases, promote due delayed jobs. Default limit 500 per call. */
  readonly sweep: (
    options?: SweepPassOptions,
  ) => Effect.Effect<SweepTotals, InvalidOptions | QueueClosed | ScriptFailure>
  /** A page of dead jobs, oldest death first. Defaults: offset 0, count 100 (at most 10 000). */
  readonly deadJobs: (options?: {
    readonly offset?: number
    readonly count?: number
  }) => Effect.Effect<
    { readonly total: number; readonly jobs: ReadonlyArray<DeadJob> },
    InvalidOptions | QueueClosed | RedisError
  >
  /** Give dead jobs (by id) a fresh set of attempts; succeeds with how many were retried (unknown ids are skipped). */
  readonly retryDead: (
    ids: ReadonlyArray<string>,
  ) => Effect.Effect<number, InvalidOptions | QueueClosed | ScriptFailure>
  /** Delete dead jobs (by id) for good; succeeds with how many were purged (unknown ids are skipped). */
  readonly purgeDead: (
    ids: ReadonlyArray<string>,
  ) => Effect.Effect<number, InvalidOptions | QueueClosed | ScriptFailure>
  /**
   * What the queue knows about job `id` (state, payload decoded as `add` encoded it, attempts,
   * lease, result, last error, dedupe key), or undefined when unknown or finished and not
   * retained. O(1) hash reads and at most five O(log N) lookups. A stored payload that does
   * not decode fails with {@link InvalidPayload}.
   */
  readonly getJob: (id: string) => Effect.Effect<JobInfo<A> | undefined, ControlError | InvalidPayload>
  /**
   * Cancel job `id` for good: the state it was in, or undefined when unknown or already
   * finished. An active job's lease is revoked at once (its complete is refused, it is not
   * retried). O(log N); O(N) in the jobs waiting for a waiting job.
   */
  readonly cancel: (id: string) => Effect.Effect<CancelledFrom | undefined, ControlError>
  /** Stop handing out jobs until {@link Service.resume}; false when paused already. O(1). */
  readonly pause: Effect.Effect<boolean, ControlError>
  /** Hand out jobs again, waking idle workers; false when it was not paused. O(1). */
  readonly resume: Effect.Effect<boolean, ControlError>
  /** True while the queue is paused. O(1). */
  readonly isPaused: Effect.Effect<boolean, ControlError>
  /** Free a dedupe key now (TTL or until finished); true when it was held. O(log N). */
  readonly clearDedupe: (key: string) => Effect.Effect<boolean, ControlError>
  /**
   * The queue's events from `from` ("now" by default, "start", or an event's `eventId`):
   * a Stream that never ends by itself, on a connection of its own (closed when the
   * Stream ends); after a lost connection it reads on from the last event it passed on.
   * Fails with {@link InvalidOptions} for a bad `from`.
   */
  readonly events: (options?: {
    readonly from?: EventsFrom | undefined
  }) => Stream.Stream<JobEvent, InvalidOptions | RedisError | QueueClosed>
  /**
   * Succeeds once job `id` has ended (completed, dead or cancelled), with what the queue
   * knows of it; fails with {@link WaitForTimeout} after `timeoutMs` (default 60 000).
   */
  readonly waitFor: (
    id: string,
    options?: { readonly timeoutMs?: number | undefined },
  ) => Effect.Effect<FinishedJob, InvalidOptions | WaitForTimeout | ScriptFailure | QueueClosed>
  /** Keep about `maxLen` stream entries (0: no events; whole number 0 … 10 000 000; default until set 10 000). O(1). */
  readonly setEventRetention: (maxLen: number) => Effect.Effect<void, InvalidOptions | RedisError | QueueClosed>
  /** The queue's event retention. */
  readonly eventRetention: Effect.Effect<number, RedisError | QueueClosed>
  /** @internal Present on services built by {@link make}; a worker needs it. Absent on test doubles. */
  readonly [InternalsKey]?: Internals<A>
}

/**
 * Open the queue's connection in the scope, reporting each failed connection attempt to
 * the listeners in `connectionErrors` (the queue's workers). With `durability`, one more
 * connection for the adds and their `WAIT`: workers send their heartbeats on the first,
 * and must never queue behind a `WAIT`.
 */
const openConnections = (connection: ConnectionOption | undefined, durability: DurabilitySettings | undefined) =>
  Effect.gen(function* () {
    const connectionErrors = new Set<(error: RedisError) => void>()
    let server: string | undefined
    const onError = (e: Error) => {
      for (const listener of connectionErrors) listener(redisError("connect", e, server))
    }
    const client: RedisClient = yield* Effect.acquireRelease(
      parseOptions(() => connect(connection, { onError })),
      (c) => Effect.promise(() => c.close()),
    )
    server = client.describe
    const addsVia = durability
      ? yield* Effect.acquireRelease(
          Effect.sync(() => client.duplicate()),
          (c) => Effect.promise(() => c.close()),
        )
      : client
    return { client, addsVia, connectionErrors }
  })

/**
 * Build a queue service in a scope: validates the options (failing with
 * {@link InvalidQueueName} / {@link InvalidOptions}, before any connection is made),
 * opens the connection, and closes it when the scope closes. The queue's keys are
 * checked lazily, on its first call (as with the Promise `Queue`).
 */
export const make = <A = unknown>(options: Options<A>): Effect.Effect<Service<A>, ValidationError, Scope.Scope> =>
  Effect.gen(function* () {
    const given: Partial<Options<A>> = yield* Effect.fromResult(checkObject("options", options))
    const { name, schema, ...rest } = given
    const queue = yield* Effect.fromResult(checkQueueName(name))
    const settings = yield* Effect.fromResult(checkQueueOptions(rest, ["connection", ...LAYOUT_KEYS]))
    const layout = yield* Effect.fromResult(checkLayout(rest))
    if (schema !== undefined && !Schema.isSchema(schema)) {
      return yield* Effect.fail(invalid("schema", schema, "must be an Effect Schema (or left out for plain JSON)"))
    }
    const { client, addsVia, connectionErrors } = yield* openConnections(rest.connection, layout.durability)
    const core = makeQueue(client, queue, settings, layout, addsVia)
    // on teardown, first close the workers still running on this queue (gracefully), then the queue
    const workers = new Set<{ readonly close: Effect.Effect<void> }>()
    yield* Effect.addFinalizer(() =>
      Effect.forEach([...workers], (w) => w.close, { concurrency: "unbounded", discard: true }).pipe(
        Effect.andThen(Effect.sync(core.markClosed)),
      ),
    )
    const codec = makePayloadCodec(schema, settings.maxPayloadBytes)
    const events = makeQueueEvents(
      client,
      queue,
      (core.partitioned?.parts ?? [core.core]).map((p) => p.keys),
    )
    const unlessClosed = <B, E>(effect: Effect.Effect<B, E>): Effect.Effect<B, E | QueueClosed> =>
      Effect.suspend(
        (): Effect.Effect<B, E | QueueClosed> => (core.isClosed() ? Effect.fail(new QueueClosed({ queue })) : effect),
      )

    const control = core.control
    const service: Service<A> = {
      name: queue,
      prefix: settings.prefix,
      add: (payload, jobOptions) =>
        codec
          .encode("payload", payload)
          .pipe(Effect.flatMap((text) => core.add({ payload: text, options: jobOptions }))),
      addBulk: (jobs) =>
        Effect.gen(function* (): Effect.fn.Return<ReadonlyArray<string>, AddError> {
          if (!Array.isArray(jobs)) {
            return yield* Effect.fail(invalid("jobs", jobs, "must be an array of { payload, options? }"))
          }
          const encoded = yield* Effect.forEach(jobs, (job: BulkJob<A>, i) => {
            if (typeof job !== "object" || job === null || !("payload" in job)) {
              return Effect.fail<AddError>(invalid(`jobs[${i}]`, job, "must be { payload, options? }"))
            }
            return codec
              .encode(`jobs[${i}].payload`, job.payload)
              .pipe(Effect.map((payload) => ({ payload, options: job.options })))
          })
          return yield* core.addBulk(encoded)
        }),
      stats: core.stats,
      workers: core.workers,
      sweep: (sweepOptions = {}) =>
        Effect.fromResult(checkObject("options", sweepOptions)).pipe(Effect.flatMap((o) => core.sweep(o))),
      deadJobs: (page = {}) =>
        Effect.fromResult(checkPage(page)).pipe(
          Effect.flatMap(({ offset, count }) => unlessClosed(core.deadList(offset, count))),
        ),
      retryDead: (ids) => jobIds(ids).pipe(Effect.flatMap((list) => unlessClosed(core.deadRetry(list)))),
      purgeDead: (ids) => jobIds(ids).pipe(Effect.flatMap((list) => unlessClosed(core.deadPurge(list)))),
      events: (o = {}) =>
        Stream.unwrap(
          unlessClosed(Effect.fromResult(checkObject("options", o))).pipe(
            Effect.flatMap((checked) =>
              Effect.try({ try: () => events.events(checked.from), catch: (e) => e as InvalidOptions }),
            ),
          ),
        ),
      waitFor: (id, o = {}) => unlessClosed(events.waitFor(id, o)),
      setEventRetention: (maxLen) => unlessClosed(events.setEventRetention(maxLen)),
      eventRetention: unlessClosed(events.eventRetention),
      getJob: (id) =>
        control
          .getJob(id)
          .pipe(
            Effect.flatMap((info) =>
              info === undefined
                ? Effect.succeed(undefined)
                : codec.decode(info.payload).pipe(Effect.map((payload) => ({ ...info, payload }))),
            ),
          ),
      cancel: control.cancel,
      pause: control.pause,
      resume: control.resume,
      isPaused: control.isPaused,
      clearDedupe: control.clearDedupe,
      [InternalsKey]: { queue: core, client, connectionErrors, codec, workers },
    }
    return service
  })

/**
 * A layer providing the queue service `tag`, built by {@link make}. Scoped: its Redis
 * connection is closed when the layer is torn down.
 */
export const layer = <I, A>(tag: Context.Key<I, Service<A>>, options: Options<A>): Layer.Layer<I, ValidationError> =>
  Layer.effect(tag, make(options))

/** Default of `REDIS_URL` for {@link layerConfig}. */
export { DEFAULT_REDIS_URL }

/**
 * As {@link layer}, with the connection and prefix read from `Config`:
 * `REDIS_URL` (redacted; default `redis://127.0.0.1:6379`) and `LEASEQ_PREFIX`
 * (default "leaseq"). A missing or malformed value fails the layer with a `ConfigError`.
 */
export const layerConfig = <I, A>(
  tag: Context.Key<I, Service<A>>,
  options: ConfigOptions<A>,
): Layer.Layer<I, ValidationError | Config.ConfigError> =>
  Layer.effect(
    tag,
    Effect.gen(function* () {
      const url = yield* Config.Redacted("REDIS_URL").pipe(Config.withDefault(Redacted.make(DEFAULT_REDIS_URL)))
      const prefix = yield* Config.String("LEASEQ_PREFIX").pipe(Config.withDefault(DEFAULT_PREFIX))
      return yield* make({ ...options, connection: Redacted.value(url), prefix })
    }),
  )
