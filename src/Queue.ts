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
  /**
   * Most payload bytes one add script call carries: a larger addBulk is split into
   * several calls, and the batcher of single adds caps a batch by it. Not a user option;
   * default {@link MAX_CALL_BYTES}.
   */
  readonly maxCallBytes?: number
}

/**
 * Most payload bytes (UTF-8) in one add script call: 64 MiB. One huge call would hold
 * Redis for its whole length, and past the server's query-buffer limit the connection is
 * closed. A job larger than this (see `maxPayloadBytes`) goes in a call of its own.
 */
export const MAX_CALL_BYTES = 64 * 1024 * 1024

/** What a job weighs in a call: its payload's UTF-8 bytes, plus a little for its other fields. */
const callBytes = (job: NewJob): number => Buffer.byteLength(job.payload, "utf8") + 64

/** Split `jobs` into consecutive groups of at most `maxBytes` each (a heavier job alone). */
export const splitByBytes = (jobs: ReadonlyArray<NewJob>, maxBytes: number): Array<ReadonlyArray<NewJob>> => {
  const groups: Array<ReadonlyArray<NewJob>> = []
  let group: NewJob[] = []
  let bytes = 0
  for (const job of jobs) {
    const b = callBytes(job)
    if (group.length > 0 && bytes + b > maxBytes) {
      groups.push(group)
      group = []
      bytes = 0
    }
    group.push(job)
    bytes += b
  }
  if (group.length > 0) groups.push(group)
  return groups
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

  const maxCallBytes = settings.maxCallBytes ?? MAX_CALL_BYTES
  /** Single adds made while one is in flight go out together in one script call (at most 1000 jobs, maxCallBytes). */
  const adder = makeBatcher((jobs: ReadonlyArray<NewJob>) => commands.add(jobs), {
    maxItems: 1000,
    maxWeight: maxCallBytes,
    weight: callBytes,
  })

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
    /**
     * Add many jobs (at most {@link Limits.bulk}): one Redis call, all or nothing, while
     * the payloads total at most {@link MAX_CALL_BYTES}. A larger list goes out in several
     * calls, in order, each all or nothing; if one fails, the calls before it are stored
     * (a leading part of the list) and the rest are not.
     */
    addBulk: (jobs: ReadonlyArray<EncodedJob>) =>
      Effect.gen(function* () {
        yield* checkBulkSize(jobs.length)
        if (jobs.length === 0) return []
        const prepared = yield* prepare(jobs, (i) => `jobs[${i}].options`)
        yield* ensureOpen
        const groups = splitByBytes(prepared, maxCallBytes)
        if (groups.length === 1) return yield* commands.add(prepared)
        const ids: string[] = []
        for (const group of groups) ids.push(...(yield* commands.add(group)))
        return ids
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
