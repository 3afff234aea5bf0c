/**
 * The leases a worker holds and their self-fencing deadline (the loops that keep them are
 * LeaseLoops.ts).
 *
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
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type { Job } from "../../model/HandlerJob.ts"
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
