/**
 * The producer and admin side of one queue, in Effect: validated adds (one or
 * bulk, one Redis call), stats, sweeps and dead-letter handling. Payloads arrive
 * here already encoded to JSON text by a face (plain JSON or an Effect Schema).
 */
import * as Effect from "effect/Effect"
import { makeBatcher } from "./Batcher.ts"
import { type Commands, makeCommands, type NewJob, type QueueStats, type ScriptFailure } from "./Commands.ts"
import { InvalidOptions, QueueClosed } from "./Errors.ts"
import { warnIfEvicting } from "./EvictionPolicy.ts"
import { type JobOptions, newJob, resolveJobOptions } from "./Job.ts"
import { DEFAULT_PREFIX, queueKeys, validatePrefix } from "./Keys.ts"
import type { RedisClient } from "./redis/Client.ts"
import { DEFAULT_SWEEP_LIMIT, type SweepPassOptions, sweepPass } from "./Sweeper.ts"
import { integer, integerOr, knownKeys, Limits, optionsObject } from "./Validate.ts"

/** Options shared by both faces' queues. */
export interface QueueSettingsInput {
  /** Key prefix. Default "leaseq". */
  readonly prefix?: string
  /** Options applied to every `add` unless the call gives its own. */
  readonly defaultJobOptions?: JobOptions
  /** Largest payload, in bytes of JSON text. Default 1 048 576 (1 MiB); at most 512 MiB. */
  readonly maxPayloadBytes?: number
}

/** Validated queue settings. */
export interface QueueSettings {
  readonly prefix: string
  readonly defaultJobOptions: JobOptions
  readonly maxPayloadBytes: number
}

/** Validate queue options (`extraKeys` are the face's own, such as `connection`). */
export const resolveQueueOptions = (value: unknown, extraKeys: ReadonlyArray<string> = []): QueueSettings => {
  const o = optionsObject("options", value)
  knownKeys("options", o, ["prefix", "defaultJobOptions", "maxPayloadBytes", ...extraKeys])
  const prefix = o.prefix === undefined ? DEFAULT_PREFIX : validatePrefix(o.prefix)
  const defaults = resolveJobOptions("defaultJobOptions", o.defaultJobOptions)
  const defaultJobOptions: JobOptions = {
    delayMs: defaults.delayMs,
    maxAttempts: defaults.maxAttempts,
    dedupeTtlMs: defaults.dedupeTtlMs,
    ...(defaults.dedupeKey ? { dedupeKey: defaults.dedupeKey } : {}),
  }
  const maxPayloadBytes = integerOr("maxPayloadBytes", o.maxPayloadBytes, Limits.payloadBytes.default, {
    min: 1,
    max: Limits.payloadBytes.max,
  })
  return { prefix, defaultJobOptions, maxPayloadBytes }
}

/** Refuse an addBulk of more than {@link Limits.bulk} jobs (one Redis call), naming the count. */
export const checkBulkSize = (count: number): Effect.Effect<void, InvalidOptions> =>
  count > Limits.bulk
    ? Effect.fail(
        new InvalidOptions({
          field: "jobs.length",
          value: count,
          reason: `one addBulk call takes at most ${Limits.bulk} jobs (one Redis call); split the list`,
        }),
      )
    : Effect.void

/** One job to add: its encoded payload and options. */
export interface EncodedJob {
  readonly payload: string
  readonly options?: JobOptions | undefined
}

/** Make the queue core for `name` on `client`. */
export const makeQueueCore = (client: RedisClient, name: string, settings: QueueSettings) => {
  const keys = queueKeys(name, settings.prefix)
  const commands: Commands = makeCommands(client, keys)
  let opened = false
  let closed = false
  const ensureOpen = Effect.suspend((): Effect.Effect<void, QueueClosed | ScriptFailure> => {
    if (closed) return Effect.fail(new QueueClosed({ queue: name }))
    if (opened) return Effect.void
    return commands.open.pipe(
      Effect.tap(() =>
        Effect.sync(() => {
          opened = true
        }),
      ),
      // once per client: warn when the server may evict keys (maxmemory-policy)
      Effect.tap(() => warnIfEvicting(client)),
    )
  })

  /** Single adds made while one is in flight go out together in one script call. */
  const adder = makeBatcher((jobs: ReadonlyArray<NewJob>) => commands.add(jobs), 1000)

  /** Validate every job first: a bad one rejects the whole call before anything is sent. */
  const prepare = (jobs: ReadonlyArray<EncodedJob>, field: (i: number) => string) =>
    Effect.try({
      try: () =>
        jobs.map((j, i) => newJob(j.payload, resolveJobOptions(field(i), j.options, settings.defaultJobOptions))),
      catch: (e) => e as InvalidOptions,
    })

  return {
    name,
    keys,
    commands,
    ensureOpen,
    /** Add one job; resolves to its id (or, when deduplicated, the first job's id). */
    add: (job: EncodedJob) =>
      Effect.gen(function* () {
        const [prepared] = yield* prepare([job], () => "options")
        yield* ensureOpen
        return yield* adder.submit(prepared!)
      }),
    /** Add many jobs in one Redis call (at most {@link Limits.bulk}); all or nothing. */
    addBulk: (jobs: ReadonlyArray<EncodedJob>) =>
      Effect.gen(function* () {
        yield* checkBulkSize(jobs.length)
        if (jobs.length === 0) return []
        const prepared = yield* prepare(jobs, (i) => `jobs[${i}].options`)
        yield* ensureOpen
        return yield* commands.add(prepared)
      }),
    stats: Effect.suspend(
      (): Effect.Effect<QueueStats, QueueClosed | ScriptFailure> =>
        closed ? Effect.fail(new QueueClosed({ queue: name })) : commands.stats,
    ),
    /** One bounded sweep pass (see Sweeper). */
    sweep: (options: SweepPassOptions = {}) =>
      Effect.gen(function* () {
        const limit = yield* Effect.try({
          try: () => {
            if (options.maxMs !== undefined) integer("maxMs", options.maxMs, { min: 0, max: 3_600_000 })
            return integerOr("limit", options.limit, DEFAULT_SWEEP_LIMIT, Limits.sweepLimit)
          },
          catch: (e) => e as InvalidOptions,
        })
        yield* ensureOpen
        return yield* sweepPass(commands, { ...options, limit })
      }),
    markClosed: () => {
      closed = true
    },
    isClosed: () => closed,
  }
}

/** The queue core. */
export type QueueCore = ReturnType<typeof makeQueueCore>
