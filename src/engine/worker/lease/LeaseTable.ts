/**
 * The leases a worker holds, their heartbeat and their self-fencing.
 *
 * - Heartbeat: every `heartbeatMs`, one `extend` call for all held leases. A lease the
 *   server reports lost is marked lost at once: its handler is aborted and never acks.
 * - Self-fencing: each lease has a local deadline = (when the last successful extend,
 *   or the reserve, was *sent*) + {@link fenceAfter}: two heartbeat periods and a half
 *   (at least half the lease, at most leaseMs − 2 %), on the local monotonic clock. So two
 *   consecutive heartbeats that fail (or hang) abort the handler; with the default
 *   heartbeat a sixth of the lease is left to spare.
 * - Server-side grace: reserve and extend ask the server for leaseMs + graceMs, so a
 *   sweep (in a worker or from cron) reclaims a lease only graceMs after the deadline
 *   the worker itself counts on: a process stalled at that moment (GC, a starved CPU)
 *   still finds its job unclaimed when it wakes up and fences itself.
 * - The table is keyed by fencing token, so two leases on one job (a newer reservation
 *   of a job whose older lease has not ended here yet) never overwrite each other.
 * - The heartbeat carries what a handler reported with `job.progress` since the last one,
 *   and the worker's registry record (sent also when no lease is held). A lease the server
 *   says was cancelled, or reached its timeout limit, ends with that reason.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { type Commands, extendAnswer, type ScriptFailure } from "../../calls/Commands.ts"
import { JobCancelled, JobTimedOut, LeaseLost, RedisUnavailable } from "../../model/Errors.ts"
import type { Job } from "../../model/HandlerJob.ts"
import type { WorkerRecord } from "../../model/Registry.ts"
import type { SpanHandle } from "../../telemetry/Spans.ts"
import { type LeaseEnd, type LeaseState, leaseTo } from "./LeaseState.ts"

export type { LeaseEnd } from "./LeaseState.ts"

/** Why a lease ended that the heartbeat or the fence found (not a shutdown). */
export type LeaseEndFound = Exclude<LeaseEnd, "shutdown">

/** One lease this worker holds. */
export interface Held {
  readonly id: string
  readonly token: number
  readonly attempt: number
  readonly maxAttempts: number
  /** The run's timeout (ms; absent or 0 for none). */
  readonly timeoutMs?: number
  /** The job its handler runs, once decoded (the timeout's failure is reported with it). */
  job?: Job<unknown>
  /** JSON text of the latest `job.progress` value not yet sent with a heartbeat. */
  progress?: string | undefined
  /** Local monotonic ms before which the lease is surely still ours. */
  localDeadline: number
  /** The handler's abort controller, made when its signal is first read (see {@link signalOf}). */
  controller: AbortController | undefined
  /** Why the lease ended, for a signal first read after that (set when it ends). */
  abortReason?: unknown
  /** The handler's fiber, once it runs (none for a job run without one: PlainRun.ts). */
  fiber: Fiber.Fiber<unknown, unknown> | undefined
  /**
   * Where the lease is in its life (LeaseState.ts: held, settling, acknowledged, ended with
   * a reason, released, overrun); changed only by `leaseTo`.
   */
  state: LeaseState
  /** The span of the job's current step (process, then settle), when a tracer records it. */
  span?: SpanHandle | undefined
}

/**
 * The abort signal of a lease's handler. Made on first read (most handlers never read it,
 * and an AbortController per job is a cost); read after the lease ended, it is already aborted.
 */
export const signalOf = (h: Held): AbortSignal => {
  if (h.controller === undefined) {
    h.controller = new AbortController()
    if (h.state.ended) h.controller.abort(h.abortReason)
  }
  return h.controller.signal
}

/** Local monotonic clock in ms. */
export const monotonicNow = (): number => performance.now()

/** The smallest margin kept before the server's deadline: 2 % of the lease, at least 5 ms. */
export const fenceMargin = (leaseMs: number): number => Math.max(5, Math.floor(leaseMs * 0.02))

/**
 * How long after the send of the last successful extend (or reserve) the worker counts a
 * lease as still its own: 2.5 heartbeat periods, so that two consecutive heartbeats must
 * fail before the handler is aborted; never less than half the lease (a very short
 * heartbeat must not turn one slow extend into an abort), and at most
 * leaseMs − {@link fenceMargin}. With the default heartbeat (leaseMs / 3): 5/6 of the lease.
 */
export const fenceAfter = (leaseMs: number, heartbeatMs: number): number =>
  Math.min(leaseMs - fenceMargin(leaseMs), Math.max(Math.floor(leaseMs / 2), Math.floor(heartbeatMs * 2.5)))

/** Most leases per extend call (keeps each script call short). */
export const EXTEND_CHUNK = 250

/**
 * The table of held leases, keyed by fencing token (tokens never repeat within a queue).
 * `newest` keeps, per job id, the lease with the highest token, to spot a job that was
 * reserved again while an older lease on it had not yet ended here.
 */
export const makeLeaseTable = () => {
  const held = new Map<number, Held>()
  const newest = new Map<string, Held>()

  /** End a held lease early: abort its signal and interrupt its handler (without waiting). */
  const end = (h: Held, why: LeaseEnd, reason: unknown): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (!leaseTo(h, "end", why)) return Effect.void
      h.abortReason = reason
      h.controller?.abort(reason)
      const fiber = h.fiber
      return fiber ? Effect.forkDetach(Fiber.interrupt(fiber)).pipe(Effect.asVoid) : Effect.void
    })

  return {
    held,
    /**
     * Add a lease. Returns the older lease on the same job that it supersedes, if that one
     * is still held (not settling, not ended): the server gave the job a newer token, so the
     * older lease is surely lost, and the caller ends it. (A settling lease is left to the
     * answer of its complete/fail, which the newer token makes a refusal.)
     */
    add: (h: Held): Held | undefined => {
      held.set(h.token, h)
      const other = newest.get(h.id)
      if (other === undefined || other.token < h.token) newest.set(h.id, h)
      const older = other === undefined ? undefined : other.token < h.token ? other : h
      return older?.state.phase === "held" ? older : undefined
    },
    /** Remove this lease (and only this one: a newer lease on the same job stays). */
    remove: (h: Held) => {
      if (held.get(h.token) === h) held.delete(h.token)
      if (newest.get(h.id) === h) newest.delete(h.id)
    },
    /** Leases still held: waiting, or their handler runs (not settling, not ended). */
    live: (): Held[] => [...held.values()].filter((h) => h.state.phase === "held"),
    /** Leases to heartbeat: those not ended, and those ended by shutdown whose handler is still winding down. */
    heartbeated: (): Held[] =>
      [...held.values()].filter((h) => h.state.ended === undefined || h.state.ended === "shutdown"),
    end,
  }
}

/** A lease table. */
export type LeaseTable = ReturnType<typeof makeLeaseTable>

/** Options of the heartbeat and fence loops. */
export interface HeartbeatOptions {
  readonly queue: string
  readonly leaseMs: number
  readonly heartbeatMs: number
  /** The lease length asked of the server: leaseMs + the sweep grace. */
  readonly serverLeaseMs: number
  /** A lease the server says is gone, cancelled or at its timeout limit (or that was self-fenced). */
  readonly onEnd: (h: Held, why: LeaseEndFound) => void
  readonly onError: (e: ScriptFailure) => void
  /** Told each extend call's round trip, in ms. */
  readonly onRoundTrip?: ((ms: number) => void) | undefined
  /** Told when the connection was replaced as silent (a heartbeat sent on it got no reply). */
  readonly onReplaced?: (() => void) | undefined
  /**
   * The worker's registry record to send with this heartbeat (`riding`: leases are extended
   * in the same call), or undefined to send none; told when one was stored.
   */
  readonly registry?: {
    readonly next: (riding: boolean) => WorkerRecord | undefined
    readonly sent: (record: WorkerRecord) => void
  }
}

/** End a lease the server did not extend, with the reason it gave. */
const endUnextended = (table: LeaseTable, h: Held, answer: "lost" | "cancelled" | "timeout", queue: string) => {
  const ref = { queue, jobId: h.id, token: h.token }
  if (answer === "cancelled") return table.end(h, "cancelled", new JobCancelled(ref))
  if (answer === "timeout") return table.end(h, "timeout", new JobTimedOut({ ...ref, timeoutMs: h.timeoutMs ?? 0 }))
  return table.end(h, "lease-lost", new LeaseLost(ref))
}

/** An extended lease gets its new local deadline; one the server did not extend ends (if still held: not settling or ended). */
const applyExtendAnswer = (
  table: LeaseTable,
  options: HeartbeatOptions,
  h: Held,
  answer: ReturnType<typeof extendAnswer>,
  local: number,
) =>
  Effect.gen(function* () {
    if (typeof answer === "number") {
      h.localDeadline = local
    } else if (h.state.phase === "held") {
      yield* endUnextended(table, h, answer, options.queue)
      options.onEnd(h, answer === "lost" ? "lease-lost" : answer)
    }
  })

/**
 * Take the server's answers to one extend call: an extended lease gets its new local
 * deadline (`local`); one the server did not extend ends with the reason it gave.
 * `sent` is the progress each lease carried in the call.
 */
const applyExtendAnswers = (
  table: LeaseTable,
  options: HeartbeatOptions,
  chunk: ReadonlyArray<Held>,
  sent: ReadonlyArray<Held["progress"]>,
  answers: ReadonlyArray<number>,
  local: number,
) =>
  Effect.gen(function* () {
    for (let j = 0; j < chunk.length; j++) {
      const h = chunk[j]!
      // progress sent is stored (or its job is gone): clear it unless a newer value came meanwhile
      if (h.progress === sent[j]) h.progress = undefined
      yield* applyExtendAnswer(table, options, h, extendAnswer(answers[j] ?? 0), local)
    }
  })

/** One extend call for `chunk`, carrying `record` when given (told stored once answered). */
const extendChunk = (
  table: LeaseTable,
  commands: Commands,
  options: HeartbeatOptions,
  chunk: ReadonlyArray<Held>,
  record: WorkerRecord | undefined,
) =>
  Effect.gen(function* () {
    const sent = chunk.map((h) => h.progress)
    const sentAt = monotonicNow()
    const answers = yield* commands.extend(chunk, options.serverLeaseMs, record)
    options.onRoundTrip?.(monotonicNow() - sentAt)
    if (record) options.registry?.sent(record)
    const local = sentAt + fenceAfter(options.leaseMs, options.heartbeatMs)
    yield* applyExtendAnswers(table, options, chunk, sent, answers, local)
  })

/**
 * One heartbeat: extend every live lease, in chunks of {@link EXTEND_CHUNK}, each carrying
 * its handler's new progress; the worker's record rides the first chunk (or goes alone).
 */
export const heartbeatOnce = (table: LeaseTable, commands: Commands, options: HeartbeatOptions) =>
  Effect.gen(function* () {
    const leases = table.heartbeated()
    const record = options.registry?.next(leases.length > 0)
    if (leases.length === 0 && record) {
      yield* commands.extend([], options.serverLeaseMs, record)
      options.registry?.sent(record)
    }
    for (let i = 0; i < leases.length; i += EXTEND_CHUNK) {
      yield* extendChunk(table, commands, options, leases.slice(i, i + EXTEND_CHUNK), i === 0 ? record : undefined)
    }
  })

/**
 * The heartbeat loop: forever, one extend call every `heartbeatMs` (at a fixed rate: a slow
 * heartbeat does not push the next one back); errors are reported and the fence takes over.
 * A heartbeat with no reply within `leaseMs` is given up and reported too (Redis stalled,
 * or the connection went silent, then replaced): a worker whose leases are being
 * self-fenced says why, and does not wait on a dead connection until TCP gives up.
 */
export const heartbeatLoop = (table: LeaseTable, commands: Commands, options: HeartbeatOptions) =>
  Effect.gen(function* () {
    let last = monotonicNow()
    while (true) {
      yield* Effect.sleep(Math.max(1, Math.round(last + options.heartbeatMs - monotonicNow())))
      last = monotonicNow()
      const wasReady = commands.client.status() === "ready"
      // an error reply is an answer (reported); none within leaseMs is silence
      const answered = yield* heartbeatOnce(table, commands, options).pipe(
        Effect.timeoutOption(options.leaseMs),
        Effect.catch((e) => Effect.sync(() => Option.some(options.onError(e)))),
      )
      if (Option.isNone(answered)) options.onError(noHeartbeatReply(commands, options, wasReady))
    }
  })

/**
 * A heartbeat given up after `leaseMs` without a reply: reported, and when it was sent on
 * a ready connection, that connection is taken for silent (half-open) and replaced, so the
 * calls after it (reserves, acks: sent again, see Reserve.ts and Acks.ts) go on a live one.
 */
const noHeartbeatReply = (commands: Commands, options: HeartbeatOptions, wasReady: boolean) => {
  const replaced = wasReady && commands.client.replaceSilent?.() === true
  if (replaced) options.onReplaced?.()
  return new RedisUnavailable({
    reason:
      `no reply to a heartbeat within ${options.leaseMs} ms (leaseMs): Redis is stalled or the connection ` +
      `went silent (half-open); leases not extended in time are self-fenced` +
      (replaced ? "; the connection was dropped and a new one opened" : ""),
    server: commands.client.describe,
  })
}
