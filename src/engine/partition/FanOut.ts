/**
 * The one fan-out: any capability of a queue (job control, groups, the operator's calls,
 * manual processing) made the capability of a partitioned queue from its partitions' own,
 * member by member, as the capability's spread table declares (`queue/Spread.ts`). No
 * capability has a partitioned twin written by hand.
 */
import * as Effect from "effect/Effect"
import type { Member, Partitions, Spread, SpreadTable } from "../queue/Spread.ts"

// biome-ignore lint/suspicious/noExplicitAny: a member of any shape, typed by its table entry
type AnyFn = (...args: any[]) => Effect.Effect<any, any>

/** Member `key` of every partition, called with `args` (an Effect member: itself). */
const callOf =
  <T>(key: keyof T, args: ReadonlyArray<unknown>) =>
  (member: T) => {
    const m = member[key] as Member
    return Effect.isEffect(m) ? m : (m as AnyFn)(...args)
  }

/** Member `key` of capability `T` over `each` partition's, as `spread` says. */
const spreadMember = <T>(key: keyof T, spread: Spread<T[keyof T], T>, each: ReadonlyArray<T>, at: Partitions) => {
  if (spread.over === "custom") return spread.run(each, at)
  if (spread.over === "first") return each[0]![key]
  const run = (args: ReadonlyArray<unknown>): Effect.Effect<unknown, unknown> => {
    const call = callOf<T>(key, args)
    switch (spread.over) {
      case "every":
        return Effect.map(Effect.forEach(each, call, { concurrency: "unbounded" }), (answers) =>
          spread.merge(answers as never, args as never, at),
        )
      case "holder":
        return Effect.flatMap(
          Effect.forEach(each, (m) => Effect.result(call(m)), { concurrency: "unbounded" }),
          (answers) => spread.pick(answers as never, args as never),
        )
      case "hash": {
        // a key that is not a string is refused by the partition's own check, as on one queue
        const k = spread.key(...(args as never))
        return call(each[typeof k === "string" ? at.partitionOf(k) : 0]!)
      }
    }
  }
  // an Effect member stays an Effect; a function member stays a function of the same arguments
  return Effect.isEffect(each[0]![key]) ? Effect.suspend(() => run([])) : (...args: unknown[]) => run(args)
}

/** Capability `T` of a partitioned queue over `each` partition's own, member by member as `table` says. */
export const fanOut = <T extends object>(table: SpreadTable<T>, each: ReadonlyArray<T>, at: Partitions): T => {
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(table) as Array<keyof T & string>) {
    out[key] = spreadMember(key, table[key] as Spread<T[keyof T], T>, each, at)
  }
  return out as T
}
