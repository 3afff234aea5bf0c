/**
 * Slots, without Redis: a worker runs at most `concurrency` handlers, and a reserve call
 * asks only for slots that are neither running a job nor spoken for by another call.
 * Pure checks of Slots.ts on a worker's context, then a whole worker on the fake
 * command layer under the TestClock.
 */
import { it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import { makeContext } from "../../src/engine/worker/Context.ts"
import {
  lingerEnded,
  type SchedEvent,
  type Scheduling,
  SLOT_FREED,
  SLOT_TAKEN,
  tell,
  waitFor,
} from "../../src/engine/worker/loop/Scheduling.ts"
import {
  canSend,
  freeSlot,
  freeSlots,
  LINGER_MS,
  lingering,
  MAX_RESERVES_IN_FLIGHT,
  waitEvent,
} from "../../src/engine/worker/loop/Slots.ts"
import { makeFake, program, settings, settle, start, until } from "./support/fake.ts"

/** A worker's context without prefetch, so the rules below see only its slots (prefetch: test/workers/prefetch.test.ts). */
const context = (concurrency: number) => {
  const fake = makeFake()
  return makeContext(
    fake.commands,
    fake.blocking,
    settings({ concurrency, prefetch: 0 }),
    program(() => Effect.void).program,
  )
}
/** The scheduling state is told what happened, as the job runs and the reserve calls tell it. */
const told = (ctx: { readonly sched: Scheduling }, e: SchedEvent) => tell(ctx.sched, e)
/** `n` slots taken: slots taken or freed until so many are. */
const busy = (ctx: { readonly sched: Scheduling }, n: number) => {
  while (ctx.sched.busy < n) told(ctx, SLOT_TAKEN)
  while (ctx.sched.busy > n) told(ctx, SLOT_FREED)
}
/** Stand-ins for reserve calls in flight (only their number matters to the slot rules), told out. */
const callsOut = (ctx: { readonly sched: Scheduling }, n: number) => {
  for (let i = 0; i < n; i++) told(ctx, { _tag: "CallOut", fiber: {} as never })
}
/** Handlers that ran `ms` each, long enough for the moving average to be `ms` (within 1%). */
const paced = (ctx: { readonly sched: Scheduling }, ms: number) => {
  for (let i = 0; i < 40; i++) told(ctx, { _tag: "Paced", ms })
}

describe("Slots: the rules", () => {
  it("fewer calls out than the reserve script keeps re-send records for (4 a worker, lua/reserve.lua)", () => {
    // with 4 or more out, call n + 4 could go while call n is out and overwrite its record
    expect(MAX_RESERVES_IN_FLIGHT).toBeLessThan(4)
  })

  it("free slots are concurrency minus running minus asked-for", () => {
    const ctx = context(8)
    busy(ctx, 3)
    told(ctx, { _tag: "Asked", want: 2 })
    expect(freeSlots(ctx)).toBe(3)
  })

  it("with no call out, any free slot sends; a short (empty) answer sends none until woken", () => {
    const ctx = context(4)
    busy(ctx, 3)
    expect(canSend(ctx, false)).toBe(true)
    expect(canSend(ctx, true)).toBe(false)
    busy(ctx, 4)
    expect(canSend(ctx, false)).toBe(false)
  })

  it("with one call out, a second goes only once half the slots are free; never more than two out", () => {
    const ctx = context(4)
    callsOut(ctx, 1)
    busy(ctx, 3)
    expect(canSend(ctx, false)).toBe(false)
    busy(ctx, 2)
    expect(canSend(ctx, false)).toBe(true)
    callsOut(ctx, MAX_RESERVES_IN_FLIGHT - 1)
    busy(ctx, 0)
    expect(canSend(ctx, false)).toBe(false)
  })

  it("with no call out and quick handlers running, a freed slot lingers until half are free", () => {
    const ctx = context(16)
    paced(ctx, 0.1)
    busy(ctx, 15)
    expect(lingering(ctx)).toBe(true)
    expect(canSend(ctx, false)).toBe(false)
    busy(ctx, 8) // half free: the call is worth its round trip
    expect(canSend(ctx, false)).toBe(true)
    busy(ctx, 15)
    lingerEnded(ctx.sched) // the loop lingered LINGER_MS: the one free slot is asked for
    expect(canSend(ctx, false)).toBe(true)
  })

  it("no linger for slow or unmeasured handlers, an idle worker, or a call out", () => {
    const ctx = context(16)
    busy(ctx, 15)
    expect(lingering(ctx)).toBe(false) // no handler finished yet: pace unknown
    paced(ctx, LINGER_MS + 1)
    expect(lingering(ctx)).toBe(false)
    expect(canSend(ctx, false)).toBe(true)
    paced(ctx, 0.1)
    busy(ctx, 0)
    expect(lingering(ctx)).toBe(false)
    busy(ctx, 15)
    callsOut(ctx, 1)
    expect(lingering(ctx)).toBe(false)
  })

  it("while a call is out, a freed slot wakes the waiting loop only once a second call is worth sending", () => {
    const ctx = context(4)
    callsOut(ctx, 1)
    let rings = 0
    busy(ctx, 4)
    waitFor(ctx.sched, false, () => rings++)
    freeSlot(ctx) // 1 of 4 free: nothing for the loop to do
    expect(rings).toBe(0)
    expect(ctx.sched.loopWaits).toBe(true)
    freeSlot(ctx) // half free: a second call goes
    expect(rings).toBe(1)
  })

  it("freeing a slot wakes a loop that waits for one, once", () => {
    const ctx = context(1)
    let rings = 0
    busy(ctx, 1)
    waitFor(ctx.sched, false, () => rings++)
    freeSlot(ctx)
    freeSlot(ctx)
    expect(rings).toBe(1)
    expect(ctx.sched.loopWaits).toBe(false)
  })

  it.effect("waitEvent returns at once when a call landed, else when a slot frees", () =>
    Effect.gen(function* () {
      const ctx = context(1)
      busy(ctx, 1)
      const waiting = yield* Effect.forkChild(waitEvent(ctx, false), { startImmediately: true })
      yield* settle
      expect(waiting.pollUnsafe()).toBeUndefined()
      freeSlot(ctx)
      yield* Fiber.join(waiting)
      busy(ctx, 1)
      told(ctx, { _tag: "Landed", landed: { reserved: Exit.succeed({ jobs: [], nextDueMs: -1 }) } as never })
      yield* waitEvent(ctx, false) // returns: a landed call is an event
    }),
  )
  it.effect("a lingering wait ends by itself after LINGER_MS, with no slot freed; then the call goes", () =>
    Effect.gen(function* () {
      const ctx = context(16)
      paced(ctx, 0.1)
      busy(ctx, 15)
      expect(canSend(ctx, false)).toBe(false)
      const waiting = yield* Effect.forkChild(waitEvent(ctx, false), { startImmediately: true })
      yield* settle
      expect(waiting.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust(LINGER_MS)
      yield* Fiber.join(waiting)
      expect(ctx.sched.lingerOver).toBe(true)
      expect(canSend(ctx, false)).toBe(true)
    }),
  )
})

describe("Slots: a worker on the fake command layer", () => {
  it.effect(
    "a reserve call held in flight has spoken for every slot: no second call, never more jobs than concurrency",
    () =>
      Effect.gen(function* () {
        const fake = makeFake()
        const gate = yield* Deferred.make<void>()
        fake.on.reserve = (...a) => Deferred.await(gate).pipe(Effect.andThen(fake.defaults.reserve(...a)))
        const release = yield* Deferred.make<void>()
        const { program: p } = program(() => Deferred.await(release))
        fake.ready(...Array.from({ length: 10 }, (_, i) => `j${i}`))
        const h = yield* start(fake, settings({ concurrency: 4 }), p)
        yield* settle
        // the first call asked for all 4 slots and is held: nothing is free, so no second call
        expect(fake.of("reserve").map((c) => c.count)).toEqual([4])
        yield* Deferred.succeed(gate, undefined)
        yield* until(() => h.running() === 4, "4 running")
        yield* settle
        expect(h.running()).toBe(4)
        // every call asked only for slots free when it was sent
        expect(fake.of("reserve").every((c) => c.count <= 4)).toBe(true)
        yield* Deferred.succeed(release, undefined)
        yield* until(() => fake.of("reserve").reduce((n, c) => n + c.count, 0) >= 10, "all jobs asked for")
      }),
  )

  it.effect("a finished job's slot is filled again: the next call asks for exactly the freed slots", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const gates = new Map<string, Deferred.Deferred<void>>()
      const { program: p, events } = program((job) =>
        Effect.suspend(() => {
          const d = Deferred.makeUnsafe<void>()
          gates.set(job.id, d)
          return Deferred.await(d)
        }),
      )
      fake.ready("a", "b", "c", "d", "e")
      // without prefetch: only the slot a finished job frees is asked for
      const h = yield* start(fake, settings({ concurrency: 3, prefetch: 0 }), p)
      yield* until(() => h.running() === 3, "3 running")
      const before = fake.of("reserve").length
      yield* Deferred.succeed(gates.get("a")!, undefined)
      yield* until(() => events.completed.includes("a") && h.running() === 3, "a done, a successor runs")
      const next = fake.of("reserve").slice(before)
      expect(next[0]!.count).toBe(1)
      expect(next[0]!.completes).toEqual([{ id: "a", token: 1 }])
      for (const d of gates.values()) yield* Deferred.succeed(d, undefined)
    }),
  )
})
