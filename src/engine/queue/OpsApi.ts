/**
 * The operator's calls of a queue, declared once for the ordinary core and the partitioned
 * one (implemented in `Operations.ts`): list jobs by state page by page, drain, clean,
 * obliterate, and promote, reschedule, retry or update one job. Payloads are JSON text here.
 */
import type * as Effect from "effect/Effect"
import type { UpgradeResult } from "../admin/LayoutUpgrade.ts"
import type { ScriptFailure } from "../calls/Commands.ts"
import type {
  InvalidOptions,
  QueueClosed,
  QueueHasActiveJobs,
  RedisUnavailable,
  WrongJobState,
} from "../model/Errors.ts"
import type { ListState } from "../scripts/OpsScripts.ts"

export type { UpgradeResult } from "../admin/LayoutUpgrade.ts"
export type { CleanState, ListState } from "../scripts/OpsScripts.ts"

/** Options of `getJobs`. */
export interface ListOptions {
  /** Where to go on: the `cursor` of the previous page (opaque). Default: the first page. */
  readonly cursor?: string | undefined
  /** The most jobs in the page: 1 .. 1000, default 100. A page also stops after 4 MiB of payloads. */
  readonly count?: number | undefined
  /**
   * "asc" (default): waiting jobs the next to run first; delayed ones the soonest due first;
   * active ones the soonest lease deadline first; finished ones the oldest first. "desc": the reverse.
   */
  readonly order?: "asc" | "desc" | undefined
}

/** One job of a listing. `P` is the payload's type. */
export interface ListedJob<P = string> {
  readonly id: string
  readonly state: ListState
  /** The payload (null when the job has none stored, such as a job finished and not retained). */
  readonly payload: P | null
  /** When the job was added (ms): from its ULID id, or stored for a custom id or a tick's job (as `getJob`'s). */
  readonly addedAt: number
  /** A delayed job: when it is due (ms, Redis clock). */
  readonly dueAt?: number
  /** An active job: its lease deadline (ms, Redis clock). */
  readonly leaseDeadline?: number
  /** A completed, cancelled or dead job: when it finished (ms, Redis clock). */
  readonly finishedAt?: number
  /** The Effect face: the payload as stored when it does not decode with the queue's Schema (`payload` is then null). */
  readonly rawPayload?: string
  /** The job's name (add's `name` option); absent for a job added without one. */
  readonly name?: string
  /** As `getJob`'s: the attempt running now (active), next (waiting, delayed) or last (finished). */
  readonly attempt: number
  readonly maxAttempts: number
  /** Handler failures and lost leases so far. */
  readonly failures: number
  readonly lostLeases: number
  /**
   * The last error of a job not completed (a dead one, or one waiting or delayed after a
   * failure), cut to what an operator acts on: its reason, name, tag and message (at most
   * 512 bytes). `getJob` has the whole error and every attempt's.
   */
  readonly error?: { readonly reason?: string; readonly name?: string; readonly tag?: string; readonly message: string }
  /** A retained completed job's result, when its JSON is at most 1 KiB (else only `resultBytes`). */
  readonly result?: unknown
  /** A retained completed job's result length in bytes (0: none). */
  readonly resultBytes?: number
  /** An active job: when its run started; a retained completed job: when the run that completed it did (ms, Redis clock). */
  readonly startedAt?: number
}

/** A page of a listing. */
export interface JobPage<P = string> {
  readonly jobs: Array<ListedJob<P>>
  /** Jobs in the state now (for a partitioned queue: in the partition being read). */
  readonly total: number
  /** Pass it to get the next page; absent on the last page. */
  readonly cursor?: string
}

/** What `drain` removed, and in how many Redis calls (each bounded, see docs/operations.md). */
export interface DrainResult {
  readonly waiting: number
  readonly delayed: number
  readonly calls: number
}

/** What `clean` deleted, and in how many Redis calls. */
export interface CleanResult {
  readonly deleted: number
  readonly calls: number
}

/** What a call on one job found it in (and moved it from). */
export type MovedFrom = "waiting" | "delayed" | "completed" | "cancelled" | "dead"

/** What the operator's calls fail with: job control's errors (see QueueApi's ControlError) and their own refusals. */
export type OpsError =
  | InvalidOptions
  | QueueClosed
  | ScriptFailure
  | RedisUnavailable
  | WrongJobState
  | QueueHasActiveJobs

/** The operator's calls of a queue, as Effects; bad input fails with InvalidOptions before anything is sent. */
export interface QueueOps {
  /** A page of the jobs in `state`: O(log N + count), one Redis call (per partition read). Read-only. */
  readonly getJobs: (state: unknown, options?: unknown) => Effect.Effect<JobPage, OpsError>
  /** Remove every waiting job (and with `delayed: true` every delayed one), in bounded calls. */
  readonly drain: (options?: unknown) => Effect.Effect<DrainResult, OpsError>
  /** Delete completed, cancelled or dead jobs finished at least `olderThanMs` ago (at most `limit`), in bounded calls. */
  readonly clean: (state: unknown, options?: unknown) => Effect.Effect<CleanResult, OpsError>
  /** Delete the whole queue; refused with QueueHasActiveJobs while jobs are active unless `force`. */
  readonly obliterate: (options?: unknown) => Effect.Effect<{ readonly active: number }, OpsError>
  /**
   * Move the queue to this client's key layout while clients of both run (see
   * lua/upgrade.lua), in bounded calls; resumable: run it again after a crash.
   */
  readonly upgrade: (options?: unknown) => Effect.Effect<UpgradeResult, OpsError>
  /** Make a delayed job ready now. */
  readonly promote: (id: unknown) => Effect.Effect<MovedFrom, OpsError>
  /** Run a waiting or delayed job `delayMs` from now (0: now). */
  readonly reschedule: (id: unknown, options: unknown) => Effect.Effect<MovedFrom, OpsError>
  /** Run a completed, cancelled or dead job again with fresh attempts. */
  readonly retry: (id: unknown) => Effect.Effect<MovedFrom, OpsError>
  /** Replace the payload (JSON text, checked by the face) of a waiting, delayed or dead job. */
  readonly updatePayload: (id: unknown, payload: string) => Effect.Effect<MovedFrom, OpsError>
}
