/**
 * Look up and steer jobs and the queue, validated and bounded like the queue's other
 * calls: `getJob`, `getJobState`, `cancel`, `changePriority`, `pause`, `resume`, `isPaused`, `clearDedupe`, the flow
 * limits `setRateLimit`, `rateLimit`, `clearHold`, `setConcurrency`, `concurrency`, and the retention
 * `setRetention`, `retention`. For one queue ({@link makeJobControl}), and how each spreads
 * over a partitioned one ({@link CONTROL_SPREAD}, applied by partition/FanOut.ts).
 * Bad input fails with {@link InvalidOptions} before anything is sent.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { Commands } from "../calls/Commands.ts"
import { lookups } from "../calls/Lookups.ts"
import { InvalidOptions, JobNotWaiting, QueueClosed } from "../model/Errors.ts"
import { validateConcurrency, validateRateLimit } from "../model/Flow.ts"
import { isWellFormed, NOT_WELL_FORMED } from "../model/GroupName.ts"
import type { QueueKeys } from "../model/Keys.ts"
import { type Checked, checkInteger, checkKnownKeys, checkObject, Limits } from "../model/Validate.ts"
import { readOnly } from "./Adding.ts"
import { type CancelChildren, makeJobCommands } from "./JobCommands.ts"
import type { ControlError, JobControl, QueueApi } from "./QueueApi.ts"
import { resolveRetention } from "./Retention.ts"
import { anyTrue, firstFound, none, type SpreadTable } from "./Spread.ts"

export type { ControlError, JobControl } from "./QueueApi.ts"

/** Longest job id accepted by `getJob` and `cancel` (leaseq's ids are 26-character ULIDs). */
export const MAX_JOB_ID_LENGTH = 128

/** Throws {@link InvalidOptions} unless `id` is a non-empty string of at most {@link MAX_JOB_ID_LENGTH} characters. */
export const validateJobId = (id: unknown): string => {
  if (typeof id !== "string" || id.length === 0 || id.length > MAX_JOB_ID_LENGTH) {
    throw new InvalidOptions({
      field: "id",
      value: id,
      reason: `must be a job id: a non-empty string of at most ${MAX_JOB_ID_LENGTH} characters (as add returned it)`,
    })
  }
  return id
}

/** Throws {@link InvalidOptions} unless `key` is a dedupe key as `add` accepts it. */
export const validateDedupeKey = (key: unknown): string => {
  if (typeof key !== "string" || key.length === 0 || key.length > Limits.dedupeKeyLength) {
    throw new InvalidOptions({
      field: "dedupeKey",
      value: key,
      reason: `must be a non-empty string of at most ${Limits.dedupeKeyLength} characters`,
    })
  }
  if (!isWellFormed(key)) throw new InvalidOptions({ field: "dedupeKey", value: key, reason: NOT_WELL_FORMED })
  return key
}

/** `changePriority`'s options checked: an object with at most `lifo`, a boolean (default false). */
const checkPriorityOptions = (given: unknown): Checked<boolean> =>
  Result.flatMap(checkObject("options", given), (o) =>
    Result.flatMap(checkKnownKeys("options", o, ["lifo"]), () =>
      o.lifo === undefined || typeof o.lifo === "boolean"
        ? Result.succeed(o.lifo === true)
        : Result.fail(new InvalidOptions({ field: "options.lifo", value: o.lifo, reason: "must be true or false" })),
    ),
  )

/** `changePriority`'s arguments checked (the id, the priority: 0 .. 1 000 000, the options), before anything is sent. */
const checkedPriority =
  <A>(
    f: (id: string, priority: number, lifo: boolean) => Effect.Effect<A, ControlError | JobNotWaiting>,
  ): ((id: unknown, priority: unknown, options?: unknown) => Effect.Effect<A, ControlError | JobNotWaiting>) =>
  (id, priority, options) =>
    Effect.suspend(() => {
      try {
        const jobId = validateJobId(id)
        return Effect.fromResult(checkInteger("priority", priority, Limits.priority)).pipe(
          Effect.flatMap((p) =>
            Effect.map(Effect.fromResult(checkPriorityOptions(options)), (lifo) => [p, lifo] as const),
          ),
          Effect.flatMap(([p, lifo]) => f(jobId, p, lifo)),
        )
      } catch (e) {
        return Effect.fail(e as InvalidOptions)
      }
    })

/** Run `f(value)` after validating it with `check` (a bad value fails before anything is sent). */
const checked =
  <V, A, E = ControlError>(check: (v: unknown) => V, f: (v: V) => Effect.Effect<A, E>) =>
  (value: unknown): Effect.Effect<A, E | InvalidOptions> =>
    Effect.suspend((): Effect.Effect<A, E | InvalidOptions> => {
      try {
        return f(check(value))
      } catch (e) {
        return Effect.fail(e as InvalidOptions)
      }
    })

/** Checks `cancel`'s options: `children` is "cancel" (the default) or "keep". */
const validateCancel = (id: unknown, options: unknown): { readonly id: string; readonly children: CancelChildren } => {
  const jobId = validateJobId(id)
  if (options === undefined) return { id: jobId, children: "cancel" }
  if (typeof options !== "object" || options === null) {
    throw new InvalidOptions({
      field: "options",
      value: options,
      reason: 'must be an object such as { children: "keep" }',
    })
  }
  const children = (options as { readonly children?: unknown }).children
  if (children !== undefined && children !== "cancel" && children !== "keep") {
    throw new InvalidOptions({
      field: "children",
      value: children,
      reason: 'must be "cancel" (a parent\'s pending children are cancelled too, the default) or "keep"',
    })
  }
  return { id: jobId, children: children ?? "cancel" }
}

/** `cancel` after its options are checked (a bad one changes nothing). */
const checkedCancel =
  <A>(f: (id: string, children: CancelChildren) => Effect.Effect<A, ControlError>) =>
  (id: unknown, options?: unknown): Effect.Effect<A, ControlError> =>
    Effect.suspend(() => {
      try {
        const c = validateCancel(id, options)
        return f(c.id, c.children)
      } catch (e) {
        return Effect.fail(e as InvalidOptions)
      }
    })

/**
 * The ids given to `retryDead` / `purgeDead`: an array of at most {@link Limits.bulk} job
 * ids (non-empty strings), else {@link InvalidOptions} naming `ids`.
 */
export const checkJobIds = (ids: unknown): Checked<ReadonlyArray<string>> =>
  Array.isArray(ids) && ids.length <= Limits.bulk && ids.every((id) => typeof id === "string" && id.length > 0)
    ? Result.succeed(ids)
    : Result.fail(
        new InvalidOptions({
          field: "ids",
          value: ids,
          reason: `must be an array of at most ${Limits.bulk} job ids (non-empty strings)`,
        }),
      )

/**
 * Retry or purge (`call`: a queue's `deadRetry` or `deadPurge`) the dead jobs `ids`,
 * checked first with {@link checkJobIds}: how many were (unknown ids are skipped).
 */
export const deadByIds = (call: QueueApi["deadRetry"], ids: unknown) =>
  Effect.fromResult(checkJobIds(ids)).pipe(
    Effect.flatMap((list) => call({ ids: list })),
    Effect.map((r) => r.count),
  )

/** What job control needs of one queue's core. */
export interface ControlledQueue {
  readonly name: string
  readonly keys: QueueKeys
  /** The queue's bounded calls. */
  readonly calls: Commands
  readonly isClosed: () => boolean
}

/** Job control of one queue; each call bounded by the queue's `callTimeoutMs`. */
export const makeJobControl = (core: ControlledQueue): JobControl => {
  const cmds = makeJobCommands(core.calls.client, core.keys)
  const look = lookups(core.calls.client, core.keys)
  const open = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E | QueueClosed> =>
    Effect.suspend(
      (): Effect.Effect<A, E | QueueClosed> =>
        core.isClosed() ? Effect.fail(new QueueClosed({ queue: core.name })) : effect,
    )
  return {
    getJob: checked(validateJobId, (id) => open(readOnly(cmds.getJob(id)))),
    getJobState: checked(validateJobId, (id) => open(readOnly(cmds.getJob(id))).pipe(Effect.map((i) => i?.state))),
    cancel: checkedCancel((id, children) => open(cmds.cancel(id, children))),
    changePriority: checkedPriority((id, priority, lifo) => open(cmds.changePriority(id, priority, lifo))),
    pause: open(cmds.pause),
    resume: open(cmds.resume),
    isPaused: open(readOnly(core.calls.stats)).pipe(Effect.map((s) => s.paused)),
    clearDedupe: checked(validateDedupeKey, (key) => open(cmds.clearDedupe(key))),
    dedupeHolder: checked(validateDedupeKey, (key) => open(readOnly(look.dedupeHolder(key)))),
    setRateLimit: checked(validateRateLimit, (l) =>
      open(cmds.setLimits({ limit: "rate", value: l?.max ?? null, perMs: l?.perMs ?? 0 })).pipe(Effect.asVoid),
    ),
    rateLimit: open(readOnly(core.calls.stats)).pipe(Effect.map((s) => s.limits.rateLimit)),
    clearHold: open(cmds.setLimits({ limit: "hold", value: null })),
    setConcurrency: checked(validateConcurrency, (n) =>
      open(cmds.setLimits({ limit: "concurrency", value: n })).pipe(Effect.asVoid),
    ),
    concurrency: open(readOnly(core.calls.stats)).pipe(Effect.map((s) => s.limits.concurrency)),
    setRetention: checked(resolveRetention, (r) => open(cmds.setRetention(r)).pipe(Effect.asVoid)),
    retention: open(readOnly(cmds.retention)),
  }
}

/**
 * The outcome of a `changePriority` asked of every partition: the partition that holds the
 * job answers (a job is in exactly one); when none moved it, the state of the one holding
 * it, else `missing`.
 */
const onePartition = (
  results: ReadonlyArray<Result.Result<"waiting" | "delayed", ControlError | JobNotWaiting>>,
  [jobId]: readonly [unknown, ...Array<unknown>],
): Effect.Effect<"waiting" | "delayed", ControlError | JobNotWaiting> => {
  let found: JobNotWaiting | undefined
  for (const r of results) {
    if (Result.isSuccess(r)) return Effect.succeed(r.success)
    if (!(r.failure instanceof JobNotWaiting)) return Effect.fail(r.failure)
    if (r.failure.state !== "missing") found = r.failure
  }
  return Effect.fail(found ?? new JobNotWaiting({ jobId: String(jobId), state: "missing" }))
}

/**
 * Job control over a partitioned queue: `getJob`, `getJobState`, `cancel` and `changePriority` ask every
 * partition at once (a job is in exactly one); `pause`/`resume` change every partition;
 * `isPaused` is true when any partition is paused; `clearDedupe` goes to the key's partition
 * (`dedupeKey` routes adds there too); the rate limit and concurrency cap hold for the queue
 * as a whole, split in shares over the partitions (partition/FlowSplit.ts) and read from the
 * first partition; `clearHold` lifts every partition's hold; the retention goes to every
 * partition (each validates it before writing) and is read from the first.
 */
export const CONTROL_SPREAD: SpreadTable<JobControl> = {
  getJob: { over: "every", merge: firstFound },
  getJobState: { over: "every", merge: firstFound },
  cancel: { over: "every", merge: firstFound },
  changePriority: { over: "holder", pick: onePartition },
  pause: { over: "every", merge: anyTrue },
  resume: { over: "every", merge: anyTrue },
  isPaused: { over: "every", merge: anyTrue },
  clearDedupe: { over: "hash", key: (key) => key },
  dedupeHolder: { over: "hash", key: (key) => key },
  setRateLimit: {
    over: "custom",
    run: (_, at) =>
      checked(validateRateLimit, (l) => at.setLimit({ limit: "rate", max: l?.max ?? null, perMs: l?.perMs ?? 0 })),
  },
  rateLimit: { over: "first" },
  clearHold: { over: "every", merge: anyTrue },
  setConcurrency: {
    over: "custom",
    run: (_, at) => checked(validateConcurrency, (n) => at.setLimit({ limit: "concurrency", max: n })),
  },
  concurrency: { over: "first" },
  setRetention: { over: "every", merge: none },
  retention: { over: "first" },
}
