/**
 * The supervisor of a worker's long-lived loops, and the guards around user callbacks,
 * without Redis: a loop that fails is reported and restarted; one that fails too often
 * in a row is given up (the worker then turns `failed`); interrupting the supervisor
 * interrupts the loop without a report; a hook that throws never throws to its caller.
 */
import { Cause, Deferred, Effect, Fiber } from "effect"
import * as Exit from "effect/Exit"
import { describe, expect, it } from "vitest"
import { type CallbackFailed, InvalidPayload } from "../../src/engine/model/Errors.ts"
import { supervise } from "../../src/engine/worker/Lifecycle.ts"
import { encodeOutcome } from "../../src/engine/worker/run/Outcome.ts"
import { makeRateLimiter, safeHooks } from "../../src/engine/worker/WorkerHooks.ts"

describe("supervise", () => {
  it("a loop that dies twice is reported twice and restarted; it ends when the loop returns", async () => {
    const reports: Array<[unknown, boolean]> = []
    let runs = 0
    const loop = Effect.suspend(() => {
      runs++
      return runs <= 2 ? Effect.die(new Error(`defect ${runs}`)) : Effect.void
    })
    await Effect.runPromise(supervise(loop, { onFailure: (c, s) => reports.push([c, s]), pausesMs: [1] }))
    expect(runs).toBe(3)
    expect(reports.map(([c, s]) => [(c as Error).message, s])).toEqual([
      ["defect 1", false],
      ["defect 2", false],
    ])
  })

  it("a loop that keeps failing is given up after maxFailures, the last report says stopped", async () => {
    const reports: boolean[] = []
    let runs = 0
    const loop = Effect.suspend(() => {
      runs++
      return Effect.fail("always")
    })
    await Effect.runPromise(
      supervise(loop, { onFailure: (_c, stopped) => reports.push(stopped), pausesMs: [1], maxFailures: 4 }),
    )
    expect(runs).toBe(4)
    expect(reports).toEqual([false, false, false, true])
  })

  it("interrupting the supervisor interrupts the loop, with no report", async () => {
    const reports: unknown[] = []
    await Effect.runPromise(
      Effect.gen(function* () {
        const started = yield* Deferred.make<void>()
        const interrupted = yield* Deferred.make<void>()
        const loop = Deferred.succeed(started, undefined).pipe(
          Effect.andThen(Effect.never),
          Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)),
        )
        const fiber = yield* Effect.forkChild(supervise(loop, { onFailure: (c) => reports.push(c) }))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)
        yield* Deferred.await(interrupted)
      }),
    )
    expect(reports).toEqual([])
  })
})

describe("safeHooks", () => {
  it("a throwing hook becomes a CallbackFailed on the error hook; a throwing error hook goes to the last resort", () => {
    const errors: unknown[] = []
    const lastResort: unknown[] = []
    const hooks = safeHooks<unknown>(
      {
        leaseLost: () => {
          throw new Error("listener bug")
        },
        error: (e) => {
          errors.push(e)
          throw new Error("error hook bug")
        },
      },
      (e) => lastResort.push(e),
    )
    expect(() => hooks.leaseLost({ id: "a", token: 1 }, "lease-lost")).not.toThrow()
    expect(() => hooks.completed({} as never, 1)).not.toThrow() // a hook not given
    expect(errors).toHaveLength(1)
    expect((errors[0] as CallbackFailed).callback).toBe("the lease-lost hook")
    expect(lastResort).toHaveLength(1)
    expect((lastResort[0] as CallbackFailed).callback).toBe("the error hook")
  })
})

describe("encodeOutcome", () => {
  it("a result JSON cannot hold turns the exit into a failure naming the field result", () => {
    const { exit } = encodeOutcome(Exit.succeed(10n), (r) => JSON.stringify(r))
    expect(Exit.isFailure(exit)).toBe(true)
    const error = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
    expect(error).toBeInstanceOf(InvalidPayload)
    expect(encodeOutcome(Exit.succeed({ a: 1 }), (r) => JSON.stringify(r)).result).toBe('{"a":1}')
    expect(
      encodeOutcome(
        Exit.succeed(() => 1),
        (r) => JSON.stringify(r) as string,
      ).result,
    ).toBe("null")
  })
})

describe("makeRateLimiter", () => {
  it("lets one event through per window and counts the ones it held back", () => {
    const allow = makeRateLimiter(30_000)
    expect(allow(0)).toBe(0)
    expect(allow(1)).toBeUndefined()
    expect(allow(29_999)).toBeUndefined()
    expect(allow(30_000)).toBe(2)
    expect(allow(30_001)).toBeUndefined()
  })
})
