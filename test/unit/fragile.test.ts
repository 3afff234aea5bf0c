/**
 * Where a landed suspect goes (`place`, loop/Fragile.ts), without Redis: a job that lost a
 * lease or failed before does not start to run alone while a complete or fail of this worker
 * is unanswered (if it kills the worker, the job that ran would lose its lease and run
 * again): it is given back. Beside a held lease, or with no ack out, it starts as before.
 */
import { describe, expect, it } from "vitest"
import type { Reservation } from "../../src/engine/calls/Commands.ts"
import { HELD, leaseState } from "../../src/engine/worker/lease/LeaseState.ts"
import type { Held } from "../../src/engine/worker/lease/LeaseTable.ts"
import { type FragileDeps, place } from "../../src/engine/worker/loop/Fragile.ts"
import { makeScheduling } from "../../src/engine/worker/loop/Scheduling.ts"

const reservation = (id: string, attempt: number): Reservation =>
  ({ id, token: 1, attempt, maxAttempts: 5, timeoutMs: undefined }) as unknown as Reservation

/** A worker whose lease table holds leases in `phases`. */
const worker = (...phases: Array<"held" | "settling">): FragileDeps => {
  const held = new Map<number, Held>()
  phases.forEach((phase, i) => {
    const state = phase === "held" ? HELD : leaseState("settling")
    held.set(100 + i, { id: `j${i}`, token: 100 + i, attempt: 1, maxAttempts: 5, state } as unknown as Held)
  })
  return { sched: makeScheduling(), table: { held } } as unknown as FragileDeps
}

const ids = (placed: ReturnType<typeof place>) => ({
  start: placed.start.map((s) => s.r.id),
  hold: placed.hold.map((s) => s.r.id),
  release: placed.release.map((s) => s.r.id),
})

describe("place: a suspect and this worker's unanswered acks", () => {
  it("a suspect that would run alone while an ack is out is given back, not started", () => {
    const placed = place(worker("settling"), [{ r: reservation("s", 2) }], 1)
    expect(ids(placed)).toEqual({ start: [], hold: [], release: ["s"] })
  })

  it("with no ack out, or beside a held lease, it starts; a job on its first attempt is never held back", () => {
    expect(ids(place(worker(), [{ r: reservation("s", 2) }], 1))).toEqual({ start: ["s"], hold: [], release: [] })
    expect(ids(place(worker("settling", "held"), [{ r: reservation("s", 2) }], 2))).toEqual({
      start: ["s"],
      hold: [],
      release: [],
    })
    expect(ids(place(worker("settling"), [{ r: reservation("a", 1) }], 1))).toEqual({
      start: ["a"],
      hold: [],
      release: [],
    })
  })
  it("its own fail still unanswered does not hold it back: Redis ran that fail, or the job could not have landed again", () => {
    // the worker's only settling lease is j0's first attempt; j0 lands again for its retry
    expect(ids(place(worker("settling"), [{ r: reservation("j0", 2) }], 1))).toEqual({
      start: ["j0"],
      hold: [],
      release: [],
    })
  })
})
