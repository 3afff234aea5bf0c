/**
 * The producer and admin side of one queue, in Effect: validated adds (one or
 * bulk, one Redis call), stats, sweeps and dead-letter handling. Payloads arrive
 * here already encoded to JSON text by a face (plain JSON or an Effect Schema).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { type RedisClient, withDeadline } from "../redis/Client.ts"
import { makeBatcher } from "./Batcher.ts"
import { addJobs, type Commands, makeCommands, type NewJob, type QueueStats, type ScriptFailure } from "./Commands.ts"
import { InvalidOptions, OutcomeUnknown, QueueClosed, RedisUnavailable } from "./Errors.ts"
import { warnIfEvicting } from "./EvictionPolicy.ts"
import { checkJobOptions, DEDUPE_UNTIL_FINISHED, type JobOptions, newJob, type ResolvedJobOptions } from "./Job.ts"
import { checkPrefix, DEFAULT_PREFIX, type QueueKeys, queueKeys } from "./Keys.ts"
import type { WorkerInfo } from "./Registry.ts"
import { DEFAULT_SWEEP_LIMIT, type SweepPassOptions, sweepPass } from "./Sweeper.ts"
import { carry, type TraceParent, traceSend } from "./telemetry/Telemetry.ts"
import { type Checked, checkIntegerOr, checkKnownKeys, checkObject, Limits, orThrow } from "./Validate.ts"

/** Options shared by both faces' queues. */
export interface QueueSettingsInput {
  /** Key prefix. Default "leaseq". */
  readonly prefix?: string | undefined
  /** Options applied to every `add` unless the call gives its own. */
  readonly defaultJobOptions?: JobOptions | undefined
  /** Largest payload, in bytes of JSON text. Default 1 048 576 (1 MiB); at most 512 MiB. */
  readonly maxPayloadBytes?: number | undefined
  /**
   * Longest wait for one call (`add`, `addBulk`, `stats`, `sweep`, the dead-letter calls), in
   * ms. A call is written only once the connection is ready; if none is ready in time it
   * rejects with {@link RedisUnavailable} (nothing was sent, and nothing will be written
   * later). If it was written and no reply came in time, or the connection broke after it,
   * it rejects with {@link OutcomeUnknown} (for an add: with the job ids). Workers are not
   * bounded by it. Default 10 000 (10 s); 10 ms – 1 h. `sweep` and `verify` bound each
   * Redis call they make, not their sum.
   */
  readonly callTimeoutMs?: number | undefined
}

/** Validated queue settings. */
export interface QueueSettings {
  readonly prefix: string
  readonly defaultJobOptions: JobOptions
  readonly maxPayloadBytes: number
  readonly callTimeoutMs: number
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
  // a UTF-16 code unit is at most 3 bytes of UTF-8: when even that bound fits, one group
  let bound = 0
  for (const job of jobs) bound += job.payload.length * 3 + 64
  if (bound <= maxBytes) return [jobs]
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

/** Queue options validated (`extraKeys` are the face's own, such as `connection`); cold path, so as a generator. */
export const checkQueueOptions = (value: unknown, extraKeys: ReadonlyArray<string> = []): Checked<QueueSettings> =>
  Result.gen(function* () {
    const o = yield* checkObject("options", value)
    yield* checkKnownKeys("options", o, [
      "prefix",
      "defaultJobOptions",
      "maxPayloadBytes",
      "callTimeoutMs",
      ...extraKeys,
    ])
    const prefix = o.prefix === undefined ? DEFAULT_PREFIX : yield* checkPrefix(o.prefix)
    const defaults = yield* checkJobOptions("defaultJobOptions", o.defaultJobOptions)
    const defaultJobOptions: JobOptions = {
      delayMs: defaults.delayMs,
      maxAttempts: defaults.maxAttempts,
      ...(defaults.dedupeTtlMs === DEDUPE_UNTIL_FINISHED
        ? { dedupeUntil: "finished" as const }
        : { dedupeTtlMs: defaults.dedupeTtlMs }),
      ...(defaults.dedupeKey ? { dedupeKey: defaults.dedupeKey } : {}),
      ...(defaults.timeoutMs > 0 ? { timeoutMs: defaults.timeoutMs } : {}),
    }
    const maxPayloadBytes = yield* checkIntegerOr("maxPayloadBytes", o.maxPayloadBytes, Limits.payloadBytes.default, {
      min: 1,
      max: Limits.payloadBytes.max,
    })
    const { default: callTimeoutDefault, ...callTimeoutBounds } = Limits.callTimeoutMs
    const callTimeoutMs = yield* checkIntegerOr("callTimeoutMs", o.callTimeoutMs, callTimeoutDefault, callTimeoutBounds)
    return { prefix, defaultJobOptions, maxPayloadBytes, callTimeoutMs }
  })

/** {@link checkQueueOptions}, throwing its error (the Promise face's constructor). */
export const resolveQueueOptions = (value: unknown, extraKeys: ReadonlyArray<string> = []): QueueSettings =>
  orThrow(checkQueueOptions(value, extraKeys))

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

/** Give an {@link OutcomeUnknown} the operation's name (and the ids of the jobs an add sent). */
const unknownOutcome =
  (operation: string, jobIds?: ReadonlyArray<string>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.mapError(effect, (e) =>
      e instanceof OutcomeUnknown
        ? (new OutcomeUnknown({ operation, reason: e.reason, server: e.server, jobIds, cause: e.cause }) as E)
        : e,
    )

/** A read that got no reply changed nothing: it is a {@link RedisUnavailable}, not an {@link OutcomeUnknown}. */
export const readOnly = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | RedisUnavailable, R> =>
  Effect.mapError(effect, (e) =>
    e instanceof OutcomeUnknown ? new RedisUnavailable({ reason: e.reason, server: e.server, cause: e.cause }) : e,
  )

/**
 * Single adds made while one is in flight go out together in one script call (at most
 * 1000 jobs, `maxCallBytes`), through `bounded` by the earliest deadline among them (so
 * none waits past its own).
 */
const makeAdder = (bounded: (until: number) => RedisClient, keys: QueueKeys, maxCallBytes: number) =>
  makeBatcher(
    (items: ReadonlyArray<{ readonly job: NewJob; readonly until: number }>) => {
      let until = Number.POSITIVE_INFINITY
      const jobs: NewJob[] = []
      for (const i of items) {
        if (i.until < until) until = i.until
        jobs.push(i.job)
      }
      return addJobs(bounded(until), keys, jobs)
    },
    { maxItems: 1000, maxWeight: maxCallBytes, weight: (i) => callBytes(i.job) },
  )

/** The `limit` of a sweep pass (default {@link DEFAULT_SWEEP_LIMIT}), its `maxMs` checked too. */
const sweepLimit = (options: SweepPassOptions): Checked<number> => {
  const maxMs = checkIntegerOr("maxMs", options.maxMs, 0, { min: 0, max: 3_600_000 })
  if (Result.isFailure(maxMs)) return Result.fail(maxMs.failure)
  return checkIntegerOr("limit", options.limit, DEFAULT_SWEEP_LIMIT, Limits.sweepLimit)
}

/** Jobs to add checked against the queue's defaults: one job's options, or a whole list first. */
const jobPreparer = (settings: QueueSettings) => {
  /** The options of a job given none: the queue's defaults, checked once. */
  let plainOptions: Checked<ResolvedJobOptions> | undefined
  const optionsOf = (field: () => string, options: JobOptions | undefined): Checked<ResolvedJobOptions> => {
    if (options !== undefined) return checkJobOptions(field(), options, settings.defaultJobOptions)
    plainOptions ??= checkJobOptions(field(), undefined, settings.defaultJobOptions)
    return plainOptions
  }
  /** Validate every job first: a bad one rejects the whole call before anything is sent. */
  const prepare = (jobs: ReadonlyArray<EncodedJob>): Checked<Array<NewJob>> => {
    const prepared: NewJob[] = []
    for (let i = 0; i < jobs.length; i++) {
      const j = jobs[i]!
      const options = optionsOf(() => `jobs[${i}].options`, j.options)
      if (Result.isFailure(options)) return Result.fail(options.failure)
      prepared.push(newJob(j.payload, options.success))
    }
    return Result.succeed(prepared)
  }
  return { optionsOf, prepare }
}

/**
 * Make the queue core for `name` on `client`. `commands` are unbounded (workers keep
 * their own retry logic); the queue's own calls go through `calls`, each bounded by
 * `callTimeoutMs`, and an add, from validation to reply, by one deadline.
 */
export const makeQueueCore = (client: RedisClient, name: string, settings: QueueSettings) => {
  const keys = queueKeys(name, settings.prefix)
  const commands: Commands = makeCommands(client, keys)
  /** Commands whose calls each end within callTimeoutMs, and none after `until` (a performance.now() time). */
  const bounded = (until?: number) => withDeadline(client, { timeoutMs: settings.callTimeoutMs, until })
  const within = (until?: number): Commands => makeCommands(bounded(until), keys)
  const calls = within()
  let opened = false
  let closed = false
  const openWith = (use: () => Commands) =>
    Effect.suspend((): Effect.Effect<void, QueueClosed | ScriptFailure> => {
      if (closed) return Effect.fail(new QueueClosed({ queue: name }))
      if (opened) return Effect.void
      return use().open.pipe(
        Effect.tap(() =>
          Effect.sync(() => {
            opened = true
          }),
        ),
        // once per client: warn when the server may evict keys (maxmemory-policy)
        Effect.tap(() => warnIfEvicting(client)),
      )
    })
  const ensureOpen = openWith(() => commands)

  const maxCallBytes = settings.maxCallBytes ?? MAX_CALL_BYTES
  const adder = makeAdder(bounded, keys, maxCallBytes)
  const { optionsOf, prepare } = jobPreparer(settings)

  return {
    name,
    keys,
    commands,
    /** The queue's own calls, each bounded by `callTimeoutMs`. */
    calls,
    ensureOpen,
    /** Add one job; resolves to its id (or, when deduplicated, the first job's id). */
    add: (job: EncodedJob) =>
      Effect.suspend((): Effect.Effect<string, InvalidOptions | QueueClosed | ScriptFailure | RedisUnavailable> => {
        const options = optionsOf(() => "options", job.options)
        if (Result.isFailure(options)) return Effect.fail(options.failure)
        const prepared = newJob(job.payload, options.success)
        if (closed) return Effect.fail(new QueueClosed({ queue: name }))
        return traceSend(name, "add", 1, prepared.id, (parent) => {
          const until = performance.now() + settings.callTimeoutMs
          const send = adder.submit({ job: carry(prepared, parent), until }).pipe(unknownOutcome("add", [prepared.id]))
          // the open check writes no job: a lost reply there means the job was not sent
          return opened ? send : Effect.andThen(readOnly(openWith(() => within(until))), send)
        })
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
        const prepared = yield* Effect.fromResult(prepare(jobs))
        const send = (parent: TraceParent | undefined) =>
          Effect.gen(function* () {
            const until = performance.now() + settings.callTimeoutMs
            yield* readOnly(openWith(() => within(until)))
            const client = bounded(until)
            const ids: string[] = []
            for (const group of splitByBytes(parent ? prepared.map((j) => carry(j, parent)) : prepared, maxCallBytes)) {
              const ordered = group.map((j) => j.id)
              ids.push(...(yield* addJobs(client, keys, group).pipe(unknownOutcome("addBulk", ordered))))
            }
            return ids
          })
        return yield* traceSend(name, "addBulk", prepared.length, undefined, send)
      }),
    stats: Effect.suspend(
      (): Effect.Effect<QueueStats, QueueClosed | ScriptFailure> =>
        closed ? Effect.fail(new QueueClosed({ queue: name })) : readOnly(calls.stats),
    ),
    /**
     * The queue's live workers (those whose heartbeat is recent), by id: one read, O(W)
     * for W registered workers.
     */
    workers: Effect.suspend(
      (): Effect.Effect<ReadonlyArray<WorkerInfo>, QueueClosed | ScriptFailure> =>
        closed ? Effect.fail(new QueueClosed({ queue: name })) : readOnly(Effect.map(calls.workers, (r) => r.workers)),
    ),
    /** One bounded sweep pass (see Sweeper); each of its script calls is bounded by `callTimeoutMs`. */
    sweep: (options: SweepPassOptions = {}) =>
      Effect.gen(function* () {
        const limit = yield* Effect.fromResult(sweepLimit(options))
        yield* readOnly(openWith(() => calls))
        return yield* sweepPass(calls, { ...options, limit })
      }).pipe(unknownOutcome("sweep")),
    markClosed: () => {
      closed = true
    },
    isClosed: () => closed,
  }
}

/** The queue core. */
export type QueueCore = ReturnType<typeof makeQueueCore>
