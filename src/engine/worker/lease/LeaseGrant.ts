/**
 * A lease granted by a reserve, from the worker's side: its local deadline (counted from the
 * call's send), checked again by one extend when the reserve landed late (`freshen`), entered
 * in the lease table (`holdLease`: an older lease of the same job is surely lost), and told
 * to the user when it ends without an ack (`leaseEnded`).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import { type ExtendAnswer, extendAnswer, type Reservation } from "../../calls/Commands.ts"
import { LeaseLost } from "../../model/Errors.ts"
import { leaseEndedTelemetry, type WorkerIdentity } from "../../telemetry/WorkerTelemetry.ts"
import type { LeaseDeps } from "./LeaseDeps.ts"
import { HELD } from "./LeaseState.ts"
import { fenceAfter, type Held, monotonicNow } from "./LeaseTable.ts"

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
export const identity = (ctx: Pick<LeaseDeps, "commands" | "workerId" | "settings">): WorkerIdentity => {
  let w = identities.get(ctx)
  if (w === undefined) {
    w = { queue: ctx.commands.keys.queue, workerId: ctx.workerId, leaseMs: ctx.settings.leaseMs }
    identities.set(ctx, w)
  }
  return w
}
const identities = new WeakMap<object, WorkerIdentity>()

/** The local deadline of a lease granted or extended by a call sent at `sentAt`. */
export const localDeadline = (ctx: Pick<LeaseDeps, "settings">, sentAt: number): number =>
  sentAt + fenceAfter(ctx.settings.leaseMs, ctx.settings.heartbeatMs)

/** What {@link freshen} reads: the worker, and what it tells of a lease found gone. */
type FreshenDeps = Pick<LeaseDeps, "commands" | "settings" | "serverLeaseMs" | "workerId" | "hooks" | "loop">

/**
 * A reserved job whose lease was gone (a sweep reclaimed it, or it was cancelled) before its
 * late reply was read: never started here, and told like a held lease the heartbeat finds gone.
 */
const goneBeforeStart = (ctx: FreshenDeps, r: Reservation, answer: ExtendAnswer): void => {
  const job = { id: r.id, token: r.token }
  if (answer === "cancelled") {
    ctx.hooks.cancelled?.(job)
    return
  }
  leaseEndedTelemetry(identity(ctx), {}, "lease-lost", false)
  ctx.hooks.leaseLost?.(job, "lease-lost", ctx.loop.cause(ctx.commands.keys.queue))
}

/**
 * The local deadline of each reserved job, counted from the reserve's send. A reply
 * that comes late (Redis stalled, the worker's process stopped, or ioredis sent the call
 * again after a reconnect) would start jobs near or past that deadline, to be self-fenced
 * at once although their server leases are fresh: then one extend, sent now, says which
 * leases are still held and gives them a fresh deadline. The others are not started, and
 * each is told (`lease-lost`, or `cancelled`): a sweep that reclaimed one counted it a lost
 * lease, so the user hears of every one.
 */
export const freshen = (ctx: FreshenDeps, jobs: ReadonlyArray<Reservation>, sentAt: number) => {
  const deadline = localDeadline(ctx, sentAt)
  const late = deadline - monotonicNow() < fenceAfter(ctx.settings.leaseMs, ctx.settings.heartbeatMs) / 2
  if (jobs.length === 0 || !late) return Effect.succeed(jobs.map((r) => ({ r, deadline })))
  return Effect.gen(function* () {
    const again = monotonicNow()
    const extended = yield* Effect.exit(ctx.commands.extend(jobs, ctx.serverLeaseMs))
    if (Exit.isFailure(extended)) return jobs.map((r) => ({ r, deadline })) // the fence decides
    const held = jobs.filter((r, i) => {
      const answer = extendAnswer(extended.value[i] ?? 0)
      if (typeof answer !== "number") goneBeforeStart(ctx, r, answer)
      return typeof answer === "number"
    })
    return held.map((r) => ({ r, deadline: localDeadline(ctx, again) }))
  })
}

/**
 * Enter a reserved job's lease in the table (before it runs or while it waits). When the
 * server gave the job a newer token than a lease on it held here, the older one is surely
 * lost: it is ended and reported.
 */
export const holdLease = (ctx: LeaseDeps, r: Reservation, deadline: number) =>
  Effect.suspend(() => {
    const { held, older } = enterLease(ctx, r, deadline)
    return older ? Effect.as(endOlder(ctx, older), held) : Effect.succeed(held)
  })

/** `holdLease`'s synchronous part: the new lease entered in the table, and the older one it replaced (if any). */
export const enterLease = (ctx: LeaseDeps, r: Reservation, deadline: number) => {
  const held: Held = {
    id: r.id,
    token: r.token,
    attempt: r.attempt,
    maxAttempts: r.maxAttempts,
    timeoutMs: r.timeoutMs,
    localDeadline: deadline,
    controller: undefined,
    fiber: undefined as Fiber.Fiber<unknown, unknown> | undefined,
    state: HELD,
  }
  return { held, older: ctx.table.add(held) }
}

/** End an older lease that a newer token on the same job replaced, as lost, and report it. */
export const endOlder = (ctx: LeaseDeps, older: Held): Effect.Effect<void> => {
  const lost = new LeaseLost({ queue: ctx.commands.keys.queue, jobId: older.id, token: older.token })
  return Effect.map(ctx.table.end(older, "lease-lost", lost), () => leaseEnded(ctx, older, "lease-lost"))
}
