/**
 * The add path of one queue: validated adds, one or bulk. Adds made while one is in
 * flight go out together in one script call; a bulk goes out in as few calls as its
 * payloads allow (see {@link MAX_CALL_BYTES}).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { RedisClient } from "../../redis/Client.ts"
import { makeBatcher } from "../calls/Batcher.ts"
import { addJobs, type Commands, type NewJob, type ScriptFailure } from "../calls/Commands.ts"
import { InvalidOptions, OutcomeUnknown, QueueClosed, RedisUnavailable } from "../model/Errors.ts"
import type { QueueKeys } from "../model/Keys.ts"
import { type Checked, Limits } from "../model/Validate.ts"
import { carry, type TraceParent, traceSend } from "../telemetry/Telemetry.ts"
import { checkJobOptions, type JobOptions, newJob, type ResolvedJobOptions } from "./Job.ts"

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

/** One job to add: its encoded payload and options. */
export interface EncodedJob {
  readonly payload: string
  readonly options?: JobOptions | undefined
}

export /** Give an {@link OutcomeUnknown} the operation's name (and the ids of the jobs an add sent). */
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
    { maxItems: 1000, maxWeight: maxCallBytes, weight: (i) => callBytes(i.job), awaitCallers: true },
  )

/** What a BullMQ user is told when add's first argument looks like BullMQ's job name. */
const NAME_FIRST =
  "BullMQ's add(name, data, opts) is add(data, { name, ...opts }) in leaseq: the job's name is an option (job.name in the handler)"

/**
 * An add given more than its two arguments (payload, options): BullMQ's `add(name, data,
 * opts)`. Refused (nothing is written) rather than read as a payload and wrong options; a
 * call of two arguments is not judged here, as a string payload is legal.
 */
export const checkAddArity = (args: ReadonlyArray<unknown>): Checked<void> =>
  args.length <= 2
    ? Result.void
    : Result.fail(
        new InvalidOptions({
          field: "payload",
          value: args[0],
          reason: `add takes (payload, options) and was given ${args.length} arguments; ${NAME_FIRST}`,
        }),
      )

/** A refused options check of a job whose payload is a string: maybe a BullMQ job name, and a hint says so. */
const nameFirstHint = (payload: string, e: InvalidOptions): InvalidOptions =>
  payload.startsWith('"')
    ? new InvalidOptions({
        field: e.field,
        value: e.value,
        reason: `${e.reason}; the payload is the string ${payload.length > 60 ? `${payload.slice(0, 57)}..."` : payload}: if that is a job name, ${NAME_FIRST}`,
      })
    : e

/** Jobs to add checked against the queue's defaults: one job's options, or a whole list first. */
const jobPreparer = (settings: AddSettings) => {
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

/** The queue settings the add path reads. */
export interface AddSettings {
  readonly callTimeoutMs: number
  readonly maxCallBytes?: number | undefined
  readonly defaultJobOptions: JobOptions
}

/** What the add path needs of its queue core. */
export interface AddContext {
  readonly name: string
  readonly keys: QueueKeys
  readonly settings: AddSettings
  /** A client whose calls each end within callTimeoutMs, and none after `until`. */
  readonly bounded: (until?: number) => RedisClient
  readonly within: (until?: number) => Commands
  readonly openWith: (use: () => Commands) => Effect.Effect<void, QueueClosed | ScriptFailure>
  readonly isOpened: () => boolean
  readonly isClosed: () => boolean
}

/** `add` and `addBulk` of one queue. */
export const makeAdds = (ctx: AddContext) => {
  const { name, keys, settings, bounded, within, openWith } = ctx
  const maxCallBytes = settings.maxCallBytes ?? MAX_CALL_BYTES
  const adder = makeAdder(bounded, keys, maxCallBytes)
  const { optionsOf, prepare } = jobPreparer(settings)
  return {
    /** Add one job; resolves to its id (or, when deduplicated, the first job's id). */
    add: (job: EncodedJob) =>
      Effect.suspend((): Effect.Effect<string, InvalidOptions | QueueClosed | ScriptFailure | RedisUnavailable> => {
        const options = optionsOf(() => "options", job.options)
        if (Result.isFailure(options)) return Effect.fail(nameFirstHint(job.payload, options.failure))
        const prepared = newJob(job.payload, options.success)
        if (ctx.isClosed()) return Effect.fail(new QueueClosed({ queue: name }))
        return traceSend(name, "add", 1, prepared.id, (parent) => {
          const until = performance.now() + settings.callTimeoutMs
          const send = adder.submit({ job: carry(prepared, parent), until }).pipe(unknownOutcome("add", [prepared.id]))
          // the open check writes no job: a lost reply there means the job was not sent
          return ctx.isOpened() ? send : Effect.andThen(readOnly(openWith(() => within(until))), send)
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
  }
}
