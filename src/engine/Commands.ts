/**
 * Typed calls of the Lua scripts for one queue. Each returns an Effect whose
 * error channel says exactly what can go wrong; the scripts' KEYS are built here
 * from the pure key builders, in the order each script's header names them.
 */
import * as Effect from "effect/Effect"
import type { RedisClient } from "../redis/Client.ts"
import type { LayoutMismatch, RedisError, WrongKeyType } from "./Errors.ts"
import { KEY_NAMES, KEY_TYPES, LAYOUT_VERSION, type QueueKeys } from "./Keys.ts"
import { redisError, scriptError } from "./Replies.ts"
import { newRequestId, newWorkerId } from "./RequestId.ts"
import { type Script, Scripts } from "./Scripts.ts"
import { DEFAULT_VERIFY_LINES, DEFAULT_VERIFY_PAGE, verifyQueue } from "./Verify.ts"

/** One job as `add` sends it (already validated and serialised). */
export interface NewJob {
  readonly id: string
  readonly payload: string
  readonly delayMs: number
  readonly maxAttempts: number
  readonly dedupeKey: string
  readonly dedupeTtlMs: number
}

/** A leased job as `reserve` returns it. */
export interface Reservation {
  readonly id: string
  readonly token: number
  /** Lease deadline, ms since the epoch on the Redis clock. */
  readonly deadline: number
  readonly attempt: number
  readonly maxAttempts: number
  readonly payload: string
}

/** A lease to extend, complete or release. */
export interface LeaseRef {
  readonly id: string
  readonly token: number
}

/** A job a sweep moved to dead (its lease expired once too often). */
export interface SweptDead {
  readonly id: string
  /** The token of the lease that expired last. */
  readonly token: number
  /** The message stored in its last error (reason `lease-expired`). */
  readonly message: string
}

/** What one `sweep` call did. */
export interface SweepResult {
  readonly reclaimed: number
  readonly dead: number
  readonly promoted: number
  /** Expired dedupe keys removed. */
  readonly dedupeDropped: number
  /** Retained completed jobs deleted because the queue held more than its `keepCompleted`. */
  readonly trimmed: number
  /** True when expired leases, due delayed jobs, expired dedupe keys or retained jobs beyond keep remain: call again. */
  readonly more: boolean
  /** ms until the earliest live lease expires, or -1 when nothing is active. */
  readonly nextDeadlineMs: number
  /** The jobs this call moved to dead (`dead` of them). */
  readonly deadJobs: ReadonlyArray<SweptDead>
}

/** Counts and counters of one queue. */
export interface QueueStats {
  readonly queue: string
  readonly waiting: number
  readonly active: number
  /** Active leases past their deadline that no sweep has reclaimed yet. */
  readonly expired: number
  readonly delayed: number
  readonly dead: number
  /** Completed jobs retained (with `keepCompleted`). */
  readonly retained: number
  /** Age in ms of the job that will run next (from its ULID), or 0 when none waits. */
  readonly oldestWaitingAgeMs: number
  readonly layout: string | null
  /** Totals since the queue was created. */
  readonly counters: {
    readonly added: number
    readonly completed: number
    readonly failed: number
    readonly lostLeases: number
    readonly dead: number
    readonly released: number
    readonly retried: number
    readonly purged: number
    readonly tokens: number
    /** Jobs cancelled (0 on a queue no cancel reached). */
    readonly cancelled: number
    /** Late acknowledgements refused: a complete or fail whose lease token was no longer current (fencing at work). */
    readonly refused: number
    /** Self-fences workers reported: handlers aborted because the worker could not reach Redis to extend their lease. */
    readonly selfFenced: number
  }
}

/** A dead job with its last error. */
export interface DeadJob {
  readonly id: string
  readonly diedAt: number
  readonly error: unknown
  readonly payload: string | null
  readonly failures: number
  readonly lostLeases: number
}

/** Errors a script call can end with. */
export type ScriptFailure = RedisError | LayoutMismatch | WrongKeyType

const ENCODE = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
const ulidTime = (id: string): number | undefined => {
  if (id.length !== 26) return undefined
  let t = 0
  for (let i = 0; i < 10; i++) {
    const v = ENCODE.indexOf(id[i] as string)
    if (v < 0) return undefined
    t = t * 32 + v
  }
  return t
}

/**
 * Most leases (or jobs) one script call takes: a Lua script can `unpack` only a few
 * thousand values at once, so calls over caller-sized lists go out in chunks of this.
 */
export const SCRIPT_CHUNK = 500

/** Run `f` over consecutive chunks of `items` (one call when they fit), in order, and join the answers. */
const chunked = <I, O, E>(
  items: ReadonlyArray<I>,
  f: (part: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<O>, E>,
): Effect.Effect<ReadonlyArray<O>, E> => {
  if (items.length <= SCRIPT_CHUNK) return f(items)
  const parts: Array<ReadonlyArray<I>> = []
  for (let i = 0; i < items.length; i += SCRIPT_CHUNK) parts.push(items.slice(i, i + SCRIPT_CHUNK))
  return Effect.forEach(parts, f).pipe(Effect.map((answers) => answers.flat()))
}

/** The reply of `sweep.lua` as a {@link SweepResult}. */
const sweepResult = (r: ReadonlyArray<number | string>): SweepResult => {
  const deadJobs: SweptDead[] = []
  for (let i = 9; i + 2 < r.length; i += 3) {
    deadJobs.push({ id: String(r[i]), token: Number(r[i + 1]), message: String(r[i + 2]) })
  }
  return {
    reclaimed: Number(r[0]),
    dead: Number(r[1]),
    promoted: Number(r[2]),
    dedupeDropped: Number(r[6]),
    trimmed: Number(r[7]),
    more: r[3] === 1 || r[4] === 1 || r[8] === 1,
    nextDeadlineMs: Number(r[5]),
    deadJobs,
  }
}

/** The add script's KEYS, in the order its header names them. */
const addKeys = (k: QueueKeys): ReadonlyArray<string> => [
  k.wait,
  k.delayed,
  k.marker,
  k.meta,
  k.data,
  k.max,
  k.dedupe,
  k.dedupeid,
  k.receipts,
  k.receiptsAt,
  k.events,
]

/**
 * Add jobs in one add script call on `client` (see `add` of {@link makeCommands}); its
 * own function so that a producer can send each call through a differently bounded
 * client without building a whole command set per call.
 */
export const addJobs = (
  client: RedisClient,
  keys: QueueKeys,
  jobs: ReadonlyArray<NewJob>,
  requestId: string = newRequestId(),
): Effect.Effect<Array<string>, ScriptFailure> => {
  const args: Array<string | number> = [LAYOUT_VERSION, requestId, jobs.length]
  for (const j of jobs) args.push(j.id, j.payload, j.delayMs, j.maxAttempts, j.dedupeKey, j.dedupeTtlMs)
  return Effect.tryPromise({
    try: () => client.script(Scripts.add, addKeys(keys), args),
    catch: (e) => redisError("add script", e, client.describe, client.lastError?.()),
  }).pipe(
    Effect.flatMap((reply) => {
      const failure = scriptError(keys, reply)
      return failure ? Effect.fail(failure) : Effect.succeed((reply as Array<string>).slice(1))
    }),
  )
}

/** The scripts of one queue, as Effects. */
export const makeCommands = (client: RedisClient, keys: QueueKeys) => {
  const call = <A>(script: Script, scriptKeys: ReadonlyArray<string>, args: ReadonlyArray<string | number>) =>
    Effect.tryPromise({
      try: () => client.script(script, scriptKeys, [LAYOUT_VERSION, ...args]),
      catch: (e) => redisError(`${script.name} script`, e, client.describe, client.lastError?.()),
    }).pipe(
      Effect.flatMap((reply) => {
        const failure = scriptError(keys, reply)
        return failure ? Effect.fail(failure) : Effect.succeed(reply as A)
      }),
    )
  const k = keys
  const defaultWorkerId = newWorkerId()

  const reserveKeys = [
    k.wait,
    k.active,
    k.delayed,
    k.marker,
    k.meta,
    k.data,
    k.lease,
    k.fails,
    k.lost,
    k.max,
    k.dead,
    k.err,
    k.done,
    k.result,
    k.receipts,
    k.receiptsAt,
    k.reqs,
    k.events,
  ]
  const statsKeys = [k.wait, k.active, k.delayed, k.dead, k.done, k.meta]
  const failKeys = [k.active, k.lease, k.meta, k.wait, k.delayed, k.marker, k.dead, k.err, k.fails, k.lost, k.max]
  const sweepKeys = [...failKeys, k.dedupe, k.dedupeid, k.done, k.result, k.data, k.events]

  return {
    keys,
    client,
    /** Check once that the queue's keys are leaseq's and the layout is known. */
    open: call<[number]>(
      Scripts.open,
      KEY_NAMES.map((n) => k[n]),
      KEY_NAMES.map((n) => KEY_TYPES[n]),
    ).pipe(Effect.asVoid),

    /**
     * Add jobs in one call. `requestId` (default: a fresh random id) marks the call: a
     * second run of the same call (a re-send by the client after a lost reply) writes
     * nothing and answers the same ids. The id is drawn when this Effect is built, so
     * running the same Effect again repeats the same call. Pass an id only to repeat a call.
     */
    add: (jobs: ReadonlyArray<NewJob>, requestId: string = newRequestId()) => addJobs(client, keys, jobs, requestId),

    /**
     * Lease up to `count` jobs. `completes` (a worker's finished jobs) are acknowledged
     * first in the same call, exactly as `complete` would: `completed[i]` says which held.
     * `ids.workerId` names the calling worker (default: one id per command set) and
     * `ids.requestId` the call (default: a fresh random id, drawn when this Effect is
     * built): a second run of the worker's last call (a re-send after a lost reply, or
     * the same Effect run again) answers the same leases and statuses and changes nothing.
     */
    reserve: (
      count: number,
      leaseMs: number,
      promoteLimit: number,
      completes: ReadonlyArray<LeaseRef & { readonly result?: string }> = [],
      keep = 0,
      ids: { readonly workerId?: string; readonly requestId?: string } = {},
    ) =>
      call<Array<number | string>>(Scripts.reserve, reserveKeys, [
        ids.workerId ?? defaultWorkerId,
        ids.requestId ?? newRequestId(),
        count,
        leaseMs,
        promoteLimit,
        keep,
        completes.length,
        ...completes.flatMap((l) => [l.id, l.token, l.result ?? ""]),
      ]).pipe(
        Effect.map((r) => {
          const m = Number(r[1])
          const completed = r.slice(2, 2 + m).map((x) => x === 1)
          const jobs: Reservation[] = []
          for (let i = 2 + m; i + 5 < r.length; i += 6) {
            jobs.push({
              id: String(r[i]),
              token: Number(r[i + 1]),
              deadline: Number(r[i + 2]),
              attempt: Number(r[i + 3]),
              maxAttempts: Number(r[i + 4]),
              payload: String(r[i + 5]),
            })
          }
          return { jobs, nextDueMs: Number(r[0]), completed }
        }),
      ),

    /** Extend leases; one deadline (0: lost) per lease. Any number of leases (chunked). */
    extend: (leases: ReadonlyArray<LeaseRef>, leaseMs: number) =>
      chunked(leases, (part) =>
        call<number[]>(Scripts.extend, [k.active, k.lease, k.meta], [leaseMs, ...part.flatMap((l) => [l.id, l.token])]),
      ),

    /** Acknowledge jobs; true per job completed, false when its lease was lost. Any number (chunked). */
    complete: (items: ReadonlyArray<LeaseRef & { readonly result?: string }>, keep: number) =>
      chunked(items, (part) =>
        call<number[]>(
          Scripts.complete,
          [k.active, k.lease, k.meta, k.data, k.max, k.fails, k.lost, k.err, k.done, k.result, k.events],
          [keep, ...part.flatMap((l) => [l.id, l.token, l.result ?? ""])],
        ).pipe(Effect.map((r) => r.map((x) => x === 1))),
      ),

    fail: (
      lease: LeaseRef,
      options: { readonly delayMs: number; readonly error: string; readonly mode: "retry" | "final" | "dead" },
    ) =>
      call<[number, number?]>(
        Scripts.fail,
        [...failKeys, k.events],
        [lease.id, lease.token, options.delayMs, options.error, options.mode],
      ).pipe(Effect.map((r) => (r[0] === 1 ? ("retry" as const) : r[0] === 2 ? ("dead" as const) : ("lost" as const)))),

    /**
     * Give leased jobs back (graceful shutdown); true per job released, false when its
     * lease was lost. Any number of leases: chunks of {@link SCRIPT_CHUNK}, each atomic.
     */
    release: (leases: ReadonlyArray<LeaseRef>) =>
      chunked(leases, (part) =>
        call<number[]>(
          Scripts.release,
          [k.active, k.lease, k.meta, k.wait, k.marker, k.events],
          part.flatMap((l) => [l.id, l.token]),
        ).pipe(Effect.map((r) => r.map((x) => x === 1))),
      ),

    /** One bounded sweep call: at most `limit` of each kind of work (see lua/sweep.lua). */
    sweep: (limit: number) =>
      call<Array<number | string>>(Scripts.sweep, sweepKeys, [limit]).pipe(Effect.map(sweepResult)),

    stats: call<Array<number | string | null>>(Scripts.stats, statsKeys, []).pipe(
      Effect.map((r): QueueStats => {
        const meta: Record<string, number> = {}
        for (let i = 9; i + 1 < r.length; i += 2) meta[String(r[i])] = Number(r[i + 1])
        const oldest = typeof r[6] === "string" ? ulidTime(r[6]) : undefined
        const now = Number(r[7])
        return {
          queue: k.queue,
          waiting: Number(r[0]),
          active: Number(r[1]),
          expired: Number(r[2]),
          delayed: Number(r[3]),
          dead: Number(r[4]),
          retained: Number(r[5]),
          oldestWaitingAgeMs: oldest === undefined ? 0 : Math.max(0, now - oldest),
          layout: typeof r[8] === "string" ? r[8] : null,
          counters: {
            added: meta.added ?? 0,
            completed: meta.completed ?? 0,
            failed: meta.failed ?? 0,
            lostLeases: meta.lost ?? 0,
            dead: meta.dead ?? 0,
            released: meta.released ?? 0,
            retried: meta.retried ?? 0,
            purged: meta.purged ?? 0,
            tokens: meta.token ?? 0,
            cancelled: meta.cancelled ?? 0,
            refused: meta.refused ?? 0,
            selfFenced: meta.selfFenced ?? 0,
          },
        }
      }),
    ),

    deadList: (offset: number, count: number) =>
      Effect.tryPromise({
        try: () => client.script(Scripts.deadList, [k.dead, k.err, k.data, k.fails, k.lost], [offset, count]),
        catch: (e) => redisError("dead-list script", e, client.describe, client.lastError?.()),
      }).pipe(
        Effect.map((reply) => {
          const r = reply as Array<string | number | null>
          const jobs: DeadJob[] = []
          for (let i = 1; i + 5 < r.length; i += 6) {
            let error: unknown = r[i + 2]
            try {
              error = typeof error === "string" ? JSON.parse(error) : null
            } catch {}
            jobs.push({
              id: String(r[i]),
              diedAt: Number(r[i + 1]),
              error,
              payload: typeof r[i + 3] === "string" ? (r[i + 3] as string) : null,
              failures: Number(r[i + 4]),
              lostLeases: Number(r[i + 5]),
            })
          }
          return { total: Number(r[0]), jobs }
        }),
      ),

    deadRetry: (target: { readonly ids: ReadonlyArray<string> } | { readonly all: number }) =>
      call<Array<number | string>>(
        Scripts.deadRetry,
        [k.dead, k.wait, k.marker, k.meta, k.fails, k.lost, k.err, k.data],
        "ids" in target ? ["ids", 0, ...target.ids] : ["all", target.all],
      ).pipe(Effect.map((r) => ({ count: Number(r[0]), remaining: Number(r[1]), missing: r.slice(2).map(String) }))),

    deadPurge: (target: { readonly ids: ReadonlyArray<string> } | { readonly all: number }) =>
      call<Array<number | string>>(
        Scripts.deadPurge,
        [k.dead, k.meta, k.data, k.max, k.fails, k.lost, k.err],
        "ids" in target ? ["ids", 0, ...target.ids] : ["all", target.all],
      ).pipe(Effect.map((r) => ({ count: Number(r[0]), remaining: Number(r[1]), missing: r.slice(2).map(String) }))),

    /** Check the queue's invariants page by page (see Verify.ts). Defaults: 100 lines, pages of 100. */
    verify: (maxLines: number = DEFAULT_VERIFY_LINES, pageSize: number = DEFAULT_VERIFY_PAGE) =>
      verifyQueue(call, k, { maxLines, pageSize }),
  }
}

/** The commands of one queue. */
export type Commands = ReturnType<typeof makeCommands>
