/**
 * A reserve reply read late (`freshen`, lease/LeaseGrant.ts), without Redis: one extend says
 * which of its leases are still held; those start with a fresh deadline, and each of the
 * others — reclaimed by a sweep meanwhile, or cancelled — is never started and is told
 * (`lease-lost`, `cancelled`), as the heartbeat tells a held lease it finds gone. A reply on
 * time sends no extend.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { Reservation } from "../../src/engine/calls/Commands.ts"
import { freshen } from "../../src/engine/worker/lease/LeaseGrant.ts"
import { monotonicNow } from "../../src/engine/worker/lease/LeaseTable.ts"
import { settings } from "./support/fake.ts"

const job = (id: string, token: number): Reservation =>
  ({ id, token, attempt: 1, maxAttempts: 3, timeoutMs: undefined }) as unknown as Reservation

/** A worker's part that `freshen` reads, whose extend answers `answers` and whose hooks record what they are told. */
const worker = (answers: ReadonlyArray<number>) => {
  const told: string[] = []
  const extends_: string[][] = []
  const s = settings({ leaseMs: 3_000 })
  const ctx = {
    commands: {
      keys: { queue: "lease-grant" },
      extend: (leases: ReadonlyArray<{ readonly id: string }>) => {
        extends_.push(leases.map((l) => l.id))
        return Effect.succeed(answers)
      },
    },
    settings: s,
    serverLeaseMs: s.leaseMs,
    workerId: "w1",
    hooks: {
      leaseLost: (j: { id: string; token: number }, why: string) => told.push(`lease-lost ${j.id} ${j.token} ${why}`),
      cancelled: (j: { id: string; token: number }) => told.push(`cancelled ${j.id} ${j.token}`),
    },
    loop: { cause: () => undefined },
  } as unknown as Parameters<typeof freshen>[0]
  return { ctx, told, extends_ }
}

describe("freshen: a reserve reply read late", () => {
  it("starts the leases still held, and tells each one gone (reclaimed: lease-lost; cancelled) instead of dropping it", async () => {
    const { ctx, told, extends_ } = worker([0, 9_000, -1])
    const jobs = [job("a", 1), job("b", 2), job("c", 3)]
    // sent a whole lease ago: past the fence the worker counts from the send
    const out = await Effect.runPromise(freshen(ctx, jobs, monotonicNow() - 3_000))
    expect(extends_).toEqual([["a", "b", "c"]])
    expect(out.map((s) => s.r.id)).toEqual(["b"])
    expect(told).toEqual(["lease-lost a 1 lease-lost", "cancelled c 3"])
  })

  it("a reply on time sends no extend and tells nothing", async () => {
    const { ctx, told, extends_ } = worker([])
    const out = await Effect.runPromise(freshen(ctx, [job("a", 1)], monotonicNow()))
    expect(out.map((s) => s.r.id)).toEqual(["a"])
    expect(extends_).toEqual([])
    expect(told).toEqual([])
  })
})
