/**
 * The worker's state machine (WorkerState.ts): the table of moves, the one function that
 * changes a state (refusing and reporting a move the table does not allow), and the order
 * the faces and a partitioned worker read their state from.
 */
import { describe, expect, it } from "vitest"
import { IllegalStateMove } from "../../src/engine/model/Errors.ts"
import {
  canMove,
  leastAdvanced,
  makeStateCell,
  transition,
  WORKER_MOVES,
  WORKER_STATE_ORDER,
  type WorkerState,
} from "../../src/engine/worker/WorkerState.ts"

const machine = (initial?: WorkerState) => {
  const illegal: IllegalStateMove[] = []
  const moves: Array<[WorkerState, WorkerState]> = []
  const holder = {
    lifecycle: makeStateCell(
      (e) => illegal.push(e),
      (from, to) => moves.push([from, to]),
      initial,
    ),
  }
  return { holder, illegal, moves }
}

describe("worker states", () => {
  it("the path from start to close, in order; failed is off it", () => {
    expect(WORKER_STATE_ORDER).toEqual(["starting", "running", "draining", "releasing", "closed"])
  })

  it("the table: each state's moves", () => {
    expect(WORKER_MOVES).toEqual({
      starting: ["running", "closed", "failed"],
      running: ["paused", "draining", "failed"],
      paused: ["running", "draining", "failed"],
      draining: ["releasing"],
      releasing: ["closed"],
      failed: ["draining", "closed"],
      closed: [],
    })
  })

  it("a new worker is starting; a close walks running → draining → releasing → closed, each move told", () => {
    const { holder, illegal, moves } = machine()
    expect(holder.lifecycle.current).toBe("starting")
    for (const to of ["running", "draining", "releasing", "closed"] as const) expect(transition(holder, to)).toBe(true)
    expect(holder.lifecycle.current).toBe("closed")
    expect(moves).toEqual([
      ["starting", "running"],
      ["running", "draining"],
      ["draining", "releasing"],
      ["releasing", "closed"],
    ])
    expect(illegal).toEqual([])
  })

  it("pause and resume go between running and paused; a paused worker closes or fails; nothing else pauses", () => {
    const { holder, illegal, moves } = machine("running")
    expect(transition(holder, "paused")).toBe(true)
    expect(transition(holder, "running")).toBe(true)
    expect(transition(holder, "paused")).toBe(true)
    expect(transition(holder, "draining")).toBe(true)
    expect(moves).toEqual([
      ["running", "paused"],
      ["paused", "running"],
      ["running", "paused"],
      ["paused", "draining"],
    ])
    expect(illegal).toEqual([])
    for (const from of ["starting", "draining", "releasing", "closed", "failed"] as const)
      expect(canMove(from, "paused")).toBe(false)
    expect(canMove("paused", "failed")).toBe(true)
    expect(leastAdvanced(["running", "paused"])).toBe("paused")
    expect(leastAdvanced(["paused", "failed"])).toBe("failed")
  })

  it("a worker closed before it reached Redis goes from starting to closed at once", () => {
    const { holder } = machine()
    expect(transition(holder, "closed")).toBe(true)
    expect(holder.lifecycle.current).toBe("closed")
  })

  it("a refused move leaves the state as it was and is reported, naming both states", () => {
    const { holder, illegal, moves } = machine("closed")
    expect(transition(holder, "running")).toBe(false)
    expect(holder.lifecycle.current).toBe("closed")
    expect(moves).toEqual([])
    expect(illegal).toHaveLength(1)
    expect(illegal[0]).toBeInstanceOf(IllegalStateMove)
    expect(illegal[0]).toMatchObject({ machine: "worker", from: "closed", to: "running" })
    expect(illegal[0]!.message).toContain("closed → running")
  })

  it("no state goes back along the path, and nothing leaves closed", () => {
    for (const [i, from] of WORKER_STATE_ORDER.entries()) {
      for (const to of WORKER_STATE_ORDER.slice(0, i + 1)) expect(canMove(from, to)).toBe(false)
    }
    expect(WORKER_MOVES.closed).toEqual([])
  })

  it("several workers as one: failed when any is, else the least advanced", () => {
    expect(leastAdvanced(["running", "draining"])).toBe("running")
    expect(leastAdvanced(["closed", "releasing"])).toBe("releasing")
    expect(leastAdvanced(["starting", "running"])).toBe("starting")
    expect(leastAdvanced(["closed", "failed", "running"])).toBe("failed")
    expect(leastAdvanced([])).toBe("closed")
  })
})
