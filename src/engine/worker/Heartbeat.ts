/**
 * Leases of a running worker: the heartbeat loop extends every lease the worker holds,
 * the fence loop aborts a handler whose lease it could not keep (Lease.ts holds both, and
 * the lease table); here they are given the worker's settings and hooks, and a reserve
 * that lands late has its leases checked before its jobs start.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { Reservation } from "../Commands.ts"
import type { WorkerContext } from "./Context.ts"
import { fenceAfter, fenceLoop, type HeartbeatOptions, type Held, heartbeatLoop, monotonicNow } from "./Lease.ts"

/** Tell the user a lease ended without an ack: lost to the server, or self-fenced. */
export const leaseEnded = <A>(ctx: WorkerContext<A>, h: Held, why: "lease-lost" | "self-fenced"): void =>
  ctx.hooks.leaseLost?.({ id: h.id, token: h.token }, why)

/** The local deadline of a lease granted or extended by a call sent at `sentAt`. */
export const localDeadline = <A>(ctx: WorkerContext<A>, sentAt: number): number =>
  sentAt + fenceAfter(ctx.settings.leaseMs, ctx.settings.heartbeatMs)

const heartbeatOptions = <A>(ctx: WorkerContext<A>): HeartbeatOptions => ({
  queue: ctx.commands.keys.queue,
  leaseMs: ctx.settings.leaseMs,
  heartbeatMs: ctx.settings.heartbeatMs,
  serverLeaseMs: ctx.serverLeaseMs,
  onEnd: (h, why) => leaseEnded(ctx, h, why),
  onError: ctx.hooks.error ?? (() => {}),
})

/** The worker's lease loops, to be supervised: heartbeat (extend) and fence (self-abort). */
export const leaseLoops = <A>(ctx: WorkerContext<A>) => {
  const hb = heartbeatOptions(ctx)
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
export const freshen = <A>(ctx: WorkerContext<A>, jobs: ReadonlyArray<Reservation>, sentAt: number) => {
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
