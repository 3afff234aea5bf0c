/**
 * How a queue call spreads over a partitioned queue's partitions, declared beside the call
 * (each capability's `*_SPREAD` table: `JobControl.ts`, `Groups.ts`, `Operations.ts`,
 * `ManualSpread.ts`; stats, sweeps and dead letters: `partition/AdminSpread.ts`) and applied
 * by the one generic fan-out, `partition/FanOut.ts`. A table is a
 * {@link SpreadTable}: one {@link Spread} per member of the capability, so a member without
 * one does not compile.
 *
 * - `first`: partition 0 answers (a setting every partition holds alike);
 * - `every`: every partition at once, the answers merged (`merge`);
 * - `holder`: every partition at once for a call on one job: the job is in exactly one, the
 *   others refuse it as unknown and write nothing; `pick` chooses the holder's answer;
 * - `hash`: the one partition the key names (`key` of the arguments: a group, a dedupe key),
 *   as `add` routes jobs by it;
 * - `custom`: a call whose spread is its own (a listing's cursor over partitions, the lease
 *   holder of a token), written in the table against every partition's member.
 */
import type * as Effect from "effect/Effect"
import type * as Result from "effect/Result"
import type { RedisClient } from "../../redis/Client.ts"
import type { Commands, ScriptFailure } from "../calls/Commands.ts"
import type { QueueClosed } from "../model/Errors.ts"
import type { QueueKeys } from "../model/Keys.ts"

/** A member of a capability: an Effect, or a function answering one. */
// biome-ignore lint/suspicious/noExplicitAny: any call shape; each table entry is checked against its own member
export type Member = Effect.Effect<any, any> | ((...args: any[]) => Effect.Effect<any, any>)

/** The arguments of a member ([] for an Effect). */
export type ArgsOf<M> = M extends (...args: infer A) => unknown ? A : []

/** What a member succeeds with. */
export type OutOf<M> = M extends (...args: never[]) => Effect.Effect<infer A, unknown>
  ? A
  : M extends Effect.Effect<infer A, unknown>
    ? A
    : never

/** What a member fails with. */
export type ErrOf<M> = M extends (...args: never[]) => Effect.Effect<unknown, infer E>
  ? E
  : M extends Effect.Effect<unknown, infer E>
    ? E
    : never

/** What a spread may use of the partitioned queue beside its partitions' members. */
export interface Partitions {
  /** The partitioned queue's own name. */
  readonly name: string
  /** Its connection, unbounded (each partition's calls are bounded by `callTimeoutMs`). */
  readonly client: RedisClient
  /** The partitions' keys and bounded calls, in index order. */
  readonly cores: ReadonlyArray<{ readonly keys: QueueKeys; readonly calls: Commands }>
  /** The partition a key (custom id, dedupe key, group) routes to, as `add` routes jobs. */
  readonly partitionOf: (key: string) => number
  /**
   * Set (or clear: null) the queue-wide rate limit or concurrency cap as a whole: a share in
   * each partition (partition/FlowSplit.ts), as a reserve is atomic in one partition only.
   */
  readonly setLimit: (change: LimitChange) => Effect.Effect<void, ScriptFailure | QueueClosed>
  /** Fails with QueueClosed once the queue is closed (checked when it runs). */
  readonly open: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E | QueueClosed>
}

/** A change of the queue-wide rate limit or concurrency cap (null: cleared). */
export type LimitChange =
  | { readonly limit: "rate"; readonly max: number | null; readonly perMs: number }
  | { readonly limit: "concurrency"; readonly max: number | null }

/** How member `M` of capability `T` spreads over the partitions (see the top of this file). */
export type Spread<M, T> =
  | { readonly over: "first" }
  | {
      readonly over: "every"
      readonly merge: (answers: ReadonlyArray<OutOf<M>>, args: ArgsOf<M>, at: Partitions) => OutOf<M>
    }
  | {
      readonly over: "holder"
      readonly pick: (
        answers: ReadonlyArray<Result.Result<OutOf<M>, ErrOf<M>>>,
        args: ArgsOf<M>,
      ) => Effect.Effect<OutOf<M>, ErrOf<M>>
    }
  | { readonly over: "hash"; readonly key: (...args: ArgsOf<M>) => unknown }
  | { readonly over: "custom"; readonly run: (each: ReadonlyArray<T>, at: Partitions) => M }

/** One {@link Spread} for every member of capability `T`. */
export type SpreadTable<T> = { readonly [K in keyof T]-?: Spread<T[K], T> }

/** `every`'s merge: true when any partition answered true. */
export const anyTrue = (answers: ReadonlyArray<boolean>): boolean => answers.some((x) => x)

/** `every`'s merge of a call answering nothing. */
export const none = (): void => undefined

/** `every`'s merge: the first answer that is not undefined (the partition that had it). */
export const firstFound = <A>(answers: ReadonlyArray<A | undefined>): A | undefined => answers.find((a) => a)

/** The field-by-field sums of answers of one shape (every field a count). */
export const sums = <A extends { readonly [K in keyof A]: number }>(answers: ReadonlyArray<A>): A => {
  const out: Record<string, number> = {}
  for (const a of answers) for (const [k, v] of Object.entries(a) as Array<[string, number]>) out[k] = (out[k] ?? 0) + v
  return out as A
}
