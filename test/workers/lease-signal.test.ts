/**
 * A job's abort signal is made only when the handler first reads it (an AbortController
 * per job is a cost most handlers never need). Read before or after the lease ends, the
 * signal says the same: aborted, with the reason the lease ended.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { HELD } from "../../src/engine/worker/lease/LeaseState.ts"
import { type Held, makeLeaseTable, signalOf } from "../../src/engine/worker/lease/LeaseTable.ts"

const held = (token: number): Held => ({
  id: `job-${token}`,
  token,
  attempt: 1,
  maxAttempts: 3,
  localDeadline: Number.POSITIVE_INFINITY,
  controller: undefined,
  fiber: undefined,
  state: HELD,
})

describe("a lease's abort signal", () => {
  it("read before the lease ends: not aborted, then aborted with the reason when it ends", async () => {
    const table = makeLeaseTable()
    const h = held(1)
    table.add(h)
    const signal = signalOf(h)
    expect(signal.aborted).toBe(false)
    expect(signalOf(h)).toBe(signal)
    const reason = new Error("lease lost")
    await Effect.runPromise(table.end(h, "lease-lost", reason))
    expect(signal.aborted).toBe(true)
    expect(signal.reason).toBe(reason)
  })

  it("first read after the lease ended: already aborted, with the reason", async () => {
    const table = makeLeaseTable()
    const h = held(2)
    table.add(h)
    expect(h.controller).toBeUndefined()
    await Effect.runPromise(table.end(h, "self-fenced", "fenced"))
    const signal = signalOf(h)
    expect(signal.aborted).toBe(true)
    expect(signal.reason).toBe("fenced")
  })
})
