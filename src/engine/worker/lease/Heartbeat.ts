/**
 * Leases of a running worker: the heartbeat loop (LeaseTable.ts, with the lease table) extends
 * every lease the worker holds, and the fence loop (here) aborts a handler whose lease it
 * could not keep; here both get the worker's settings and hooks, and a reserve that lands
 * late has its leases checked before its jobs start.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { Reservation } from "../../calls/Commands.ts"
import { LeaseLost } from "../../model/Errors.ts"
import { heartbeatTelemetry, leaseEndedTelemetry, type WorkerIdentity } from "../../telemetry/WorkerTelemetry.ts"
import type { LeaseDeps } from "./LeaseDeps.ts"
import {
  fenceAfter,
  type HeartbeatOptions,
  type Held,
  heartbeatLoop,
  type LeaseEndFound,
  type LeaseTable,
  monotonicNow,
} from "./LeaseTable.ts"

/** Tell the user a lease ended without an ack: lost to the server, or self-fenced. */
export const leaseEnded = (ctx: LeaseDeps, h: Held, why: "lease-lost" | "self-fenced"): void => {
  if (why === "self-fenced") ctx.selfFenced++
  // a lease found gone once its ack was out: that ack was refused
  leaseEndedTelemetry(identity(ctx), h, why, h.state.phase === "settling")
  // a lease lost while (or right after) a handler blocked the event loop says so
  const blocked = ctx.loop.cause(ctx.commands.keys.queue)
  ctx.hooks.leaseLost?.({ id: h.id, token: h.token }, why, blocked)
}

/** The worker as its spans and metrics name it. */
export const identity = (ctx: LeaseDeps): WorkerIdentity => {
  let w = identities.get(ctx)
  if (w === undefined) {
    w = { queue: ctx.commands.keys.queue, workerId: ctx.workerId, leaseMs: ctx.settings.leaseMs }
    identities.set(ctx, w)
  }
  return w
}
const identities = new WeakMap<object, WorkerIdentity>()

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

/** The local deadline of a lease granted or extended by a call sent at `sentAt`. */
export const localDeadline = (ctx: LeaseDeps, sentAt: number): number =>
  sentAt + fenceAfter(ctx.settings.leaseMs, ctx.settings.heartbeatMs)

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

/**
 * The local deadline of each reserved job, counted from the reserve's send. A reply
 * that comes late (Redis stalled, or ioredis sent the call again after a reconnect)
 * would start jobs near or past that deadline, to be self-fenced at once although
 * their server leases are fresh: then one extend, sent now, says which leases are
 * still held (the others are not started) and gives them a fresh deadline.
 */
export const freshen = (ctx: LeaseDeps, jobs: ReadonlyArray<Reservation>, sentAt: number) => {
  const deadline = localDeadline(ctx, sentAt)
  const late = deadline - monotonicNow() < fenceAfter(ctx.settings.leaseMs, ctx.settings.heartbeatMs) / 2
  if (jobs.length === 0 || !late) return Effect.succeed(jobs.map((r) => ({ r, deadline })))
  return Effect.gen(function* () {
    const again = monotonicNow()
    const extended = yield* Effect.exit(ctx.commands.extend(jobs, ctx.serverLeaseMs))
    if (Exit.isFailure(extended)) return jobs.map((r) => ({ r, deadline })) // the fence decides
    return jobs.filter((_, i) => (extended.value[i] ?? 0) > 0).map((r) => ({ r, deadline: localDeadline(ctx, again) }))
  })
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
