/**
 * One lease's states and the moves between them: the lease's whole life on this worker,
 * as one value (`Held.state`, LeaseTable.ts) changed only by {@link leaseTo}, which refuses a
 * move the table ({@link LEASE_MOVES}) does not allow.
 *
 *   held ──settle──► settling ──answer──► acknowledged
 *    │                  ▲  └──release──► released   (its ack unanswered when close stopped waiting)
 *    │               time-out                       (why = timeout: the worker fails the run itself)
 *    │                  │
 *    ├──end(why)──► ended(why) ──release──► released (why = shutdown: its handler has ended)
 *    │                  └──overrun──► overrun        (why = shutdown: past shutdownAbortGraceMs)
 *    └──release──► released                          (given back unstarted at close)
 *
 * - held:         leased; waiting for a slot, or its handler runs.
 * - settling:     the handler ended and its complete/fail is out: that script's answer alone
 *                 says whether the lease was still held (a heartbeat or a deadline passing
 *                 no longer ends it).
 * - acknowledged: the complete/fail was answered (the hooks say how: completed, failed,
 *                 dead, or the lease was gone).
 * - ended(why):   ended before its handler finished (lost, self-fenced, cancelled, timed
 *                 out, shutdown): the handler is aborted and the job is never acknowledged.
 * - released:     given back to the queue at close, attempts unchanged.
 * - overrun:      ended by shutdown, but its handler still ran past `shutdownAbortGraceMs`:
 *                 left to expire, never released while the handler may still run.
 *
 * Once a lease ended, the reason stays with it (`ended`) in the states after.
 */

/** Why a held lease ended before its handler finished. */
export type LeaseEnd = "lease-lost" | "self-fenced" | "shutdown" | "cancelled" | "timeout"

/** The phases of a lease (see the module's drawing). */
export type LeasePhase = "held" | "settling" | "acknowledged" | "ended" | "released" | "overrun"

/** What can happen to a lease. */
export type LeaseEvent = "settle" | "end" | "time-out" | "answer" | "release" | "overrun"

/** A lease's state: its phase, and why it ended early (once it did). */
export interface LeaseState {
  readonly phase: LeasePhase
  readonly ended: LeaseEnd | undefined
}

/** One allowed move: on `on`, a lease in `from` (ended for that reason, when given) goes to `to`. */
export interface LeaseMove {
  readonly on: LeaseEvent
  readonly from: LeasePhase
  readonly ended?: LeaseEnd
  readonly to: LeasePhase
}

/** Every move a lease may make; any other is refused. */
export const LEASE_MOVES: ReadonlyArray<LeaseMove> = [
  { on: "settle", from: "held", to: "settling" },
  { on: "end", from: "held", to: "ended" },
  { on: "time-out", from: "ended", ended: "timeout", to: "settling" },
  { on: "answer", from: "settling", to: "acknowledged" },
  { on: "release", from: "held", to: "released" },
  { on: "release", from: "settling", to: "released" },
  { on: "release", from: "ended", ended: "shutdown", to: "released" },
  { on: "overrun", from: "ended", ended: "shutdown", to: "overrun" },
]

const PHASES: ReadonlyArray<LeasePhase> = ["held", "settling", "acknowledged", "ended", "released", "overrun"]
const ENDS: ReadonlyArray<LeaseEnd | undefined> = [
  undefined,
  "lease-lost",
  "self-fenced",
  "shutdown",
  "cancelled",
  "timeout",
]

/** A state made once, carrying where each event takes it (a move allocates nothing and looks nothing up). */
interface Interned extends LeaseState {
  readonly next: Partial<Record<LeaseEvent, Interned>>
  readonly endedBy: Partial<Record<LeaseEnd, Interned>>
}

const STATES = new Map(
  PHASES.map(
    (phase) =>
      [phase, new Map(ENDS.map((ended) => [ended, { phase, ended, next: {}, endedBy: {} } as Interned]))] as const,
  ),
)
const interned = (phase: LeasePhase, ended: LeaseEnd | undefined): Interned => STATES.get(phase)!.get(ended)!
for (const from of [...STATES.values()].flatMap((byEnd) => [...byEnd.values()])) {
  for (const m of LEASE_MOVES) {
    if (m.from !== from.phase || (m.ended !== undefined && m.ended !== from.ended)) continue
    if (m.on === "end") {
      for (const why of ENDS)
        if (why !== undefined) (from.endedBy as Record<LeaseEnd, Interned>)[why] = interned(m.to, why)
    } else (from.next as Record<LeaseEvent, Interned>)[m.on] = interned(m.to, from.ended)
  }
}

/** The state of `phase`, ended for `ended` (none by default): the only way to make a lease state. */
export const leaseState = (phase: LeasePhase, ended?: LeaseEnd): LeaseState => interned(phase, ended)

/** A lease just leased. */
export const HELD: LeaseState = leaseState("held")

/**
 * The state after `event` (with `why` for `end`), or undefined when the table
 * ({@link LEASE_MOVES}) does not allow that move from `s` (the lease then stays as it was).
 */
export const nextLease = (s: LeaseState, event: LeaseEvent, why?: LeaseEnd): LeaseState | undefined => {
  const from = s as Interned
  if (event !== "end") return from.next[event]
  return why === undefined ? undefined : from.endedBy[why]
}

/**
 * Move a lease on `event` (with `why` for `end`): the one place a lease's state changes.
 * Returns false, leaving the state as it was, when the table does not allow the move from
 * where the lease is.
 */
export const leaseTo = (lease: { state: LeaseState }, event: LeaseEvent, why?: LeaseEnd): boolean => {
  const next = nextLease(lease.state, event, why)
  if (next === undefined) return false
  lease.state = next
  return true
}
