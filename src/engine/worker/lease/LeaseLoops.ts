/**
 * Keeping a worker's leases: the heartbeat loop extends every lease the worker holds in one
 * call per `heartbeatMs` (it also carries progress and the registry record, and reports a
 * cancelled or timed-out lease; a heartbeat with no reply within `leaseMs` is reported, and
 * its connection replaced when it was ready), and the fence loop aborts a handler whose lease
 * it could not keep; here both get the worker's settings and hooks (`leaseLoops`), and the
 * worker's first registry record is written at start (`register`). A lease the server says
 * was cancelled, or reached its timeout limit, ends with that reason.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type Commands, extendAnswer, type ScriptFailure } from "../../calls/Commands.ts"
import { JobCancelled, JobTimedOut, LeaseLost, RedisUnavailable } from "../../model/Errors.ts"
import type { WorkerRecord } from "../../model/Registry.ts"
import { heartbeatTelemetry } from "../../telemetry/WorkerTelemetry.ts"
import type { LeaseDeps } from "./LeaseDeps.ts"
import { identity, leaseEnded } from "./LeaseGrant.ts"
import { EXTEND_CHUNK, fenceAfter, type Held, type LeaseEndFound, type LeaseTable, monotonicNow } from "./LeaseTable.ts"

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

/**
 * A lease the heartbeat or the fence ended: a cancel is told on its own hook; a lease at
 * the server's timeout limit goes to `onTimeout` (failed as a timeout, see Steer.ts); the
 * rest are lost leases.
 */
const onEnd = (ctx: LeaseDeps, h: Held, why: LeaseEndFound, onTimeout: (h: Held) => void): void => {
  if (why === "cancelled") ctx.hooks.cancelled?.({ id: h.id, token: h.token })
  else if (why === "timeout") onTimeout(h)
  else leaseEnded(ctx, h, why)
}

/** Longest wait for the worker's first registry record at start. */
export const REGISTER_MS = 2_000

/**
 * Write the worker's record into the queue's registry (at start: the heartbeats keep it
 * fresh). Never fails: a record not stored now is sent by a later heartbeat.
 */
export const register = (ctx: LeaseDeps) =>
  Effect.suspend(() => {
    const record = ctx.registry.next(false)
    if (record === undefined) return Effect.void
    return ctx.commands.extend([], ctx.serverLeaseMs, record).pipe(
      Effect.tap(() => Effect.sync(() => ctx.registry.sent(record))),
      Effect.timeoutOption(REGISTER_MS),
      Effect.exit,
      Effect.asVoid,
    )
  })

/**
 * The worker's lease loops, to be supervised: heartbeat (extend) and fence (self-abort).
 * `onTimeout` gets a lease the server would not extend past its timeout limit.
 */
export const leaseLoops = (ctx: LeaseDeps, onTimeout: (h: Held) => void) => {
  const hb = heartbeatOptions(ctx, onTimeout)
  return {
    heartbeat: heartbeatLoop(ctx.table, ctx.commands, hb),
    fence: fenceLoop(ctx.table, hb),
  }
}

/** Abort every live lease past its local deadline at `now`; returns the earliest deadline still ahead. */
const fenceDue = (table: LeaseTable, options: HeartbeatOptions, now: number) =>
  Effect.gen(function* () {
    let earliest = Number.POSITIVE_INFINITY
    for (const h of table.live()) {
      if (h.localDeadline <= now) {
        yield* table.end(h, "self-fenced", new LeaseLost({ queue: options.queue, jobId: h.id, token: h.token }))
        options.onEnd(h, "self-fenced")
      } else if (h.localDeadline < earliest) {
        earliest = h.localDeadline
      }
    }
    return earliest
  })

/** The fence loop: wakes at the earliest local deadline and aborts every lease past it. */
export const fenceLoop = (table: LeaseTable, options: HeartbeatOptions) =>
  Effect.gen(function* () {
    const cap = Math.max(1, Math.min(options.heartbeatMs, Math.floor(options.leaseMs / 4)))
    while (true) {
      const now = monotonicNow()
      const earliest = yield* fenceDue(table, options, now)
      yield* Effect.sleep(Math.max(1, Math.min(cap, Math.ceil(earliest - now))))
    }
  })

const heartbeatOptions = (ctx: LeaseDeps, onTimeout: (h: Held) => void): HeartbeatOptions => ({
  queue: ctx.commands.keys.queue,
  leaseMs: ctx.settings.leaseMs,
  heartbeatMs: ctx.settings.heartbeatMs,
  serverLeaseMs: ctx.serverLeaseMs,
  onEnd: (h, why) => onEnd(ctx, h, why, onTimeout),
  onError: ctx.hooks.error ?? (() => {}),
  onRoundTrip: (ms) => heartbeatTelemetry(identity(ctx), ms),
  onReplaced: () => {
    ctx.replaced++
  },
  registry: ctx.registry,
})
