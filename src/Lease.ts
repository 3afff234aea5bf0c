/**
 * The leases a worker holds, their heartbeat and their self-fencing.
 *
 * - Heartbeat: every `heartbeatMs`, one `extend` call for all held leases. A lease the
 *   server reports lost is marked lost at once: its handler is aborted and never acks.
 * - Self-fencing: each lease has a local deadline = (when the last successful extend,
 *   or the reserve, was *sent*) + leaseMs − margin, on the local monotonic clock.
 *   The server's deadline is at least that late, so when extends cannot get through,
 *   the handler is aborted before the server could hand the job to someone else.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type { Commands, ScriptFailure } from "./Commands.ts"
import { LeaseLost } from "./Errors.ts"

/** Why a held lease ended before its handler finished. */
export type LeaseEnd = "lease-lost" | "self-fenced" | "shutdown"

/** One lease this worker holds. */
export interface Held {
  readonly id: string
  readonly token: number
  readonly attempt: number
  readonly maxAttempts: number
  /** Local monotonic ms before which the lease is surely still ours. */
  localDeadline: number
  readonly controller: AbortController
  /** The handler's fiber, once it runs. */
  fiber: Fiber.Fiber<unknown, unknown> | undefined
  /** Set when the lease ended early; the job is never acknowledged then. */
  ended: LeaseEnd | undefined
  /**
   * Set once the handler has finished and its complete/fail is being sent. From then on
   * that script's answer alone says whether the lease was still held: a heartbeat that
   * raced with it (and found the job already acknowledged) or a local deadline passing
   * must not report a lost lease or abort a handler that is no longer running.
   */
  settling?: boolean
}

/** Local monotonic clock in ms. */
export const monotonicNow = (): number => performance.now()

/** The safety margin subtracted from a local deadline: 2 % of the lease, at least 5 ms. */
export const fenceMargin = (leaseMs: number): number => Math.max(5, Math.floor(leaseMs * 0.02))

/** Most leases per extend call (keeps each script call short). */
export const EXTEND_CHUNK = 250

/** The table of held leases. */
export const makeLeaseTable = () => {
  const held = new Map<string, Held>()

  /** End a lease early: abort its signal and interrupt its handler (without waiting). */
  const end = (h: Held, why: LeaseEnd, reason: unknown): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (h.ended) return Effect.void
      h.ended = why
      h.controller.abort(reason)
      const fiber = h.fiber
      return fiber ? Effect.forkDetach(Fiber.interrupt(fiber)).pipe(Effect.asVoid) : Effect.void
    })

  return {
    held,
    add: (h: Held) => {
      held.set(h.id, h)
    },
    remove: (id: string) => {
      held.delete(id)
    },
    live: (): Held[] => [...held.values()].filter((h) => !h.ended),
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
  /** A lease the server says is gone (or that was self-fenced). */
  readonly onEnd: (h: Held, why: "lease-lost" | "self-fenced") => void
  readonly onError: (e: ScriptFailure) => void
}

/** One heartbeat: extend every live lease, in chunks of {@link EXTEND_CHUNK}. */
export const heartbeatOnce = (table: LeaseTable, commands: Commands, options: HeartbeatOptions) =>
  Effect.gen(function* () {
    const leases = table.live()
    for (let i = 0; i < leases.length; i += EXTEND_CHUNK) {
      const chunk = leases.slice(i, i + EXTEND_CHUNK)
      const sentAt = monotonicNow()
      const deadlines = yield* commands.extend(chunk, options.leaseMs)
      const local = sentAt + options.leaseMs - fenceMargin(options.leaseMs)
      for (let j = 0; j < chunk.length; j++) {
        const h = chunk[j]!
        if ((deadlines[j] ?? 0) > 0) {
          h.localDeadline = local
        } else if (!h.ended && !h.settling) {
          yield* table.end(h, "lease-lost", new LeaseLost({ queue: options.queue, jobId: h.id, token: h.token }))
          options.onEnd(h, "lease-lost")
        }
      }
    }
  })

/** The heartbeat loop: forever, one extend call per tick; errors are reported and the fence takes over. */
export const heartbeatLoop = (table: LeaseTable, commands: Commands, options: HeartbeatOptions) =>
  Effect.gen(function* () {
    while (true) {
      yield* Effect.sleep(options.heartbeatMs)
      yield* heartbeatOnce(table, commands, options).pipe(
        Effect.timeoutOption(options.leaseMs),
        Effect.catch((e) => Effect.sync(() => options.onError(e))),
      )
    }
  })

/** The fence loop: wakes at the earliest local deadline and aborts every lease past it. */
export const fenceLoop = (table: LeaseTable, options: HeartbeatOptions) =>
  Effect.gen(function* () {
    const cap = Math.max(1, Math.min(options.heartbeatMs, Math.floor(options.leaseMs / 4)))
    while (true) {
      const now = monotonicNow()
      let earliest = Number.POSITIVE_INFINITY
      for (const h of table.live()) {
        if (h.settling) continue
        if (h.localDeadline <= now) {
          yield* table.end(h, "self-fenced", new LeaseLost({ queue: options.queue, jobId: h.id, token: h.token }))
          options.onEnd(h, "self-fenced")
        } else if (h.localDeadline < earliest) {
          earliest = h.localDeadline
        }
      }
      yield* Effect.sleep(Math.max(1, Math.min(cap, Math.ceil(earliest - now))))
    }
  })
