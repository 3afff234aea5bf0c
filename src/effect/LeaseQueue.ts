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
import { redisError } from "../engine/calls/Replies.ts"
import { checkVerifyOptions, type VerifyOptions } from "../engine/calls/Verify.ts"
import { makeQueueEvents } from "../engine/events/QueueEvents.ts"
import { InvalidOptions, type InvalidQueueName, QueueClosed, type RedisError } from "../engine/model/Errors.ts"
import { DEFAULT_PREFIX } from "../engine/model/Keys.ts"
import { checkQueueName } from "../engine/model/QueueName.ts"
import { checkObject, checkPage } from "../engine/model/Validate.ts"
import {
  checkLayout,
  type DurabilitySettings,
  LAYOUT_KEYS,
  type LayoutInput,
  makeQueue,
} from "../engine/partition/Queue.ts"
import { checkAddArity } from "../engine/queue/Adding.ts"
import { setGroupLimitsOn } from "../engine/queue/Groups.ts"
import type { BulkJob } from "../engine/queue/Job.ts"
import { deadByIds } from "../engine/queue/JobControl.ts"
import type { ManualProcessing, ReservedJob } from "../engine/queue/Manual.ts"
import type { JobControl, QueueApi } from "../engine/queue/QueueApi.ts"
import { checkQueueOptions, type QueueSettingsInput } from "../engine/queue/QueueCore.ts"
import { schedulePageWith, schedulesWith, scheduleWith } from "../engine/queue/Schedules.ts"
import { type ConnectionOption, connect, DEFAULT_REDIS_URL, type RedisClient } from "../redis/Client.ts"
import { dependencyMembers } from "./Dependencies.ts"
import {
  makePayloadCodec,
  type PayloadCodec,
  type PayloadSchema,
  parseOptions,
  type ValidationError,
} from "./Payload.ts"
import { opsMembers } from "./QueueOps.ts"
import { type AddError, InternalsKey, type Service } from "./QueueService.ts"

export { type AddError, type Internals, InternalsKey, type Service } from "./QueueService.ts"

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

export type { BulkJob } from "../engine/queue/Job.ts"

const invalid = (field: string, value: unknown, reason: string) => new InvalidOptions({ field, value, reason })

/** The service's dead-letter members and verify, options checked first (the queue refuses once closed). */
const adminMembers = (core: QueueApi) => {
  return {
    deadJobs: (page: unknown = {}) =>
      Effect.fromResult(checkPage(page)).pipe(Effect.flatMap(({ offset, count }) => core.deadList(offset, count))),
    retryDead: (ids: unknown) => deadByIds(core.deadRetry, ids),
    purgeDead: (ids: unknown) => deadByIds(core.deadPurge, ids),
    verify: (options: VerifyOptions = {}) =>
      Effect.fromResult(checkVerifyOptions(options)).pipe(
        Effect.flatMap(({ maxLines, pageSize }) => core.verify(maxLines, pageSize)),
      ),
  }
}

/** The service's job-control members: the engine's, each as it is (`getJob` decodes the payload with the queue's codec). */
const controlMembers = <A>(control: JobControl, codec: PayloadCodec<A>) => ({
  ...control,
  getJob: (id: string) =>
    control
      .getJob(id)
      .pipe(
        Effect.flatMap((info) =>
          info === undefined
            ? Effect.succeed(undefined)
            : codec.decode(info.payload).pipe(Effect.map((payload) => ({ ...info, payload }))),
        ),
      ),
})

/** The service's manual-processing members: payloads decoded with the queue's codec (a job that does not decode goes to dead). */
const manualMembers = <A>(manual: ManualProcessing, codec: PayloadCodec<A>) => ({
  reserve: (o?: Parameters<ManualProcessing["reserve"]>[0]) =>
    manual.reserve(o).pipe(
      Effect.flatMap((jobs) =>
        Effect.forEach(jobs, (job) =>
          codec.decode(job.payload).pipe(
            Effect.map((payload): ReservedJob<A> | undefined => ({ ...job, payload })),
            Effect.catch((e) => Effect.as(manual.refuse(job, e.message), undefined)),
          ),
        ),
      ),
      Effect.map((jobs) => jobs.filter((j) => j !== undefined)),
    ),
  complete: (id: string, token: number, result?: unknown) =>
    manual.complete(id, token, result === undefined ? undefined : JSON.stringify(result)),
  fail: manual.fail,
  extend: manual.extend,
  release: manual.release,
})

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
export const make = <A = unknown, Out = unknown>(
  options: Options<A>,
): Effect.Effect<Service<A, Out>, ValidationError, Scope.Scope> =>
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
    const events = makeQueueEvents(client, queue, core.keysByPartition)
    const unlessClosed = <B, E>(effect: Effect.Effect<B, E>): Effect.Effect<B, E | QueueClosed> =>
      Effect.suspend(
        (): Effect.Effect<B, E | QueueClosed> => (core.isClosed() ? Effect.fail(new QueueClosed({ queue })) : effect),
      )

    const service: Service<A> = {
      name: queue,
      prefix: settings.prefix,
      add: (payload, jobOptions, ...rest: ReadonlyArray<unknown>) =>
        Effect.fromResult(checkAddArity([payload, jobOptions, ...rest])).pipe(
          Effect.andThen(codec.encode("payload", payload)),
          Effect.flatMap((text) => core.add({ payload: text, options: jobOptions })),
        ),
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
      ...adminMembers(core),
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
      ...controlMembers(core.control, codec),
      schedule: (name, when, job) =>
        scheduleWith(core.schedules, name, when, job, (p) => codec.encode("job.payload", p)),
      unschedule: core.schedules.unschedule,
      schedules: schedulesWith(core.schedules, codec.decode),
      schedulePage: (options) => schedulePageWith(core.schedules, codec.decode, options),
      ...opsMembers(core.ops, codec),
      setGroupLimits: (group, limits) => setGroupLimitsOn(core.groupControl, group, limits),
      pauseGroup: core.groupControl.pauseGroup,
      resumeGroup: core.groupControl.resumeGroup,
      groups: core.groupControl.groups,
      ...manualMembers(core.manual, codec),
      ...dependencyMembers(core, codec, settings.maxPayloadBytes),
      [InternalsKey]: { queue: core, client, connectionErrors, codec, workers },
    }
    // `Out` is what the queue's type declares its handlers return (stored JSON, as for the payload)
    return service as Service<A, Out>
  })

/**
 * A layer providing the queue service `tag`, built by {@link make}. Scoped: its Redis
 * connection is closed when the layer is torn down.
 */
export const layer = <I, A, Out>(
  tag: Context.Key<I, Service<A, Out>>,
  options: Options<A>,
): Layer.Layer<I, ValidationError> => Layer.effect(tag, make<A, Out>(options))

/** Default of `REDIS_URL` for {@link layerConfig}. */
export { DEFAULT_REDIS_URL }

/**
 * As {@link layer}, with the connection and prefix read from `Config`:
 * `REDIS_URL` (redacted; default `redis://127.0.0.1:6379`) and `LEASEQ_PREFIX`
 * (default "leaseq"). A missing or malformed value fails the layer with a `ConfigError`.
 */
export const layerConfig = <I, A, Out>(
  tag: Context.Key<I, Service<A, Out>>,
  options: ConfigOptions<A>,
): Layer.Layer<I, ValidationError | Config.ConfigError> =>
  Layer.effect(
    tag,
    Effect.gen(function* () {
      const url = yield* Config.Redacted("REDIS_URL").pipe(Config.withDefault(Redacted.make(DEFAULT_REDIS_URL)))
      const prefix = yield* Config.String("LEASEQ_PREFIX").pipe(Config.withDefault(DEFAULT_PREFIX))
      return yield* make<A, Out>({ ...options, connection: Redacted.value(url), prefix })
    }),
  )
