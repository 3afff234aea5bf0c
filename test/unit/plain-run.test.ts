/**
 * A job run without a fiber (PlainRun.ts: the Promise face's handlers), without Redis: the
 * same outcomes as the fiber path — completes ride the next reserve, a rejection is
 * failed with its retry plan, a payload that does not decode goes to dead, a lost lease is
 * never acknowledged and keeps its slot until the handler's promise settles, and close
 * waits for the handlers (and reports one deaf to its abort, leaving its lease to expire).
 * A whole worker runs on the fake command layer under the TestClock; the program's Effect
 * handler dies if the engine ever takes the fiber path for these jobs.
 */
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import { LeaseLost, ShutdownOverrun } from "../../src/engine/Errors.ts"
import {
  advance,
  closeWorker,
  makeFake,
  plainProgram,
  replyError,
  settings,
  start,
  until,
  virtualMonotonic,
} from "./support/fake.ts"

/** A promise and the functions that settle it. */
const gate = <A = void>() => {
  let resolve!: (a: A) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<A>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

describe("plain runs (no fiber per job)", () => {
  it.effect("jobs complete, their completes riding the next reserve calls; no job fiber is left", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const seen: Array<{ id: string; attempt: number; token: number; payload: unknown }> = []
      const { program: p, events } = plainProgram((job) => {
        seen.push({ id: job.id, attempt: job.attempt, token: job.token, payload: job.payload })
        return Promise.resolve(job.id)
      })
      fake.ready("a", "b", "c")
      const h = yield* start(fake, settings({ concurrency: 2 }), p)
      yield* until(() => events.completed.length === 3, "all completed")
      expect(events.completed.sort()).toEqual(["a", "b", "c"])
      expect(seen.map((s) => s.payload)).toEqual([{ id: "a" }, { id: "b" }, { id: "c" }])
      expect(seen.every((s) => s.attempt === 1 && s.token > 0)).toBe(true)
      const acked = [
        ...fake.of("reserve").flatMap((c) => c.completes.map((l) => l.id)),
        ...fake.of("complete").flatMap((c) => c.items.map((l) => l.id)),
      ]
      expect(acked.sort()).toEqual(["a", "b", "c"])
      expect(h.running()).toBe(0)
      expect(events.errors).toEqual([])
    }),
  )

  it.effect("a handler that throws or rejects is failed with a retry; a sync return completes", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const { program: p, events } = plainProgram((job) => {
        if (job.id === "throws") throw new Error("boom")
        if (job.id === "rejects") return Promise.reject(new Error("no"))
        return 42
      })
      fake.ready("throws", "rejects", "sync")
      yield* start(fake, settings({ concurrency: 3 }), p)
      yield* until(() => events.failed.length === 2 && events.completed.length === 1, "settled")
      expect(events.failed.map((f) => [f.id, f.willRetry, (f.error as Error).message]).sort()).toEqual([
        ["rejects", true, "no"],
        ["throws", true, "boom"],
      ])
      expect(
        fake
          .of("fail")
          .map((c) => [c.lease.id, c.mode])
          .sort(),
      ).toEqual([
        ["rejects", "retry"],
        ["throws", "retry"],
      ])
      expect(events.completed).toEqual(["sync"])
    }),
  )

  it.effect("a payload that does not decode goes to dead at once, without running the handler", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      let ran = 0
      const { program: p, events } = plainProgram(() => {
        ran++
      })
      fake.ready({ id: "bad", payload: "{not json" })
      yield* start(fake, settings(), p)
      yield* until(() => events.dead.length === 1, "dead")
      expect(events.dead).toEqual([{ id: "bad", reason: "invalid-payload" }])
      expect(fake.of("fail").map((c) => c.mode)).toEqual(["dead"])
      expect(ran).toBe(0)
    }),
  )

  it.effect(
    "a lease lost while the handler runs: signal aborted, slot held until the promise settles, never acked",
    () =>
      Effect.gen(function* () {
        yield* virtualMonotonic
        const fake = makeFake()
        const hold = gate()
        let signal: AbortSignal | undefined
        const { program: p, events } = plainProgram((job) => {
          signal = job.signal
          return hold.promise
        })
        fake.on.extend = (leases) => Effect.succeed(leases.map(() => 0))
        fake.ready("a")
        const h = yield* start(fake, settings({ leaseMs: 3_000, heartbeatMs: 1_000 }), p)
        yield* until(() => h.running() === 1, "a runs")
        yield* advance(1_100)
        expect(signal?.aborted).toBe(true)
        expect(signal?.reason).toBeInstanceOf(LeaseLost)
        expect(events.leaseLost).toEqual([{ id: "a", token: 1, why: "lease-lost" }])
        // the handler has not returned: its slot stays taken
        expect(h.running()).toBe(1)
        hold.resolve()
        yield* until(() => h.running() === 0, "a's slot freed")
        expect(fake.of("complete")).toEqual([])
        expect(fake.of("fail")).toEqual([])
        expect(fake.of("reserve").flatMap((c) => c.completes)).toEqual([])
        expect(events.completed).toEqual([])
      }),
  )

  it.effect("close waits for a running handler within the grace, and completes its job", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const hold = gate()
      const { program: p, events } = plainProgram(() => hold.promise)
      fake.ready("a")
      const h = yield* start(fake, settings({ shutdownGraceMs: 5_000 }), p)
      yield* until(() => h.running() === 1, "a runs")
      const closing = yield* Effect.forkChild(h.close, { startImmediately: true })
      yield* advance(1_000)
      expect(h.state()).toBe("draining")
      hold.resolve()
      yield* until(() => closing.pollUnsafe() !== undefined, "close returns")
      expect(events.completed).toEqual(["a"])
      expect(fake.of("release")).toEqual([])
      expect(h.state()).toBe("closed")
    }),
  )

  it.effect(
    "a handler deaf to its abort at close: reported (ShutdownOverrun), lease left to expire, not released",
    () =>
      Effect.gen(function* () {
        const fake = makeFake()
        const hold = gate()
        const { program: p, events } = plainProgram(() => hold.promise)
        fake.ready("a")
        const h = yield* start(fake, settings({ shutdownGraceMs: 1_000, shutdownAbortGraceMs: 1_000 }), p)
        yield* until(() => h.running() === 1, "a runs")
        yield* closeWorker(h)
        expect(h.state()).toBe("closed")
        expect(
          events.errors.filter((e) => e instanceof ShutdownOverrun).map((e) => (e as ShutdownOverrun).jobId),
        ).toEqual(["a"])
        expect(fake.of("release")).toEqual([])
        expect(fake.of("complete")).toEqual([])
        hold.resolve()
      }),
  )

  it.effect("a handler that ends after its abort at close (within the abort grace) has its lease released", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const { program: p, events } = plainProgram(
        (job) =>
          new Promise<void>((_, reject) => {
            job.signal.addEventListener("abort", () => reject(job.signal.reason))
          }),
      )
      fake.ready("a")
      const h = yield* start(fake, settings({ shutdownGraceMs: 1_000, shutdownAbortGraceMs: 1_000 }), p)
      yield* until(() => h.running() === 1, "a runs")
      yield* closeWorker(h)
      expect(fake.of("release").map((c) => c.leases)).toEqual([[{ id: "a", token: 1 }]])
      expect(fake.of("fail")).toEqual([])
      expect(events.failed).toEqual([])
    }),
  )
})

describe("plain runs: acknowledgements under faults", () => {
  it.effect("a reserve refused before it ran (BUSY) sends its rider on its own, and the job completes once", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      fake.on.reserve = (...a) =>
        (a[3] ?? []).length > 0
          ? Effect.fail(replyError("BUSY Redis is busy running a script"))
          : fake.defaults.reserve(...a)
      const { program: p, events } = plainProgram(() => Promise.resolve())
      fake.ready("a")
      yield* start(fake, settings({ concurrency: 1 }), p)
      yield* until(() => events.completed.length === 1, "a completes")
      expect(fake.of("complete").map((c) => c.items)).toEqual([[{ id: "a", token: 1 }]])
      expect(events.completed).toEqual(["a"])
      expect(events.leaseLost).toEqual([])
    }),
  )

  it.effect("a rider the script answers false (lease lost) is reported as a lost lease, not completed", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      fake.on.reserve = (...a) =>
        fake.defaults.reserve(...a).pipe(Effect.map((r) => ({ ...r, completed: r.completed.map(() => false) })))
      const { program: p, events } = plainProgram(() => Promise.resolve())
      fake.ready("a")
      yield* start(fake, settings({ concurrency: 1 }), p)
      yield* until(() => events.leaseLost.length === 1, "a reported lost")
      expect(events.completed).toEqual([])
      expect(events.leaseLost).toEqual([{ id: "a", token: 1, why: "lease-lost" }])
    }),
  )

  it.effect("a complete sent alone and refused twice (BUSY) is sent until answered; the job completes once", () =>
    Effect.gen(function* () {
      yield* virtualMonotonic
      const fake = makeFake()
      let n = 0
      fake.on.complete = (...a) => (++n <= 2 ? Effect.fail(replyError("BUSY busy")) : fake.defaults.complete(...a))
      const { program: p, events } = plainProgram(() => Promise.resolve())
      fake.ready("a")
      // ride-along off: every complete goes on its own
      yield* start(fake, settings({}, false), p)
      yield* until(() => events.completed.length === 1, "a completes")
      expect(fake.of("complete").length).toBe(3)
      expect(fake.of("reserve").flatMap((c) => c.completes)).toEqual([])
      expect(events.errors.length).toBe(2)
      expect(events.leaseLost).toEqual([])
    }),
  )
})
