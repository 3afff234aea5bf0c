/**
 * A lease's state machine (LeaseState.ts): the table of moves and the one function that
 * changes a lease's state, refusing any move the table does not allow.
 */
import { describe, expect, it } from "vitest"
import {
  HELD,
  LEASE_MOVES,
  type LeaseEnd,
  type LeaseEvent,
  type LeasePhase,
  type LeaseState,
  leaseState,
  leaseTo,
  nextLease,
} from "../../src/engine/worker/lease/LeaseState.ts"

const PHASES: ReadonlyArray<LeasePhase> = ["held", "settling", "acknowledged", "ended", "released", "overrun"]
const ENDS: ReadonlyArray<LeaseEnd | undefined> = [
  undefined,
  "lease-lost",
  "self-fenced",
  "shutdown",
  "cancelled",
  "timeout",
]
const EVENTS: ReadonlyArray<LeaseEvent> = ["settle", "end", "time-out", "answer", "release", "overrun"]
const show = (s: LeaseState | undefined) => (s === undefined ? "refused" : `${s.phase}${s.ended ? `(${s.ended})` : ""}`)

/** Where `events` take a lease from `from` (each with its reason for `end`), step by step. */
const walk = (from: LeaseState, ...events: ReadonlyArray<[LeaseEvent, LeaseEnd?]>) => {
  const lease = { state: from }
  return events.map(([e, why]) => (leaseTo(lease, e, why) ? show(lease.state) : "refused"))
}

describe("lease states", () => {
  it("the table: every allowed move", () => {
    expect(LEASE_MOVES.map((m) => `${m.on}: ${m.from}${m.ended ? `(${m.ended})` : ""} → ${m.to}`)).toEqual([
      "settle: held → settling",
      "end: held → ended",
      "time-out: ended(timeout) → settling",
      "answer: settling → acknowledged",
      "release: held → released",
      "release: settling → released",
      "release: ended(shutdown) → released",
      "overrun: ended(shutdown) → overrun",
    ])
  })

  it("a job that runs and is acknowledged: held → settling → acknowledged", () => {
    expect(walk(HELD, ["settle"], ["answer"])).toEqual(["settling", "acknowledged"])
  })

  it("a lease that ends keeps its reason; it is never settled after (its job is never acknowledged)", () => {
    for (const why of ["lease-lost", "self-fenced", "cancelled", "shutdown"] as const) {
      expect(walk(HELD, ["end", why], ["settle"], ["answer"], ["end", "lease-lost"])).toEqual([
        `ended(${why})`,
        "refused",
        "refused",
        "refused",
      ])
    }
  })

  it("only a timed-out lease moves on to settling (the worker fails it itself), once, keeping its reason", () => {
    expect(walk(HELD, ["end", "timeout"], ["time-out"], ["time-out"], ["answer"])).toEqual([
      "ended(timeout)",
      "settling(timeout)",
      "refused",
      "acknowledged(timeout)",
    ])
    expect(walk(leaseState("ended", "lease-lost"), ["time-out"])).toEqual(["refused"])
    expect(walk(HELD, ["time-out"])).toEqual(["refused"])
  })

  it("at shutdown: an ended lease is released once its handler ended, or overruns; never both", () => {
    expect(walk(HELD, ["end", "shutdown"], ["release"], ["overrun"])).toEqual([
      "ended(shutdown)",
      "released(shutdown)",
      "refused",
    ])
    expect(walk(HELD, ["end", "shutdown"], ["overrun"], ["release"])).toEqual([
      "ended(shutdown)",
      "overrun(shutdown)",
      "refused",
    ])
    expect(walk(leaseState("ended", "lease-lost"), ["release"], ["overrun"])).toEqual(["refused", "refused"])
  })

  it("a settling lease is not ended (its ack's answer decides), but is released if close stopped waiting for the answer", () => {
    expect(walk(leaseState("settling"), ["end", "shutdown"], ["overrun"], ["release"])).toEqual([
      "refused",
      "refused",
      "released",
    ])
  })

  it("a waiting lease given back unstarted at close is released", () => {
    expect(walk(HELD, ["release"], ["settle"])).toEqual(["released", "refused"])
  })

  it("acknowledged, released and overrun are final; end needs a reason", () => {
    for (const phase of ["acknowledged", "released", "overrun"] as const) {
      for (const ended of ENDS) {
        for (const e of EVENTS) expect(nextLease(leaseState(phase, ended), e, "lease-lost")).toBeUndefined()
      }
    }
    expect(nextLease(HELD, "end")).toBeUndefined()
  })

  it("every move of every state is the table's: nothing else is allowed", () => {
    for (const phase of PHASES) {
      for (const ended of ENDS) {
        const from = leaseState(phase, ended)
        for (const e of EVENTS) {
          const allowed = LEASE_MOVES.some(
            (m) => m.on === e && m.from === phase && (m.ended === undefined || m.ended === ended),
          )
          expect(nextLease(from, e, "cancelled") !== undefined, `${show(from)} on ${e}`).toBe(allowed)
        }
      }
    }
  })

  it("a refused move leaves the lease as it was", () => {
    const lease = { state: leaseState("ended", "self-fenced") }
    expect(leaseTo(lease, "settle")).toBe(false)
    expect(lease.state).toBe(leaseState("ended", "self-fenced"))
  })
})
