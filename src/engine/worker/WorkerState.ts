/**
 * A worker's states, their order and the moves between them, in one place:
 *
 *                          pause ▲│ resume
 *                                │▼
 *                             paused ──close──┐ (a loop given up: failed)
 *                                             ▼
 *   starting ──reached Redis──► running ──close──► draining ──► releasing ──► closed
 *     │  │                         │                  ▲                          ▲ ▲
 *     │  │                  a loop given up         close                        │ │
 *     │  │                         ▼                  │                          │ │
 *     │  └───could not start───► failed ──────────────┘──close (never started)───┘ │
 *     └──close (it holds nothing: at once)─────────────────────────────────────────┘
 *
 * - starting:  the worker has not reached Redis yet (the faces' state until the engine's
 *              worker exists: that one is made once its queue answered, `running`); it
 *              holds nothing, so close ends at once.
 * - running:   the reserve loop leases jobs up to free concurrency.
 * - paused:    `pause()`: no new reservations (jobs leased and not started go back);
 *              running handlers go on, their leases heartbeated; `resume()` runs again.
 * - draining:  close began: no new reservations; running handlers get `shutdownGraceMs`.
 * - releasing: handlers still running are aborted; each job is released once its handler
 *              has ended (its lease heartbeated meanwhile, up to `shutdownAbortGraceMs`),
 *              so another worker starts it at once with attempts unchanged. Acks still
 *              unanswered stop waiting and their leases are released.
 * - closed:    loops stopped, connections closed. Reached even when Redis is gone.
 * - failed:    a loop was given up (or the start failed): no more jobs; close() it.
 *
 * A state changes only through {@link transition}, which refuses a move the table does not
 * allow and reports it (an {@link IllegalStateMove}), leaving the state as it was.
 */
import { IllegalStateMove } from "../model/Errors.ts"

/** The named states of a worker (see the module's drawing). */
export type WorkerState = "starting" | "running" | "paused" | "draining" | "releasing" | "closed" | "failed"

/** The states a worker walks from start to close, in order (`paused` and `failed` are off this path). */
export const WORKER_STATE_ORDER: ReadonlyArray<Exclude<WorkerState, "failed" | "paused">> = [
  "starting",
  "running",
  "draining",
  "releasing",
  "closed",
]

/** Every move a worker may make: from a state, the states it may go to. */
export const WORKER_MOVES: { readonly [S in WorkerState]: ReadonlyArray<WorkerState> } = {
  starting: ["running", "closed", "failed"],
  running: ["paused", "draining", "failed"],
  paused: ["running", "draining", "failed"],
  draining: ["releasing"],
  releasing: ["closed"],
  failed: ["draining", "closed"],
  closed: [],
}

/** True when the table allows a worker in `from` to go to `to`. */
export const canMove = (from: WorkerState, to: WorkerState): boolean => WORKER_MOVES[from].includes(to)

/**
 * The least advanced of several states, for one handle over several workers: `failed` when
 * any is, else `paused` when any is (they pause together), else the earliest in
 * {@link WORKER_STATE_ORDER} (`closed` for none).
 */
export const leastAdvanced = (states: ReadonlyArray<WorkerState>): WorkerState => {
  if (states.includes("failed")) return "failed"
  if (states.includes("paused")) return "paused"
  let least = WORKER_STATE_ORDER.length - 1
  for (const s of states)
    least = Math.min(least, WORKER_STATE_ORDER.indexOf(s as Exclude<WorkerState, "failed" | "paused">))
  return WORKER_STATE_ORDER[least] ?? "closed"
}

/** A worker's state and who hears of its moves. */
export interface StateCell {
  /** The current state: written only by {@link transition}. */
  current: WorkerState
  /** Told after every move. */
  readonly onMove?: ((from: WorkerState, to: WorkerState) => void) | undefined
  /** Told of a move the table refused (a defect of leaseq: the state is left as it was). */
  readonly onIllegal: (e: IllegalStateMove) => void
}

/** A state cell starting in `initial` (default `starting`). */
export const makeStateCell = (
  onIllegal: (e: IllegalStateMove) => void,
  onMove?: (from: WorkerState, to: WorkerState) => void,
  initial: WorkerState = "starting",
): StateCell => ({ current: initial, onMove, onIllegal })

/**
 * Move `holder`'s worker to `to`: the one place a worker's state changes. Returns false, and
 * reports an {@link IllegalStateMove} to the cell's `onIllegal`, when the table does not
 * allow the move (the state stays); true when the state is `to` now.
 */
export const transition = (holder: { readonly lifecycle: StateCell }, to: WorkerState): boolean => {
  const cell = holder.lifecycle
  const from = cell.current
  if (!canMove(from, to)) {
    cell.onIllegal(new IllegalStateMove({ machine: "worker", from, to }))
    return false
  }
  cell.current = to
  cell.onMove?.(from, to)
  return true
}
