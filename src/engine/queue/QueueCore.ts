/**
 * The producer and admin side of one queue, in Effect: validated adds (one or
 * bulk, one Redis call), stats, sweeps and dead-letter handling. Payloads arrive
 * here already encoded to JSON text by a face (plain JSON or an Effect Schema).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { type RedisClient, withDeadline } from "../../redis/Client.ts"
import { DEFAULT_SWEEP_LIMIT, type SweepPassOptions, sweepPass } from "../admin/Sweeper.ts"
import { type Commands, makeCommands, type ScriptFailure } from "../calls/Commands.ts"
import { warnIfEvicting } from "../calls/EvictionPolicy.ts"
import { InvalidOptions, type OutcomeUnknown, QueueClosed, type RedisUnavailable } from "../model/Errors.ts"
import { DEFAULT_PREFIX, type QueueKeys, queueKeys } from "../model/Keys.ts"
import { checkPrefix } from "../model/QueueName.ts"
import { type Checked, checkIntegerOr, checkKnownKeys, checkObject, Limits, orThrow } from "../model/Validate.ts"
import { makeAdds, readOnly, unknownOutcome } from "./Adding.ts"
import { makeCapabilities } from "./Capabilities.ts"
import { makeDependencyControl } from "./Dependencies.ts"
import { checkJobOptions, DEDUPE_UNTIL_FINISHED, type JobOptions, type ResolvedJobOptions } from "./Job.ts"
import type { DeadTarget, QueueApi } from "./QueueApi.ts"
import { makeSchedules } from "./Schedules.ts"

export {
  checkBulkSize,
  type EncodedJob,
  MAX_CALL_BYTES,
  readOnly,
  splitByBytes,
} from "./Adding.ts"

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

/** The dedupe options of resolved `defaultJobOptions`, as each add takes them again. */
const dedupeDefaults = (d: ResolvedJobOptions): JobOptions => {
  const key = d.dedupeKey ? { dedupeKey: d.dedupeKey } : {}
  const replace = d.dedupeReplace ? { dedupeReplace: true } : {}
  if (d.dedupeTtlMs === DEDUPE_UNTIL_FINISHED) return { dedupeUntil: "finished", ...key, ...replace } as JobOptions
  return {
    dedupeTtlMs: d.dedupeTtlMs,
    ...(d.dedupeExtend ? { dedupeExtend: true } : {}),
    ...key,
    ...replace,
  } as JobOptions
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
    if (defaults.id !== undefined) {
      return yield* Result.fail(
        new InvalidOptions({
          field: "defaultJobOptions.id",
          value: defaults.id,
          reason: "a job id is one job's own: give it to add, not as a default for every job",
        }),
      )
    }
    const defaultJobOptions: JobOptions = {
      delayMs: defaults.delayMs,
      maxAttempts: defaults.maxAttempts,
      ...dedupeDefaults(defaults),
      ...(defaults.timeoutMs > 0 ? { timeoutMs: defaults.timeoutMs } : {}),
      ...(defaults.backoff === undefined ? {} : { backoff: JSON.parse(defaults.backoff) }),
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

/** The `limit` of a sweep pass (default {@link DEFAULT_SWEEP_LIMIT}), its `maxMs` checked too. */
const sweepLimit = (options: SweepPassOptions): Checked<number> => {
  const maxMs = checkIntegerOr("maxMs", options.maxMs, 0, { min: 0, max: 3_600_000 })
  if (Result.isFailure(maxMs)) return Result.fail(maxMs.failure)
  return checkIntegerOr("limit", options.limit, DEFAULT_SWEEP_LIMIT, Limits.sweepLimit)
}

/** The ordinary queue core: the {@link QueueApi} of one queue, with its keys and its calls. */
export interface QueueCore extends QueueApi {
  /** The queue's keys. */
  readonly keys: QueueKeys
  /** The queue's scripts, unbounded (workers keep their own retry logic). */
  readonly commands: Commands
  /** The queue's own calls, each bounded by `callTimeoutMs`. */
  readonly calls: Commands
}

/** `effect`, unless the queue `name` is closed: then it fails with {@link QueueClosed} (checked when it runs). */
export const unlessClosed =
  (name: string, isClosed: () => boolean) =>
  <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E | QueueClosed> =>
    Effect.suspend(
      (): Effect.Effect<A, E | QueueClosed> => (isClosed() ? Effect.fail(new QueueClosed({ queue: name })) : effect),
    )

/** The read and dead-letter members of one queue's {@link QueueApi}, on its bounded `calls`. */
const adminMembers = (name: string, calls: Commands, isClosed: () => boolean) => {
  const open = unlessClosed(name, isClosed)
  return {
    stats: open(readOnly(calls.stats)),
    /** The live workers (those whose heartbeat is recent), by id: one read, O(W) for W registered workers. */
    workers: open(readOnly(Effect.map(calls.workers, (r) => r.workers))),
    deadList: (offset: number, count: number) => open(readOnly(calls.deadList(offset, count))),
    deadRetry: (target: DeadTarget) => open(calls.deadRetry(target)),
    deadPurge: (target: DeadTarget) => open(calls.deadPurge(target)),
    verify: (maxLines: number, pageSize?: number) => open(readOnly(calls.verify(maxLines, pageSize))),
  }
}

/**
 * Make the queue core for `name` on `client`. `commands` are unbounded (workers keep
 * their own retry logic); the queue's own calls go through `calls`, each bounded by
 * `callTimeoutMs`, and an add, from validation to reply, by one deadline.
 */
export const makeQueueCore = (client: RedisClient, name: string, settings: QueueSettings): QueueCore => {
  const keys = queueKeys(name, settings.prefix)
  const commands: Commands = makeCommands(client, keys)
  /** Commands whose calls each end within callTimeoutMs, and none after `until` (a performance.now() time). */
  const bounded = (until?: number) => withDeadline(client, { timeoutMs: settings.callTimeoutMs, until })
  const within = (until?: number): Commands => makeCommands(bounded(until), keys)
  const calls = within()
  let opened = false
  let closed = false
  const isClosed = () => closed
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

  return {
    name,
    partitions: 1,
    keys,
    keysByPartition: [keys],
    commands,
    calls,
    ensureOpen: openWith(() => commands),
    ...makeAdds({ name, keys, settings, bounded, within, openWith, isOpened: () => opened, isClosed }),
    ...adminMembers(name, calls, isClosed),
    /** One bounded sweep pass (see Sweeper); each of its script calls is bounded by `callTimeoutMs`. */
    sweep: (options: SweepPassOptions = {}) =>
      Effect.gen(function* () {
        const limit = yield* Effect.fromResult(sweepLimit(yield* Effect.fromResult(checkObject("options", options))))
        yield* readOnly(openWith(() => calls))
        return yield* sweepPass(calls, { ...options, limit })
      }).pipe(unknownOutcome("sweep")),
    ...makeCapabilities({ name, keys, calls, isClosed }),
    schedules: makeSchedules(calls.client, keys, isClosed, settings.maxPayloadBytes),
    dependencies: makeDependencyControl({
      name,
      keys,
      client: calls.client,
      defaultJobOptions: settings.defaultJobOptions,
      isClosed,
    }),
    markClosed: () => {
      closed = true
    },
    isClosed,
  }
}
