/**
 * The adaptive batcher (src/engine/calls/Batcher.ts) under the TestClock: a call takes virtual
 * time, and what is submitted meanwhile goes in the next call, within the limits; a failed
 * call fails every item it carried and the batcher goes on with the next.
 */
import { it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import { makeBatcher } from "../../src/engine/calls/Batcher.ts"
import { settle } from "./support/fake.ts"

/** A run that takes 10 ms of virtual time, records its batch, and fails any batch holding a negative number. */
const timedRun = () => {
  const batches: number[][] = []
  const run = (items: ReadonlyArray<number>) =>
    Effect.gen(function* () {
      batches.push([...items])
      yield* Effect.sleep(10)
      if (items.some((n) => n < 0)) return yield* Effect.fail(`bad batch ${items.join(",")}`)
      return items.map((n) => n * 10)
    })
  return { batches, run }
}

describe("Batcher on the TestClock", () => {
  it.effect("the first submit goes alone at once; those made while it runs go together next, capped by count", () =>
    Effect.gen(function* () {
      const { batches, run } = timedRun()
      const b = makeBatcher(run, 3)
      const fibers = []
      for (let n = 1; n <= 6; n++) fibers.push(yield* Effect.forkChild(b.submit(n), { startImmediately: true }))
      yield* settle
      expect(batches).toEqual([[1]])
      yield* TestClock.adjust(10)
      yield* settle
      expect(batches).toEqual([[1], [2, 3, 4]])
      yield* TestClock.adjust(10)
      yield* settle
      yield* TestClock.adjust(10)
      expect(yield* Fiber.joinAll(fibers)).toEqual([10, 20, 30, 40, 50, 60])
      expect(batches).toEqual([[1], [2, 3, 4], [5, 6]])
    }),
  )

  it.effect("a failed call fails every item it carried, and the next batch still goes", () =>
    Effect.gen(function* () {
      const { batches, run } = timedRun()
      const b = makeBatcher(run, 10)
      const first = yield* Effect.forkChild(b.submit(1), { startImmediately: true })
      const bad = [
        yield* Effect.forkChild(b.submit(-1), { startImmediately: true }),
        yield* Effect.forkChild(b.submit(2), { startImmediately: true }),
      ]
      yield* TestClock.adjust(10)
      yield* settle
      const late = yield* Effect.forkChild(b.submit(3), { startImmediately: true })
      yield* TestClock.adjust(10)
      yield* settle
      yield* TestClock.adjust(10)
      expect(yield* Fiber.join(first)).toBe(10)
      for (const f of bad) expect(Exit.isFailure(yield* Fiber.await(f))).toBe(true)
      expect(yield* Fiber.join(late)).toBe(30)
      expect(batches).toEqual([[1], [-1, 2], [3]])
    }),
  )

  // offer() starts its drain with Effect.runFork, on the default runtime: it does not see the
  // caller's services (this test's TestClock), so its run here takes no time
  it.effect("offer answers through its callback, in order, each item once", () =>
    Effect.gen(function* () {
      const batches: number[][] = []
      const b = makeBatcher((items: ReadonlyArray<number>) => {
        batches.push([...items])
        return Effect.succeed(items.map((n) => n * 10))
      }, 2)
      const answers: Array<[number, unknown]> = []
      const all = Deferred.makeUnsafe<void>()
      for (const n of [1, 2, 3]) {
        b.offer(n, (exit) => {
          answers.push([n, Exit.isSuccess(exit) ? exit.value : "failed"])
          if (answers.length === 3) Deferred.doneUnsafe(all, Exit.void)
        })
      }
      yield* Deferred.await(all)
      expect(answers).toEqual([
        [1, 10],
        [2, 20],
        [3, 30],
      ])
      expect(batches.flat()).toEqual([1, 2, 3])
      expect(batches.every((x) => x.length <= 2)).toBe(true)
    }),
  )
})
