/**
 * The worker's lifecycle, without Redis: the shutdown phases in order (quiet → drain →
 * abort → release, each bounded), a loop given up turning a running worker `failed`,
 * and `close` memoized. A whole worker runs on the fake command layer under the TestClock;
 * the phases a job goes through are checked on both ways of running it (`paths`: in a
 * fiber of its own, and as a plain function without one).
 */
import { it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { describe, expect } from "vitest"
import { ShutdownOverrun, WorkerLoopFailed } from "../../src/engine/model/Errors.ts"
import { advance, closeWorker, gate, makeFake, paths, program, settings, settle, start, until } from "./support/fake.ts"

describe.each(paths)("shutdown phases, on the $path path", (path) => {
  it.effect(
    "a handler that outlives the grace: draining until shutdownGraceMs, then releasing, its job released, then closed",
    () =>
      Effect.gen(function* () {
        const fake = makeFake()
        const { program: p, events, aborted } = path.untilAborted()
        fake.ready("a")
        const h = yield* start(fake, settings({ shutdownGraceMs: 2_000 }), p)
        yield* until(() => h.running() === 1, "a runs")
        const closing = yield* Effect.forkChild(h.close, { startImmediately: true })
        yield* settle
        expect(h.state()).toBe("draining")
        yield* advance(1_900)
        // still within the grace: the handler runs on, nothing released
        expect(h.state()).toBe("draining")
        expect(aborted()).toBe(false)
        expect(fake.of("release")).toEqual([])
        yield* advance(200)
        yield* until(() => closing.pollUnsafe() !== undefined, "close returns")
        expect(aborted()).toBe(true)
        expect(h.state()).toBe("closed")
        expect(fake.of("release").map((c) => c.leases)).toEqual([[{ id: "a", token: 1 }]])
        // an aborted job is given back, never acknowledged nor counted failed
        expect(fake.of("complete")).toEqual([])
        expect(fake.of("fail")).toEqual([])
        expect(events.completed).toEqual([])
        expect(events.failed).toEqual([])
      }),
  )

  it.effect("close waits for a handler that ends within the grace, and completes its job, not released", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const hold = gate()
      const { program: p, events } = path.endsWith(hold.promise)
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
    "a handler deaf to its abort is reported (ShutdownOverrun) and its lease left to expire, not released",
    () =>
      Effect.gen(function* () {
        const fake = makeFake()
        const stuck = gate()
        const { program: p, events } = path.endsWith(stuck.promise)
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
        stuck.resolve()
      }),
  )
})

describe("shutdown phases", () => {
  it.effect("close is memoized: a second call waits for the one shutdown", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const { program: p } = program(() => Effect.never)
      fake.ready("a")
      const h = yield* start(fake, settings({ shutdownGraceMs: 1_000 }), p)
      yield* until(() => h.running() === 1, "a runs")
      const first = yield* Effect.forkChild(h.close, { startImmediately: true })
      const second = yield* Effect.forkChild(h.close, { startImmediately: true })
      yield* until(() => first.pollUnsafe() !== undefined && second.pollUnsafe() !== undefined, "both return")
      yield* Fiber.join(second)
      expect(h.state()).toBe("closed")
      expect(fake.of("release").length).toBe(1)
    }),
  )

  it.effect("a reserve call that lands after close began gives its jobs back unstarted", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const gate = yield* Deferred.make<void>()
      fake.on.reserve = (...a) => Deferred.await(gate).pipe(Effect.andThen(fake.defaults.reserve(...a)))
      const { program: p, events } = program(() => Effect.void)
      fake.ready("a")
      const h = yield* start(fake, settings(), p)
      yield* settle
      expect(fake.of("reserve").length).toBe(1)
      const closing = yield* Effect.forkChild(h.close, { startImmediately: true })
      yield* settle
      yield* Deferred.succeed(gate, undefined)
      yield* until(() => closing.pollUnsafe() !== undefined, "close returns")
      expect(fake.of("release").map((c) => c.leases)).toEqual([[{ id: "a", token: 1 }]])
      expect(events.completed).toEqual([])
    }),
  )

  it.effect("close sends the give-back of a reserve call still out: the same call with count 0, right behind it", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const gate = yield* Deferred.make<void>()
      fake.on.reserve = (...a) => Deferred.await(gate).pipe(Effect.andThen(fake.defaults.reserve(...a)))
      const { program: p } = program(() => Effect.void)
      fake.ready("a")
      const h = yield* start(fake, settings(), p)
      yield* settle
      const closing = yield* Effect.forkChild(h.close, { startImmediately: true })
      yield* settle
      // sent before the call answered (Redis runs it right after the call, however late)
      expect(fake.of("reserve").map((c) => [c.requestId, c.count])).toEqual([
        ["1", 1],
        ["1", 0],
      ])
      yield* Deferred.succeed(gate, undefined)
      yield* until(() => closing.pollUnsafe() !== undefined, "close returns")
      expect(fake.of("reserve")).toHaveLength(2)
    }),
  )
})

describe("failed", () => {
  it.effect(
    "a loop that dies five times in a row is given up: the worker is failed, reserves no more, and still closes",
    () =>
      Effect.gen(function* () {
        const fake = makeFake()
        fake.on.sweep = () => Effect.die(new Error("sweep broke"))
        const { program: p, events } = program(() => Effect.void)
        // a wait short enough for the lease to take a reserve behind it (Reserve.ts reserveBehind)
        const h = yield* start(fake, settings({ sweep: { intervalMs: 100 }, blockTimeoutMs: 1_000 }), p)
        yield* until(() => h.state() === "failed", "failed")
        const reports = events.errors.filter((e): e is WorkerLoopFailed => e instanceof WorkerLoopFailed)
        expect(reports.map((r) => [r.loop, r.stopped])).toEqual([
          ["sweep", false],
          ["sweep", false],
          ["sweep", false],
          ["sweep", false],
          ["sweep", true],
        ])
        const reserves = fake.of("reserve").length
        fake.ready("x")
        yield* advance(10_000, 500)
        // only the reserve sent behind the marker wait before the failure runs, and its job
        // goes straight back, unstarted: no new call is sent
        expect(fake.of("reserve").length).toBe(reserves + 1)
        expect(fake.of("release").flatMap((r) => r.leases.map((l) => l.id))).toEqual(["x"])
        expect(events.completed).toEqual([])
        expect(h.state()).toBe("failed")
        yield* closeWorker(h)
        expect(h.state()).toBe("closed")
      }),
  )

  it.effect("a loop that fails and then recovers leaves the worker running", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      let n = 0
      fake.on.sweep = (...a) => (++n <= 2 ? Effect.die(new Error("transient")) : fake.defaults.sweep(...a))
      const { program: p, events } = program(() => Effect.void)
      const h = yield* start(fake, settings({ sweep: { intervalMs: 100 } }), p)
      yield* until(() => fake.of("sweep").length >= 5, "five sweeps")
      expect(h.state()).toBe("running")
      expect(events.errors.filter((e) => e instanceof WorkerLoopFailed).length).toBe(2)
    }),
  )
})
