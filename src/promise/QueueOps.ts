/**
 * The operator's calls of the Promise face's {@link Queue} (one of the call groups it is
 * composed of): list jobs by state, drain, clean, obliterate, and promote, reschedule, retry
 * or update one job. Each adapts the engine's `QueueOps` (src/engine/queue/OpsApi.ts).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { InvalidPayload } from "../engine/model/Errors.ts"
import type { Checked } from "../engine/model/Validate.ts"
import type { AnyQueue } from "../engine/partition/Queue.ts"
import type {
  CleanResult,
  CleanState,
  DrainResult,
  JobPage,
  ListOptions,
  ListState,
  MovedFrom,
  UpgradeResult,
} from "../engine/queue/OpsApi.ts"

export type {
  CleanResult,
  CleanState,
  DrainResult,
  JobPage,
  ListedJob,
  ListOptions,
  ListState,
  MovedFrom,
  UpgradeResult,
} from "../engine/queue/OpsApi.ts"

/** A page whose payloads are parsed as JSON (a payload that is not JSON is kept as stored). */
const parsedPage = <T>(page: JobPage): JobPage<T> => ({
  ...page,
  jobs: page.jobs.map((j) => {
    if (j.payload === null) return { ...j, payload: null }
    try {
      return { ...j, payload: JSON.parse(j.payload) as T }
    } catch {
      return { ...j, payload: j.payload as T }
    }
  }),
})

/** The operator's calls; `T` is the payload type. See docs/operations.md. */
export abstract class QueueOperations<T> {
  /** @internal */
  abstract readonly queue: AnyQueue
  /** @internal The payload as JSON text, checked against the queue's `maxPayloadBytes`. */
  abstract encodeText(field: string, payload: unknown): Checked<string, InvalidPayload>

  /**
   * A page of the jobs in `state` (waiting, delayed, active, completed, cancelled, dead) with
   * their payloads: `{ jobs, total, cursor }`; pass `cursor` back for the next page (absent on
   * the last). `count` 1 .. 1000 (default 100), `order` "asc" (default) or "desc". One Redis
   * call, O(log N + count). Jobs that change state while you page may be listed twice or not at
   * all. Completed and cancelled jobs are listed while retained. Partitioned: one partition after another.
   */
  getJobs(state: ListState, options: ListOptions = {}): Promise<JobPage<T>> {
    return Effect.runPromise(this.queue.ops.getJobs(state, options).pipe(Effect.map(parsedPage<T>)))
  }

  /**
   * Remove every waiting job, and with `delayed: true` every delayed one, for good (their data,
   * and a dedupe key held until they finish): `{ waiting, delayed, calls }`. In calls of at most
   * 1,000 jobs each; jobs added meanwhile may stay. Active jobs are not touched.
   */
  drain(options: { readonly delayed?: boolean } = {}): Promise<DrainResult> {
    return Effect.runPromise(this.queue.ops.drain(options))
  }

  /**
   * Delete `state`'s jobs (completed, cancelled or dead) that finished at least `olderThanMs`
   * ago (default 0: all), at most `limit` (default: no limit; per partition), oldest first, with
   * their data and results: `{ deleted, calls }`, in calls of at most 1,000 jobs each.
   */
  clean(
    state: CleanState,
    options: { readonly olderThanMs?: number; readonly limit?: number } = {},
  ): Promise<CleanResult> {
    return Effect.runPromise(this.queue.ops.clean(state, options))
  }

  /**
   * Delete the whole queue: jobs in every state, counters, events, schedules, the worker registry. Rejects
   * with `QueueHasActiveJobs` while jobs are active, unless `force: true`: then their leases are
   * revoked (their late complete or fail is refused). One Redis call per partition.
   */
  obliterate(options: { readonly force?: boolean } = {}): Promise<{ readonly active: number }> {
    return Effect.runPromise(this.queue.ops.obliterate(options))
  }

  /**
   * Move the queue to this leaseq's key layout (2) while producers and workers of the old
   * (1) and the new version run: bounded calls (`pageSize` entries each, default 500), the
   * state kept in the queue, so running it again after a crash resumes. Waits (`waitMs`,
   * default 60 s, looking every `pollMs`, default 1 s) while workers of layout 1 are live,
   * then answers `done: false` and `waitingFor` (their ids); `force: true` moves on anyway
   * (their held jobs are then retried as a crashed worker's). Once done, layout 1 clients are
   * refused with LayoutMismatch. See docs/operations.md, "Upgrading the key layout".
   */
  upgrade(
    options: {
      readonly pageSize?: number
      readonly force?: boolean
      readonly pollMs?: number
      readonly waitMs?: number
    } = {},
  ): Promise<UpgradeResult> {
    return Effect.runPromise(this.queue.ops.upgrade(options))
  }

  /** Make delayed job `id` ready now (at the back of the waiting jobs). Rejects with `WrongJobState` in any other state. */
  promote(id: string): Promise<MovedFrom> {
    return Effect.runPromise(this.queue.ops.promote(id))
  }

  /** Run waiting or delayed job `id` `delayMs` from now (0: ready now). Rejects with `WrongJobState` in any other state. */
  reschedule(id: string, options: { readonly delayMs: number }): Promise<MovedFrom> {
    return Effect.runPromise(this.queue.ops.reschedule(id, options))
  }

  /**
   * Run completed, cancelled or dead job `id` again with fresh attempts (its failures, lost
   * leases, last error and result cleared), at the back of the waiting jobs. Resolves to the
   * state it was in; rejects with `WrongJobState` in any other state (or when it is no longer retained).
   */
  retry(id: string): Promise<MovedFrom> {
    return Effect.runPromise(this.queue.ops.retry(id))
  }

  /** Replace the payload of waiting, delayed or dead job `id`. Rejects with `WrongJobState` in any other state. */
  updatePayload(id: string, payload: T): Promise<MovedFrom> {
    return Effect.runPromise(
      Effect.suspend((): Effect.Effect<MovedFrom, unknown> => {
        const text = this.encodeText("payload", payload)
        return Result.isFailure(text) ? Effect.fail(text.failure) : this.queue.ops.updatePayload(id, text.success)
      }),
    )
  }
}
