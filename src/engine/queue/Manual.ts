/**
 * Manual processing: leasing jobs and settling them by id and token, for a consumer that is
 * not a `Worker` (a process in another runtime, a pull loop of one's own). The same scripts
 * as a worker's, so the same fencing (a stale token changes nothing and is refused with
 * {@link LeaseLost}, or {@link JobCancelled} when a cancel revoked the lease), the same
 * attempts, dead-letter rules, events and counters.
 *
 * Re-sends: the queue is one consumer of its own (an id like a worker's), and numbers its
 * reserve calls "1", "2", …; reserve.lua keeps a record per consumer and call number mod 4
 * (see its header), and the consumer id carries the call number / 4 mod 16 as a suffix, so
 * the record of call n is replaced only by call n + 64. A call re-sent after a lost reply
 * (by the connection, or the same Effect run again) answers the same leases and leases
 * nothing more, unless 64 later reserves of the same queue object ran meanwhile.
 *
 * Its complete, fail and release calls go on ack lanes (model/AckLanes.ts): one re-sent
 * after a lost reply answers what its first run did (not `LeaseLost`).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { Commands, Reservation, ScriptFailure } from "../calls/Commands.ts"
import { lookups } from "../calls/Lookups.ts"
import { payloadSizes } from "../calls/PayloadRefs.ts"
import { type AckLanes, makeAckLanes } from "../model/AckLanes.ts"
import { DEFAULT_BACKOFF } from "../model/Backoff.ts"
import { splitPayload } from "../model/Carrier.ts"
import {
  InvalidOptions,
  JobCancelled,
  JobTimedOut,
  LeaseLost,
  QueueClosed,
  type RedisUnavailable,
} from "../model/Errors.ts"
import { errorJson } from "../model/Failure.ts"
import type { QueueKeys } from "../model/Keys.ts"
import { newWorkerId } from "../model/RequestId.ts"
import { type Checked, checkInteger, checkIntegerOr, checkKnownKeys, checkObject, Limits } from "../model/Validate.ts"
import { RESERVE_MAX_JOBS, RESERVE_PROMOTE_LIMIT } from "../scripts/LeaseScripts.ts"
import { readOnly } from "./Adding.ts"

/** Options of a manual `reserve`. */
export interface ReserveOptions {
  /** Most jobs to lease in this call. Default 1; 1–500. Fewer (or none) when fewer are ready. */
  readonly count?: number | undefined
  /** The lease, from now on the Redis clock: past it a sweep hands the job to someone else. Default 30 000; 10 ms – 24 h. */
  readonly leaseMs?: number | undefined
}

/** Options of a manual `fail`. */
export interface FailOptions {
  /**
   * false: the job goes to dead now (its failure counted). Default true: it is retried after
   * its backoff (its own, else `delayMs`, else the default backoff: exponential from 1 s)
   * unless its attempts are used up.
   */
  readonly retry?: boolean | undefined
  /** The retry's delay in ms, for a job without a backoff of its own. Default: the default backoff's. 0 – 365 days. */
  readonly delayMs?: number | undefined
}

/** A job leased by a manual `reserve`: settle it with its `id` and `token` before `deadline`. */
export interface ReservedJob<P> {
  readonly id: string
  /** The lease's fencing token: give it to complete, fail, extend and release (and to your own downstream writes). */
  readonly token: number
  readonly payload: P
  /** 1 on the first run; +1 after each failure or lost lease. */
  readonly attempt: number
  readonly maxAttempts: number
  /** When the lease ends unless extended: ms since the epoch, on the Redis clock. */
  readonly deadline: number
  /** The job's name (add's `name` option); absent for a job added without one. */
  readonly name?: string
}

/** What any manual call can fail with (as job control's calls: `ControlError` of QueueApi.ts). */
export type ControlError = InvalidOptions | QueueClosed | ScriptFailure | RedisUnavailable

/** What a manual call about a leased job can fail with besides the queue's usual errors. */
export type LeaseRefused = LeaseLost | JobCancelled | JobTimedOut

/** The manual-processing calls of a queue; payloads as stored (JSON text). */
export interface ManualProcessing {
  readonly reserve: (options?: ReserveOptions) => Effect.Effect<ReadonlyArray<ReservedJob<string>>, ControlError>
  readonly complete: (id: string, token: number, result?: string) => Effect.Effect<void, ControlError | LeaseRefused>
  readonly fail: (
    id: string,
    token: number,
    error: unknown,
    options?: FailOptions,
  ) => Effect.Effect<"retry" | "dead", ControlError | LeaseRefused>
  /** The new deadline (ms, Redis clock). */
  readonly extend: (id: string, token: number, leaseMs: number) => Effect.Effect<number, ControlError | LeaseRefused>
  readonly release: (id: string, token: number) => Effect.Effect<void, ControlError | LeaseRefused>
  /**
   * @internal A leased job whose payload the face could not decode goes to dead at once with
   * reason "invalid-payload", without spending an attempt (as a worker does); never fails.
   */
  readonly refuse: (job: ReservedJob<string>, message: string) => Effect.Effect<void>
}

/** Default lease of a manual reserve (ms). */
export const DEFAULT_MANUAL_LEASE_MS = 30_000

const checkReserve = (value: unknown): Checked<{ readonly count: number; readonly leaseMs: number }> =>
  Result.gen(function* () {
    const o = yield* checkObject("options", value)
    yield* checkKnownKeys("options", o, ["count", "leaseMs"])
    const count = yield* checkIntegerOr("count", o.count, 1, { min: 1, max: RESERVE_MAX_JOBS })
    const leaseMs = yield* checkIntegerOr("leaseMs", o.leaseMs, DEFAULT_MANUAL_LEASE_MS, Limits.leaseMs)
    return { count, leaseMs }
  })

const checkToken = (token: unknown): Checked<number> =>
  checkInteger("token", token, { min: 1, max: Number.MAX_SAFE_INTEGER })

const checkFail = (value: unknown): Checked<{ readonly retry: boolean; readonly delayMs: number | undefined }> =>
  Result.gen(function* () {
    const o = yield* checkObject("options", value)
    yield* checkKnownKeys("options", o, ["retry", "delayMs"])
    if (o.retry !== undefined && typeof o.retry !== "boolean") {
      return yield* Result.fail(new InvalidOptions({ field: "retry", value: o.retry, reason: "must be true or false" }))
    }
    const delayMs = o.delayMs === undefined ? undefined : yield* checkInteger("delayMs", o.delayMs, Limits.delayMs)
    return { retry: o.retry !== false, delayMs }
  })

const checkId = (id: unknown): Checked<string> =>
  typeof id === "string" && id.length > 0 && id.length <= 128
    ? Result.succeed(id)
    : Result.fail(new InvalidOptions({ field: "id", value: id, reason: "must be a job id, as reserve answered it" }))

/** `f` of the checked id and token (then the rest), or the {@link InvalidOptions} of a bad one, before anything is sent. */
export const leased = <A, E>(id: unknown, token: unknown, f: (id: string, token: number) => Effect.Effect<A, E>) =>
  Effect.suspend((): Effect.Effect<A, E | InvalidOptions> => {
    const i = checkId(id)
    if (Result.isFailure(i)) return Effect.fail(i.failure)
    const t = checkToken(token)
    return Result.isFailure(t) ? Effect.fail(t.failure) : f(i.success, t.success)
  })

/** What manual processing needs of one queue's core. */
export interface ManualQueue {
  readonly name: string
  readonly keys: QueueKeys
  /** The queue's bounded calls. */
  readonly calls: Commands
  readonly isClosed: () => boolean
}

/**
 * Run a call on a lane of `lanes`: once answered the lane is free; a call that failed or
 * timed out may still be sent (ioredis re-sends it), so its lane is not used again.
 */
const laneRunner =
  (lanes: AckLanes) =>
  <A, E>(f: (lane: string) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.suspend(() => {
      const lane = lanes.take()
      return Effect.tap(f(lane), () => Effect.sync(() => lanes.give(lane)))
    })

/** Manual processing on one queue, each call bounded by the queue's `callTimeoutMs`. */
export const makeManual = (core: ManualQueue): ManualProcessing => {
  const { calls, name } = core
  const look = lookups(calls.client, core.keys)
  const consumer = newWorkerId()
  // complete, fail and release each on a lane of their own: a re-send answers what the call did
  const onLane = laneRunner(makeAckLanes(consumer))
  const reserves = consumerReserves(calls, consumer)
  const open = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E | QueueClosed> =>
    Effect.suspend(
      (): Effect.Effect<A, E | QueueClosed> =>
        core.isClosed() ? Effect.fail(new QueueClosed({ queue: name })) : effect,
    )
  // a refusal: the cancel that revoked the lease, else a lost lease
  const refused = (jobId: string, token: number): Effect.Effect<never, ControlError | LeaseRefused> =>
    readOnly(look.isCancelled(jobId)).pipe(
      Effect.flatMap((cancelled) =>
        Effect.fail(
          cancelled ? new JobCancelled({ queue: name, jobId, token }) : new LeaseLost({ queue: name, jobId, token }),
        ),
      ),
    )
  return {
    reserve: (options) => {
      const checked = checkReserve(options)
      if (Result.isFailure(checked)) return Effect.fail(checked.failure)
      return open(reserves(checked.success))
    },
    complete: (id, token, result) =>
      leased(id, token, (jobId, tok) =>
        open(
          Effect.gen(function* () {
            // retained (with its result) as the queue's retention says, as a worker's complete is
            const [ok] = yield* onLane((lane) =>
              calls.complete([{ id: jobId, token: tok, result: result ?? "" }], lane),
            )
            if (!ok) return yield* refused(jobId, tok)
          }),
        ),
      ),
    fail: (id, token, error, options) =>
      leased(id, token, (jobId, tok) => {
        const o = checkFail(options)
        if (Result.isFailure(o)) return Effect.fail(o.failure)
        const { retry, delayMs } = o.success
        const backoff = delayMs === undefined ? JSON.stringify(DEFAULT_BACKOFF) : undefined
        const sent = {
          delayMs: delayMs ?? 0,
          error: errorJson(error),
          mode: retry ? "retry" : "final",
          backoff,
        } as const
        return open(onLane((lane) => calls.fail({ id: jobId, token: tok }, { ...sent, lane }))).pipe(
          Effect.flatMap((outcome) => (outcome === "lost" ? refused(jobId, tok) : Effect.succeed(outcome))),
        )
      }),
    extend: (id, token, leaseMs) =>
      leased(id, token, (jobId, tok) => {
        const ms = checkInteger("leaseMs", leaseMs, Limits.leaseMs)
        if (Result.isFailure(ms)) return Effect.fail(ms.failure)
        return open(calls.extend([{ id: jobId, token: tok }], ms.success)).pipe(
          Effect.flatMap(([d = 0]) => {
            if (d > 0) return Effect.succeed(d)
            if (d === -2) return Effect.fail(new JobTimedOut({ queue: name, jobId, token: tok, timeoutMs: 0 }))
            return refused(jobId, tok)
          }),
        )
      }),
    refuse: (job, message) =>
      Effect.ignore(calls.fail(job, { delayMs: 0, error: errorJson(message, "invalid-payload"), mode: "dead" })),
    release: (id, token) =>
      leased(id, token, (jobId, tok) =>
        open(onLane((lane) => calls.release([{ id: jobId, token: tok }], lane))).pipe(
          Effect.flatMap(([ok]) => (ok ? Effect.void : refused(jobId, tok))),
        ),
      ),
  }
}

/**
 * The reserve calls of the consumer `consumer`, numbered "1", "2", … when each Effect is built
 * (running one again is a re-send of the same call, see the module's comment). After a call
 * that leased a large payload, the next reads large payloads by reference (calls/PayloadRefs.ts).
 */
const consumerReserves = (calls: Commands, consumer: string) => {
  let calln = 0
  const sizes = payloadSizes()
  return ({ count, leaseMs }: { readonly count: number; readonly leaseMs: number }) => {
    const n = ++calln
    const ids = {
      workerId: `${consumer}.${Math.floor(n / 4) % 16}`,
      requestId: String(n),
      timeoutMs: 0,
      refAt: sizes.refAt(),
    }
    return calls.reserve(count, leaseMs, RESERVE_PROMOTE_LIMIT, [], ids).pipe(
      Effect.map((r) => {
        sizes.leased(r.jobs)
        return r.jobs.map(reservedJob)
      }),
    )
  }
}

const reservedJob = (r: Reservation): ReservedJob<string> => {
  const { payload, name } = splitPayload(r.payload)
  return {
    id: r.id,
    token: r.token,
    payload,
    attempt: r.attempt,
    maxAttempts: r.maxAttempts,
    deadline: r.deadline,
    ...(name === undefined ? {} : { name }),
  }
}
