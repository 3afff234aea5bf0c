/**
 * Riders, without Redis: a finished job's complete rides on the reserve call its freed
 * slot triggers (one script call for both); a rider whose reserve fails is sent on its
 * own and still completes; with ride-along off every complete goes alone. A worker's
 * riders are checked on both ways of running a job (`paths`: in a fiber, and as a plain
 * function).
 */
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import { makeContext } from "../../src/engine/worker/Context.ts"
import { flushRiders, makeRider } from "../../src/engine/worker/loop/Riders.ts"
import { tell } from "../../src/engine/worker/loop/Scheduling.ts"
import { makeFake, paths, program, replyError, settings, start, until } from "./support/fake.ts"

describe("a rider", () => {
  it("is answered once: a listener gets the first answer, later answers are ignored", () => {
    const r = makeRider({ id: "a", token: 1 })
    const heard: unknown[] = []
    r.listen((a) => heard.push(a))
    r.answer(true)
    r.answer(false)
    expect(heard).toEqual([true])
  })

  it("a listener that comes after the answer hears it at once; one that stopped listening hears nothing", () => {
    const late = makeRider({ id: "a", token: 1 })
    late.answer(false)
    const heard: unknown[] = []
    late.listen((a) => heard.push(a))
    expect(heard).toEqual([false])
    const quit = makeRider({ id: "b", token: 2 })
    const stop = quit.listen((a) => heard.push(a))
    stop()
    quit.answer(true)
    expect(heard).toEqual([false])
  })

  it.effect("flushRiders tells every waiting rider to go on its own", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const ctx = makeContext(fake.commands, fake.blocking, settings(), program(() => Effect.void).program)
      const heard: unknown[] = []
      for (const id of ["a", "b"]) {
        const r = makeRider({ id, token: 1 })
        r.listen((a) => heard.push(a))
        tell(ctx.sched, { _tag: "Rider", rider: r })
      }
      yield* flushRiders(ctx)
      expect(heard).toEqual([
        { resend: true, uncertain: false },
        { resend: true, uncertain: false },
      ])
      expect(ctx.sched.riding).toEqual([])
    }),
  )
})

describe.each(paths)("riders on a worker, on the $path path", (path) => {
  it.effect("a finished job's complete rides on the next reserve call; no complete call of its own", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const { program: p, events } = path.ends()
      fake.ready("a", "b")
      // without prefetch, so each job is its own reserve call and a's complete rides b's
      yield* start(fake, settings({ concurrency: 1, prefetch: 0 }), p)
      yield* until(() => events.completed.length === 2, "a and b complete")
      expect(fake.of("complete")).toEqual([])
      expect(fake.of("reserve").flatMap((c) => c.completes)).toEqual([
        { id: "a", token: 1 },
        { id: "b", token: 2 },
      ])
    }),
  )

  it.effect("with ride-along off, every complete goes on its own", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      const { program: p, events } = path.ends()
      fake.ready("a", "b")
      yield* start(fake, settings({ concurrency: 1 }, false), p)
      yield* until(() => events.completed.length === 2, "a and b complete")
      expect(fake.of("reserve").flatMap((c) => c.completes)).toEqual([])
      expect(fake.of("complete").flatMap((c) => c.items)).toEqual([
        { id: "a", token: 1 },
        { id: "b", token: 2 },
      ])
    }),
  )
  it.effect("a reserve refused before it ran (BUSY) sends its rider on its own, and the job completes once", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      fake.on.reserve = (...a) =>
        (a[3] ?? []).length > 0
          ? Effect.fail(replyError("BUSY Redis is busy running a script"))
          : fake.defaults.reserve(...a)
      const { program: p, events } = path.ends()
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
      const { program: p, events } = path.ends()
      fake.ready("a")
      yield* start(fake, settings({ concurrency: 1 }), p)
      yield* until(() => events.leaseLost.length === 1, "a reported lost")
      expect(events.completed).toEqual([])
      expect(events.leaseLost).toEqual([{ id: "a", token: 1, why: "lease-lost" }])
    }),
  )
})
