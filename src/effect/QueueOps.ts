/**
 * The operator's calls of the Effect face's queue service: the interface its `Service`
 * extends ({@link QueueOperations}) and the members that adapt the engine's `QueueOps`
 * (src/engine/queue/OpsApi.ts) with the queue's payload codec ({@link opsMembers}).
 */
import { Effect } from "effect"
import type { InvalidPayload } from "../engine/model/Errors.ts"
import type {
  CleanResult,
  CleanState,
  DrainResult,
  JobPage,
  ListedJob,
  ListOptions,
  ListState,
  MovedFrom,
  OpsError,
  QueueOps,
  UpgradeResult,
} from "../engine/queue/OpsApi.ts"
import type { PayloadCodec } from "./Payload.ts"

export type {
  CleanResult,
  CleanState,
  DrainResult,
  JobPage,
  ListedJob,
  ListOptions,
  ListState,
  MovedFrom,
  OpsError,
  UpgradeResult,
} from "../engine/queue/OpsApi.ts"

/** The operator's calls of a queue service; `A` is the payload type. The same as the Promise face's (docs/operations.md). */
export interface QueueOperations<A> {
  /**
   * A page of the jobs in `state` with their payloads decoded (one that does not decode is
   * `null`, its text in `rawPayload`); pass `cursor` back for the next page. One Redis call,
   * O(log N + count); `count` 1 .. 1000, default 100; `order` "asc" (default) or "desc".
   */
  readonly getJobs: (state: ListState, options?: ListOptions) => Effect.Effect<JobPage<A>, OpsError>
  /** Remove every waiting job (and with `delayed: true` every delayed one), in bounded calls. */
  readonly drain: (options?: { readonly delayed?: boolean }) => Effect.Effect<DrainResult, OpsError>
  /** Delete completed, cancelled or dead jobs finished at least `olderThanMs` ago (default 0), at most `limit` (default all). */
  readonly clean: (
    state: CleanState,
    options?: { readonly olderThanMs?: number; readonly limit?: number },
  ) => Effect.Effect<CleanResult, OpsError>
  /** Delete the whole queue; fails with QueueHasActiveJobs while jobs are active, unless `force: true`. */
  readonly obliterate: (options?: { readonly force?: boolean }) => Effect.Effect<{ readonly active: number }, OpsError>
  /** Move the queue to this key layout while old and new clients run, resumable (the Promise face's `upgrade`, docs/operations.md). */
  readonly upgrade: (options?: {
    readonly pageSize?: number
    readonly force?: boolean
    readonly pollMs?: number
    readonly waitMs?: number
  }) => Effect.Effect<UpgradeResult, OpsError>
  /** Make a delayed job ready now; WrongJobState in any other state. */
  readonly promote: (id: string) => Effect.Effect<MovedFrom, OpsError>
  /** Run a waiting or delayed job `delayMs` from now (0: now); WrongJobState in any other state. */
  readonly reschedule: (id: string, options: { readonly delayMs: number }) => Effect.Effect<MovedFrom, OpsError>
  /** Run a completed, cancelled or dead job again with fresh attempts; WrongJobState in any other state. */
  readonly retry: (id: string) => Effect.Effect<MovedFrom, OpsError>
  /** Replace the payload (encoded with the queue's codec) of a waiting, delayed or dead job. */
  readonly updatePayload: (id: string, payload: A) => Effect.Effect<MovedFrom, OpsError | InvalidPayload>
}

/** The service's operator members over `ops`, payloads through `codec`. */
export const opsMembers = <A>(ops: QueueOps, codec: PayloadCodec<A>): QueueOperations<A> => ({
  getJobs: (state, options) =>
    Effect.gen(function* () {
      const page = yield* ops.getJobs(state, options)
      const jobs = yield* Effect.forEach(page.jobs, (j): Effect.Effect<ListedJob<A>> => {
        const text = j.payload
        if (text === null) return Effect.succeed({ ...j, payload: null })
        return codec.decode(text).pipe(
          Effect.map((payload): ListedJob<A> => ({ ...j, payload })),
          Effect.orElseSucceed((): ListedJob<A> => ({ ...j, payload: null, rawPayload: text })),
        )
      })
      return { ...page, jobs }
    }),
  drain: (options) => ops.drain(options),
  clean: (state, options) => ops.clean(state, options),
  obliterate: (options) => ops.obliterate(options),
  upgrade: (options) => ops.upgrade(options),
  promote: (id) => ops.promote(id),
  reschedule: (id, options) => ops.reschedule(id, options),
  retry: (id) => ops.retry(id),
  updatePayload: (id, payload) =>
    codec.encode("payload", payload).pipe(Effect.flatMap((text) => ops.updatePayload(id, text))),
})
