/**
 * The reserve loop and the in-process sweep, without Redis: a failing reserve is reported
 * and retried after growing pauses; an empty answer makes the loop block on the marker
 * for the block timeout, or only until the next delayed job is due; a job a sweep moved
 * to dead is told to the dead hook. Time is the TestClock.
 */
import { it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { describe, expect } from "vitest"
import { RedisUnavailable } from "../../src/engine/model/Errors.ts"
import { advance, makeFake, program, settings, start, until } from "./support/fake.ts"

describe("reserve loop", () => {
  it.effect("a reserve that fails is reported and retried after 100, 200, 500, 1000, 2000, 2000 ms", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const at: number[] = []
      fake.on.reserve = () =>
        Effect.gen(function* () {
          at.push(yield* Clock.currentTimeMillis)
          return yield* Effect.fail(new RedisUnavailable({ reason: "fake: connection refused" }))
        })
      const { program: p, events } = program(() => Effect.void)
      const t0 = yield* Clock.currentTimeMillis
      yield* start(fake, settings(), p)
      yield* until(() => at.length === 7, "seven attempts", 20_000, 50)
      expect(at.map((t) => t - t0)).toEqual([0, 100, 300, 800, 1_800, 3_800, 5_800])
      expect(events.errors.filter((e) => e instanceof RedisUnavailable).length).toBe(7)
    }),
  )

  it.effect("after a failure, one answered call resets the pauses", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const at: number[] = []
      let n = 0
      fake.on.reserve = (...a) =>
        Effect.gen(function* () {
          at.push(yield* Clock.currentTimeMillis)
          n++
          // fail, fail, answer (with a job), then fail again: the pause starts over at 100
          if (n === 3) return yield* fake.defaults.reserve(...a)
          return yield* Effect.fail(new RedisUnavailable({ reason: "fake: connection refused" }))
        })
      fake.ready("a")
      const { program: p } = program(() => Effect.void)
      const t0 = yield* Clock.currentTimeMillis
      yield* start(fake, settings(), p)
      yield* until(() => at.length === 5, "five calls", 20_000, 50)
      expect(at.map((t) => t - t0)).toEqual([0, 100, 300, 300, 400])
    }),
  )

  it.effect("an empty answer blocks on the marker for blockTimeoutMs, or only until the next delayed job is due", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      let n = 0
      fake.on.reserve = (...a) =>
        fake.defaults.reserve(...a).pipe(Effect.map((r) => ({ ...r, nextDueMs: ++n === 1 ? 700 : -1 })))
      const { program: p } = program(() => Effect.void)
      yield* start(fake, settings({ blockTimeoutMs: 4_000 }), p)
      yield* until(() => fake.of("block").length === 1, "first marker wait")
      expect(fake.of("block")[0]!.timeoutMs).toBe(700)
      // a marker wait that ends (here: jobs were added) leads to a reserve; empty again, the next wait is the full timeout
      fake.ready()
      yield* until(() => fake.of("block").length === 2, "second marker wait")
      expect(fake.of("block")[1]!.timeoutMs).toBe(4_000)
      expect(fake.of("reserve").length).toBe(2)
    }),
  )

  it.effect(
    "a wait short for the lease carries a reserve for the free slots, run when it ends; a long one goes alone",
    () =>
      Effect.gen(function* () {
        // leaseMs 3000, heartbeat 1000: the fence is at 2500 ms, so waits under 1250 ms take a reserve
        const short = makeFake()
        const { program: p } = program(() => Effect.void)
        yield* start(short, settings({ concurrency: 4, prefetch: 0, blockTimeoutMs: 1_000 }), p)
        yield* until(() => short.of("block").length === 1, "blocked on the marker")
        expect(short.of("block")[0]!.withReserve).toBe(4)
        expect(short.of("reserve").length).toBe(1) // the first call; the one behind the wait waits for it
        short.ready("a")
        yield* until(() => short.of("reserve").length === 2, "the reserve behind the wait ran")
        const ops = short.calls.map((c) => c.op).filter((op) => op === "reserve" || op === "block")
        expect(ops.slice(0, 3)).toEqual(["reserve", "block", "reserve"])

        const long = makeFake()
        yield* start(long, settings({ concurrency: 4, prefetch: 0, blockTimeoutMs: 2_000 }), p)
        yield* until(() => long.of("block").length === 1, "blocked on the marker")
        expect(long.of("block")[0]!.withReserve).toBeUndefined()
      }),
  )

  it.effect(
    "a marker wait refused with BUSY fails its reserve too: reported once, not sent again (it never ran), and the loop takes the next job",
    () =>
      Effect.gen(function* () {
        const fake = makeFake()
        // what ioredis rejects with when Redis answers the wait with an error reply
        fake.blockRefusals.push(Object.assign(new Error("BUSY Redis is busy running a script"), { name: "ReplyError" }))
        const { program: p, events } = program(() => Effect.void)
        yield* start(fake, settings({ concurrency: 4, prefetch: 0, blockTimeoutMs: 1_000 }), p)
        yield* until(() => fake.of("block").length === 2, "blocked again after the refused wait")
        const refused = fake.of("block")[0]!
        expect(refused.withReserve).toBe(4)
        // the reserve behind the refused wait never ran, and is not sent again (same request id)
        expect(refused.reserveId).toBeDefined()
        expect(fake.of("reserve").map((c) => c.requestId)).not.toContain(refused.reserveId)
        expect(events.errors.map(String).filter((m) => m.includes("BUSY"))).toHaveLength(1)
        fake.ready("a")
        yield* until(() => events.completed.includes("a"), "the next job completed")
      }),
  )

  it.effect("a job added while the loop blocks wakes it: the next reserve hands it out", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const { program: p, events } = program(() => Effect.void)
      yield* start(fake, settings(), p)
      yield* until(() => fake.of("block").length === 1, "blocked on the marker")
      yield* advance(1_000)
      expect(fake.of("reserve").length).toBe(1)
      fake.ready("a")
      yield* until(() => events.completed.length === 1, "a completes", 100, 10)
    }),
  )
})

describe("in-process sweep", () => {
  it.effect("jobs a sweep pass moved to dead are told to the dead hook as lease-expired", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      let n = 0
      fake.on.sweep = (...a) =>
        ++n === 1
          ? fake.defaults
              .sweep(...a)
              .pipe(Effect.map((r) => ({ ...r, dead: 1, deadJobs: [{ id: "z", token: 9, message: "lease expired" }] })))
          : fake.defaults.sweep(...a)
      const { program: p, events } = program(() => Effect.void)
      yield* start(fake, settings({ sweep: { intervalMs: 1_000, limit: 50 } }), p)
      yield* until(() => events.dead.length === 1, "z reported dead")
      expect(events.dead).toEqual([{ id: "z", reason: "lease-expired" }])
      expect(fake.of("sweep")[0]!.limit).toBe(50)
    }),
  )
})
