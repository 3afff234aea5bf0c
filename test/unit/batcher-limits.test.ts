/**
 * The adaptive Batcher on its own (no Redis: `run` is a plain function that records
 * the batches it is given). Items submitted while a call is in flight go out in later
 * calls, never more than the limits allow, and none is ever left waiting.
 */
import { Deferred, Effect, Exit, Fiber } from "effect"
import * as Scheduler from "effect/Scheduler"
import { describe, expect, it } from "vitest"
import { makeBatcher } from "../../src/engine/calls/Batcher.ts"

/** A `run` that echoes its inputs, records each batch, and holds the first call until `open`. */
const recorder = <I>() => {
  const batches: I[][] = []
  const gate = Deferred.makeUnsafe<void>()
  const run = (items: ReadonlyArray<I>) =>
    Effect.gen(function* () {
      batches.push([...items])
      if (batches.length === 1) yield* Deferred.await(gate)
      return items
    })
  return { batches, run, gate }
}

describe("Batcher", () => {
  it("S1: a submit made as a drain's last batch is answered is sent, not left waiting (scheduler yielding often)", async () => {
    /** One round: 1 is held in flight, 2 queues behind it, and 3 is submitted by 2's fiber
     * `spacer` steps after 2 is answered, that is, around the time the drainer that sent 2
     * stands down. The scheduler yields every `ops` steps, so the fibers interleave there. */
    const round = (ops: number, spacer: number) => {
      const { batches, run, gate } = recorder<number>()
      const b = makeBatcher(run, 10)
      return Effect.gen(function* () {
        const first = yield* Effect.forkChild(b.submit(1), { startImmediately: true })
        const second = yield* Effect.forkChild(
          Effect.gen(function* () {
            const two = yield* b.submit(2)
            for (let i = 0; i < spacer; i++) yield* Effect.void
            return [two, yield* b.submit(3)]
          }),
          { startImmediately: true },
        )
        yield* Deferred.succeed(gate, undefined)
        expect(yield* Fiber.join(first)).toBe(1)
        // a hang here is the bug: 3 waits for a later call that never comes
        const answers = yield* Fiber.join(second).pipe(
          Effect.timeoutOrElse({ duration: "5 seconds", orElse: () => Effect.succeed("stuck" as const) }),
        )
        return { answers, sent: batches.flat().sort() }
      }).pipe(Effect.provideService(Scheduler.MaxOpsBeforeYield, ops))
    }
    for (let ops = 3; ops <= 10; ops++) {
      for (let spacer = 0; spacer <= 6; spacer++) {
        expect(await Effect.runPromise(round(ops, spacer)), `ops ${ops}, spacer ${spacer}`).toEqual({
          answers: [2, 3],
          sent: [1, 2, 3],
        })
      }
    }
  })

  it("offer: items offered while a call is in flight go out together next, each answered once, with its own output", async () => {
    const { batches, run, gate } = recorder<number>()
    const b = makeBatcher(run, 10)
    const answers: Array<[number, unknown]> = []
    const all = new Promise<void>((resolve) => {
      for (const n of [1, 2, 3, 4]) {
        b.offer(n, (exit) => {
          answers.push([n, Exit.isSuccess(exit) ? exit.value : "failed"])
          if (answers.length === 4) resolve()
        })
      }
    })
    await Effect.runPromise(Deferred.succeed(gate, undefined))
    await all
    expect(batches).toEqual([[1], [2, 3, 4]])
    expect(answers.sort()).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
    ])
  })

  it("caps a batch by count and by weight; an item heavier than the cap goes alone", async () => {
    const { batches, run, gate } = recorder<number>()
    const b = makeBatcher(run, { maxItems: 3, maxWeight: 10, weight: (n) => n })
    const program = Effect.gen(function* () {
      const fibers = [yield* Effect.forkChild(b.submit(0), { startImmediately: true })]
      for (const n of [1, 1, 1, 1, 4, 4, 4, 25, 2]) {
        fibers.push(yield* Effect.forkChild(b.submit(n), { startImmediately: true }))
      }
      yield* Deferred.succeed(gate, undefined)
      return yield* Fiber.joinAll(fibers)
    })
    expect(await Effect.runPromise(program)).toEqual([0, 1, 1, 1, 1, 4, 4, 4, 25, 2])
    // first the held call alone; then at most 3 items and at most weight 10 per call
    expect(batches).toEqual([[0], [1, 1, 1], [1, 4, 4], [4], [25], [2]])
  })

  it("awaitCallers: callers that submit again after a Promise continuation join the next call", async () => {
    const sizes = async (awaitCallers: boolean) => {
      const batches: number[][] = []
      const b = makeBatcher(
        (items: ReadonlyArray<number>) =>
          Effect.promise(async () => {
            batches.push([...items])
            await new Promise((resolve) => setTimeout(resolve, 1))
            return items
          }),
        { maxItems: 100, awaitCallers },
      )
      // 4 callers, each adding 5 items one after the other through the Promise face
      await Promise.all(
        [0, 1, 2, 3].map(async (c) => {
          for (let k = 0; k < 5; k++) expect(await Effect.runPromise(b.submit(c * 10 + k))).toBe(c * 10 + k)
        }),
      )
      expect(batches.flat().sort((x, y) => x - y)).toHaveLength(20)
      return batches.map((x) => x.length)
    }
    // the first call alone, the three that came meanwhile, then all four callers each call
    expect(await sizes(true)).toEqual([1, 3, 4, 4, 4, 4])
    // without it, a caller answered first goes alone while the others are still resuming
    expect((await sizes(false)).length).toBeGreaterThan(6)
  })
})
