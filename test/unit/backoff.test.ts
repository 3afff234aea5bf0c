/**
 * Backoff and settling a failed job, without Redis: the built-in delays, the checks of a
 * backoff option, a backoff function that throws, hangs (10 s on the TestClock) or says
 * "no retry", and the worker's fail call: retry with the backoff's delay, final on the
 * last attempt, dead for a payload that does not decode.
 */
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, vi } from "vitest"
import { BACKOFF_TIMEOUT_MS, planRetry, retryDelay, validateBackoff } from "../../src/engine/model/Backoff.ts"
import { CallbackFailed, InvalidOptions } from "../../src/engine/model/Errors.ts"
import { makeFake, program, settings, settle, start, until } from "./support/fake.ts"

describe("retryDelay", () => {
  it("fixed is always the delay; exponential doubles per attempt up to maxDelayMs", () => {
    expect(retryDelay({ type: "fixed", delayMs: 700 }, 5)).toBe(700)
    const exp = { type: "exponential", delayMs: 1000, maxDelayMs: 5000, jitter: false } as const
    expect([1, 2, 3, 4, 40].map((a) => retryDelay(exp, a))).toEqual([1000, 2000, 4000, 5000, 5000])
  })

  it("jitter draws between half and all of the delay", () => {
    const exp = { type: "exponential", delayMs: 1000, maxDelayMs: 60_000, jitter: true } as const
    const spy = vi.spyOn(Math, "random")
    try {
      spy.mockReturnValue(0)
      expect(retryDelay(exp, 3)).toBe(2000)
      spy.mockReturnValue(0.999999)
      expect(retryDelay(exp, 3)).toBe(4000)
    } finally {
      spy.mockRestore()
    }
  })
})

describe("validateBackoff", () => {
  it("names the bad field and value", () => {
    const bad = (v: unknown) => {
      try {
        validateBackoff("backoff", v)
      } catch (e) {
        return e
      }
      return undefined
    }
    const neg = bad({ type: "fixed", delayMs: -1 })
    expect(neg).toBeInstanceOf(InvalidOptions)
    expect(neg).toMatchObject({ field: "backoff.delayMs", value: -1 })
    expect(bad({ type: "linear", delayMs: 1 })).toMatchObject({ field: "backoff.type", value: "linear" })
    expect(bad({ type: "exponential", delayMs: 1000, maxDelayMs: 10 })).toMatchObject({ field: "backoff.maxDelayMs" })
    expect(validateBackoff("backoff", undefined)).toMatchObject({ type: "exponential", delayMs: 1000 })
  })
})

describe("planRetry with a backoff function", () => {
  it.effect("a negative number means no retry; a number is rounded", () =>
    Effect.gen(function* () {
      expect(
        yield* planRetry(
          () => -1,
          1,
          "e",
          () => {},
        ),
      ).toEqual({ retry: false, delayMs: 0 })
      expect(
        yield* planRetry(
          () => 12.6,
          1,
          "e",
          () => {},
        ),
      ).toEqual({ retry: true, delayMs: 13 })
    }),
  )

  it.effect("a throw or a non-number is reported and the default backoff applies", () =>
    Effect.gen(function* () {
      const reports: unknown[] = []
      const thrown = yield* planRetry(
        () => {
          throw new Error("oops")
        },
        2,
        "e",
        (p) => reports.push(p),
      )
      const nan = yield* planRetry(
        () => Number.NaN,
        2,
        "e",
        (p) => reports.push(p),
      )
      expect(reports[0]).toBeInstanceOf(CallbackFailed)
      expect(reports[1]).toMatchObject({ _tag: "InvalidOptions", field: "backoff" })
      for (const plan of [thrown, nan]) {
        expect(plan.retry).toBe(true)
        expect(plan.delayMs).toBeGreaterThanOrEqual(1000)
        expect(plan.delayMs).toBeLessThanOrEqual(2000)
      }
    }),
  )

  it.effect("a Promise that never settles is given up after 10 s (TestClock), reported, and the default applies", () =>
    Effect.gen(function* () {
      const reports: unknown[] = []
      const f = yield* Effect.forkChild(
        planRetry(
          () => new Promise<number>(() => {}),
          1,
          "e",
          (p) => reports.push(p),
        ),
        { startImmediately: true },
      )
      yield* TestClock.adjust(BACKOFF_TIMEOUT_MS - 1)
      yield* settle
      expect(f.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust(1)
      yield* settle
      expect(f.pollUnsafe()).toBeDefined()
      expect(reports.length).toBe(1)
      expect(reports[0]).toBeInstanceOf(CallbackFailed)
    }),
  )
})

describe("a failed job on a worker", () => {
  it.effect(
    "the fail call carries the backoff's delay; the script's answer (retry or dead) is what the hooks are told",
    () =>
      Effect.gen(function* () {
        const fake = makeFake()
        // the script counts attempts: here it answers dead for b, retry for a
        fake.on.fail = (lease) => Effect.succeed(lease.id === "b" ? ("dead" as const) : ("retry" as const))
        const { program: p, events } = program(() => Effect.fail(new Error("handler broke")))
        fake.ready({ id: "a", attempt: 1, maxAttempts: 2 }, { id: "b", attempt: 2, maxAttempts: 2 })
        yield* start(fake, settings({ concurrency: 1, backoff: { type: "fixed", delayMs: 4_321 } }), p)
        yield* until(() => events.failed.length === 2, "both fail")
        expect(fake.of("fail").map((c) => [c.lease.id, c.mode, c.delayMs])).toEqual([
          ["a", "retry", 4_321],
          ["b", "retry", 4_321],
        ])
        expect(JSON.parse(fake.of("fail")[0]!.error)).toMatchObject({ name: "Error", message: "handler broke" })
        expect(events.failed.map((f) => [f.id, f.willRetry])).toEqual([
          ["a", true],
          ["b", false],
        ])
        expect(events.dead).toEqual([{ id: "b", reason: "failed" }])
        expect(events.completed).toEqual([])
      }),
  )

  it.effect(
    "a backoff function that says no retry makes the fail final; exponential delays grow with the attempt",
    () =>
      Effect.gen(function* () {
        const fake = makeFake()
        const { program: p, events } = program(() => Effect.fail("no"))
        fake.ready({ id: "a", attempt: 1 })
        yield* start(fake, settings({ backoff: () => -1 }), p)
        yield* until(() => events.failed.length === 1, "a fails")
        expect(fake.of("fail").map((c) => [c.lease.id, c.mode])).toEqual([["a", "final"]])
        const fake2 = makeFake()
        const run2 = program(() => Effect.fail("no"))
        fake2.ready({ id: "x", attempt: 1 }, { id: "y", attempt: 3 })
        const exp = { type: "exponential", delayMs: 100, jitter: false }
        yield* start(fake2, settings({ concurrency: 1, backoff: exp }), run2.program)
        yield* until(() => run2.events.failed.length === 2, "x and y fail")
        expect(fake2.of("fail").map((c) => c.delayMs)).toEqual([100, 400])
      }),
  )

  it.effect("a payload that does not decode goes to dead at once, without running the handler", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      let ran = false
      const { program: p, events } = program(() => Effect.sync(() => (ran = true)))
      fake.ready({ id: "a", payload: "{not json" })
      yield* start(fake, settings(), p)
      yield* until(() => events.dead.length === 1, "a dead")
      expect(ran).toBe(false)
      expect(fake.of("fail").map((c) => [c.lease.id, c.mode])).toEqual([["a", "dead"]])
      expect(JSON.parse(fake.of("fail")[0]!.error)).toMatchObject({ reason: "invalid-payload" })
      expect(events.dead).toEqual([{ id: "a", reason: "invalid-payload" }])
    }),
  )
})
