/**
 * What is particular to a job run without a fiber (PlainRun.ts: the Promise face's
 * handlers), without Redis: completes ride the next reserve with no job fiber left; a
 * throw, a rejection or a plain value returned is settled as the fiber path settles an
 * Effect's outcome; a payload that does not decode goes to dead without running the
 * handler. A whole worker runs on the fake command layer under the TestClock; the
 * program's Effect handler dies if the engine ever takes the fiber path for these jobs.
 * The scenarios the two paths share (close and its overrun, a lost lease, riders, acks
 * sent again) run on both in lifecycle, lease, riders and acks.test.ts (`paths` in
 * support/fake.ts).
 */
import { it } from "@effect/vitest"
import { trace } from "@opentelemetry/api"
import { Effect } from "effect"
import { describe, expect, onTestFinished } from "vitest"
import { makeFake, plainProgram, settings, start, until } from "./support/fake.ts"

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

  it.effect("a tracer that throws as a span starts is reported; the job still runs and completes, unrecorded", () =>
    Effect.gen(function* () {
      // a global tracer whose startSpan throws (a broken SDK or instrumentation)
      const broken = new Error("tracer broke")
      const tracer = {
        startSpan: () => {
          throw broken
        },
        startActiveSpan: () => {
          throw broken
        },
      }
      trace.setGlobalTracerProvider({ getTracer: () => tracer as never })
      onTestFinished(() => trace.disable())
      const fake = makeFake()
      const { program: p, events } = plainProgram((job) => Promise.resolve(job.id))
      fake.ready("a")
      yield* start(fake, settings(), p)
      yield* until(() => events.completed.length === 1, "a completed")
      expect(events.completed).toEqual(["a"])
      expect(events.errors).toEqual([broken])
    }),
  )
})
