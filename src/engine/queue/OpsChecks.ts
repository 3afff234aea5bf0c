/**
 * The checks of the operator's calls' arguments (`Operations.ts`): each answers a `Result`
 * whose failure is an {@link InvalidOptions} naming the field, taken before anything is sent.
 */
import * as Result from "effect/Result"
import { stateReason } from "../model/DidYouMean.ts"
import { InvalidOptions } from "../model/Errors.ts"
import { type Checked, checkInteger, checkIntegerOr, checkKnownKeys, checkObject, Limits } from "../model/Validate.ts"
import { CLEAN_STATES, type CleanState, LIST_STATES, type ListInput, type ListState } from "../scripts/OpsScripts.ts"

/** Default and largest `count` of a `getJobs` page. */
export const PAGE_COUNT = { default: 100, max: 1000 } as const

const oneOf = <S extends string>(field: string, value: unknown, states: ReadonlyArray<S>, call = ""): Checked<S> =>
  typeof value === "string" && (states as ReadonlyArray<string>).includes(value)
    ? Result.succeed(value as S)
    : Result.fail(new InvalidOptions({ field, value, reason: stateReason(call, value, states) }))

/** A listing's state (BullMQ's `failed` and array of states get a hint). */
export const checkListState = (value: unknown): Checked<ListState> => oneOf("state", value, LIST_STATES, "getJobs")

/** A clean's state (BullMQ's `failed` and `clean(grace, limit, type)` get a hint). */
export const checkCleanState = (value: unknown): Checked<CleanState> => oneOf("state", value, CLEAN_STATES, "clean")

/** A waiting page's cursor (jobs read so far) or a sorted set's (`<score>:<id>`). */
const CURSOR = { waiting: /^[0-9]{1,15}$/, set: /^-?[0-9][0-9.e+-]{0,30}:[\x21-\x7e]{1,128}$/ } as const

/** A cursor as a page of one queue reads it ("" for the first page). */
export const checkCursor = (state: ListState, cursor: unknown): Checked<string> => {
  if (cursor === undefined || cursor === "") return Result.succeed("")
  const re = state === "waiting" ? CURSOR.waiting : CURSOR.set
  return typeof cursor === "string" && re.test(cursor)
    ? Result.succeed(cursor)
    : Result.fail(
        new InvalidOptions({
          field: "cursor",
          value: cursor,
          reason: `must be the cursor of a previous getJobs("${state}") page (omit it for the first page)`,
        }),
      )
}

/** `getJobs` options, the cursor left as given (a partitioned queue reads its own first). */
export const checkListOptions = (
  state: unknown,
  options: unknown,
): Checked<Omit<ListInput, "cursor"> & { readonly cursor: unknown }> =>
  Result.gen(function* () {
    const s = yield* checkListState(state)
    const o = yield* checkObject("options", options)
    yield* checkKnownKeys("options", o, ["cursor", "count", "order"])
    const count = yield* checkIntegerOr("count", o.count, PAGE_COUNT.default, { min: 1, max: PAGE_COUNT.max })
    const order = o.order === undefined ? "asc" : yield* oneOf("order", o.order, ["asc", "desc"] as const)
    return { state: s, order, count, cursor: o.cursor }
  })

/** `drain` options: `delayed` (default false). */
export const checkDrainOptions = (options: unknown): Checked<{ readonly delayed: boolean }> =>
  Result.gen(function* () {
    const o = yield* checkObject("options", options)
    yield* checkKnownKeys("options", o, ["delayed"])
    if (o.delayed !== undefined && typeof o.delayed !== "boolean") {
      return yield* Result.fail(
        new InvalidOptions({ field: "delayed", value: o.delayed, reason: "must be true or false" }),
      )
    }
    return { delayed: o.delayed === true }
  })

/** Most jobs one `clean` may delete in all (its calls are bounded anyway). */
const MAX_CLEAN = 1_000_000_000

/** `clean` state and options: `olderThanMs` (default 0: every one), `limit` (default: no limit). */
export const checkCleanOptions = (
  state: unknown,
  options: unknown,
): Checked<{ readonly state: CleanState; readonly olderThanMs: number; readonly limit: number }> =>
  Result.gen(function* () {
    const s = yield* checkCleanState(state)
    const o = yield* checkObject("options", options)
    yield* checkKnownKeys("options", o, ["olderThanMs", "limit"])
    const olderThanMs = yield* checkIntegerOr("olderThanMs", o.olderThanMs, 0, Limits.delayMs)
    const limit = yield* checkIntegerOr("limit", o.limit, MAX_CLEAN, { min: 1, max: MAX_CLEAN })
    return { state: s, olderThanMs, limit }
  })

/** `obliterate` options: `force` (default false). */
export const checkObliterateOptions = (options: unknown): Checked<{ readonly force: boolean }> =>
  Result.gen(function* () {
    const o = yield* checkObject("options", options)
    yield* checkKnownKeys("options", o, ["force"])
    if (o.force !== undefined && typeof o.force !== "boolean") {
      return yield* Result.fail(new InvalidOptions({ field: "force", value: o.force, reason: "must be true or false" }))
    }
    return { force: o.force === true }
  })

/** `upgrade` options: `pageSize` (1 .. 1000, default 500), `force` (default false), `pollMs` (10 ms .. 1 min, default 1 s), `waitMs` (0 .. 1 h, default 1 min). */
export const checkUpgradeOptions = (
  options: unknown,
): Checked<{ readonly pageSize: number; readonly force: boolean; readonly pollMs: number; readonly waitMs: number }> =>
  Result.gen(function* () {
    const o = yield* checkObject("options", options)
    yield* checkKnownKeys("options", o, ["pageSize", "force", "pollMs", "waitMs"])
    const { force } = yield* checkObliterateOptions({ force: o.force })
    const pageSize = yield* checkIntegerOr("pageSize", o.pageSize, 500, { min: 1, max: 1000 })
    const pollMs = yield* checkIntegerOr("pollMs", o.pollMs, 1000, { min: 10, max: 60_000 })
    const waitMs = yield* checkIntegerOr("waitMs", o.waitMs, 60_000, { min: 0, max: 3_600_000 })
    return { pageSize, force, pollMs, waitMs }
  })

/** `reschedule` options: `delayMs`, required (0 .. 365 days). */
export const checkRescheduleOptions = (options: unknown): Checked<{ readonly delayMs: number }> =>
  Result.gen(function* () {
    const o = yield* checkObject("options", options)
    yield* checkKnownKeys("options", o, ["delayMs"])
    return { delayMs: yield* checkInteger("delayMs", o.delayMs, Limits.delayMs) }
  })
