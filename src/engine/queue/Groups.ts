/**
 * Fair groups (add's `group` option): set limits, pause and resume a group, list the
 * groups — validated (bad input fails with {@link InvalidOptions} naming the field, before
 * anything is sent) and bounded like the queue's other calls. For one queue
 * ({@link makeGroupControl}), and how each spreads over a partitioned one ({@link GROUP_SPREAD}).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { runScript } from "../calls/Commands.ts"
import { Scripts } from "../calls/Scripts.ts"
import { MAX_GROUP_PAGE } from "../model/CallDefaults.ts"
import { InvalidOptions, QueueClosed } from "../model/Errors.ts"
import { checkGroupName } from "../model/GroupName.ts"
import { type Checked, checkInteger, checkIntegerOr, checkKnownKeys, checkObject } from "../model/Validate.ts"
import type { GroupLimits } from "../scripts/GroupScripts.ts"
import { readOnly } from "./Adding.ts"
import type { ControlledQueue } from "./JobControl.ts"
import type { ControlError, GroupControl } from "./QueueApi.ts"
import type { SpreadTable } from "./Spread.ts"

export type { GroupInfo, GroupLimits, GroupPage } from "../scripts/GroupScripts.ts"
export type { GroupControl } from "./QueueApi.ts"

/** Largest value of a group limit (`concurrency`, `max`, `perMs`: ms, about 24 days). */
export const MAX_GROUP_LIMIT = 2_147_483_647

export { MAX_GROUP_PAGE } from "../model/CallDefaults.ts"

/** A face's `setGroupLimits(limits)` (the default) or `setGroupLimits(group, limits)` (one group's own) on `c`. */
export const setGroupLimitsOn = (
  c: GroupControl,
  group: string | GroupLimits | null,
  limits?: GroupLimits | null,
): Effect.Effect<void, ControlError> =>
  typeof group === "string" ? c.setGroupLimits(group, limits as GroupLimits | null) : c.setGroupLimits(undefined, group)

/** Limits checked: an object of whole numbers from 1 (`concurrency`, `max` and `perMs` together, `maxSize`), at least one; or null. */
export const checkGroupLimits = (value: unknown): Checked<GroupLimits | null> => {
  if (value === null) return Result.succeed(null)
  const o = checkObject("limits", value)
  if (Result.isFailure(o)) return Result.fail(o.failure)
  const known = checkKnownKeys("limits", o.success, ["concurrency", "max", "perMs", "maxSize"])
  if (Result.isFailure(known)) return Result.fail(known.failure)
  const bounds = { min: 1, max: MAX_GROUP_LIMIT }
  const out: Record<string, number> = {}
  for (const name of ["concurrency", "max", "perMs", "maxSize"] as const) {
    const v = o.success[name]
    if (v === undefined) continue
    const n = checkInteger(`limits.${name}`, v, bounds)
    if (Result.isFailure(n)) return Result.fail(n.failure)
    out[name] = n.success
  }
  if ((out.max === undefined) !== (out.perMs === undefined)) {
    const name = out.max === undefined ? "perMs" : "max"
    return Result.fail(
      new InvalidOptions({ field: `limits.${name}`, value: out[name], reason: "needs max and perMs together" }),
    )
  }
  if (Object.keys(out).length === 0) {
    return Result.fail(
      new InvalidOptions({
        field: "limits",
        value,
        reason: "must set concurrency, max and perMs, or maxSize (null clears)",
      }),
    )
  }
  return Result.succeed(out)
}

/** The options of `groups()` checked: the cursor (a string) and count (1–1000, default 100). */
const checkGroupPage = (value: unknown): Checked<{ readonly cursor: string; readonly count: number }> => {
  const o = checkObject("options", value)
  if (Result.isFailure(o)) return Result.fail(o.failure)
  const known = checkKnownKeys("options", o.success, ["cursor", "count"])
  if (Result.isFailure(known)) return Result.fail(known.failure)
  const cursor = o.success.cursor ?? ""
  if (typeof cursor !== "string") {
    return Result.fail(
      new InvalidOptions({ field: "cursor", value: cursor, reason: "must be a page's cursor (a string)" }),
    )
  }
  const count = checkIntegerOr("count", o.success.count, 100, { min: 1, max: MAX_GROUP_PAGE })
  return Result.map(count, (n) => ({ cursor, count: n }))
}

/** The group control of one queue, on its bounded calls. */
export const makeGroupControl = (q: ControlledQueue): GroupControl => {
  const client = q.calls.client
  const run = <A>(f: () => Effect.Effect<A, ControlError>): Effect.Effect<A, ControlError> =>
    Effect.suspend(() => (q.isClosed() ? Effect.fail(new QueueClosed({ queue: q.name })) : f()))
  const group = (g: unknown) => Effect.fromResult(checkGroupName("group", g))
  return {
    setGroupLimits: (g, limits) =>
      Effect.gen(function* () {
        const name = g === undefined ? "" : yield* group(g)
        const l = yield* Effect.fromResult(checkGroupLimits(limits))
        // the default looks at the held groups a page a call, until the last page
        let skip = 0
        do skip = yield* run(() => runScript(client, q.keys, Scripts.groupLimits, { group: name, limits: l, skip }))
        while (skip >= 0)
      }),
    pauseGroup: (g) =>
      Effect.flatMap(group(g), (name) =>
        run(() => runScript(client, q.keys, Scripts.groupPause, { group: name, pause: true })),
      ),
    resumeGroup: (g) =>
      Effect.flatMap(group(g), (name) =>
        run(() => runScript(client, q.keys, Scripts.groupPause, { group: name, pause: false })),
      ),
    groups: (options) =>
      Effect.flatMap(Effect.fromResult(checkGroupPage(options)), ({ cursor, count }) =>
        run(() => readOnly(runScript(client, q.keys, Scripts.groupList, { after: cursor, count }))),
      ),
  }
}

/**
 * The group control over a partitioned queue: a group's jobs go to one partition (by its
 * name, unless a custom id or dedupe key routes a job), so a group's calls go there; the
 * default limits go to every partition; `groups()` lists partition by partition (the
 * cursor "<partition>:<group>").
 */
export const GROUP_SPREAD: SpreadTable<GroupControl> = {
  setGroupLimits: {
    over: "custom",
    run: (each, at) => (g, limits) =>
      g === undefined
        ? Effect.flatMap(Effect.fromResult(checkGroupLimits(limits)), (l) =>
            Effect.forEach(each, (c) => c.setGroupLimits(undefined, l), { discard: true }),
          )
        : Effect.flatMap(Effect.fromResult(checkGroupName("group", g)), (name) =>
            each[at.partitionOf(name)]!.setGroupLimits(name, limits),
          ),
  },
  pauseGroup: { over: "hash", key: (g) => g },
  resumeGroup: { over: "hash", key: (g) => g },
  groups: {
    over: "custom",
    run: (each) => (options) =>
      Effect.gen(function* () {
        const page = yield* Effect.fromResult(checkGroupPage(options))
        const [i, after] = yield* Effect.fromResult(partitionCursor(page.cursor, each.length))
        const got = yield* each[i]!.groups({ cursor: after, count: page.count })
        const cursor = got.cursor !== undefined ? `${i}:${got.cursor}` : i + 1 < each.length ? `${i + 1}:` : undefined
        return { ...got, cursor }
      }),
  },
}

/** A partitioned queue's groups() cursor "<partition>:<group>" ("" = the first page): the partition and the group after which to list. */
const partitionCursor = (cursor: string, partitions: number): Checked<readonly [number, string]> => {
  if (cursor === "") return Result.succeed([0, ""])
  const m = /^(\d+):([\s\S]*)$/.exec(cursor)
  if (!m || Number(m[1]) >= partitions) {
    return Result.fail(
      new InvalidOptions({ field: "cursor", value: cursor, reason: "must be a cursor a groups() page gave" }),
    )
  }
  return Result.succeed([Number(m[1]), m[2]!])
}
