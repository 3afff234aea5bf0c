/**
 * Acks sent until answered (Acks.ts), without Redis: a complete that meets an error reply
 * is sent again with backoff until answered; one that cannot be delivered before the
 * lease is surely gone is reported and counted lost; one still unanswered when close
 * stops waiting has its lease released. Time is the TestClock (and the engine's
 * monotonic clock reads it: `virtualMonotonic`). A complete sent again is checked on both
 * ways of running a job (`paths`: in a fiber, and as a plain function).
 */
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import { AckUndelivered, RedisCommandError, RedisUnavailable } from "../../src/engine/model/Errors.ts"
import { completeLanded, deliver, failLanded, fireStop, makeStopSignal } from "../../src/engine/worker/lease/Acks.ts"
import { HELD } from "../../src/engine/worker/lease/LeaseState.ts"
import type { Held } from "../../src/engine/worker/lease/LeaseTable.ts"
import {
  closeWorker,
  makeFake,
  paths,
  program,
  replyError,
  settings,
  settle,
  start,
  until,
  virtualMonotonic,
} from "./support/fake.ts"

const held = (localDeadline: number): Held => ({
  id: "a",
  token: 1,
  attempt: 1,
  maxAttempts: 3,
  localDeadline,
  controller: undefined,
  fiber: undefined,
  state: HELD,
})

describe("deliver", () => {
  it.effect("an error reply is retried after 50, 100, 200 ms until answered; each failure is reported", () =>
    Effect.gen(function* () {
      yield* virtualMonotonic
      let n = 0
      const errors: unknown[] = []
      const call = Effect.suspend(() => (++n <= 3 ? Effect.fail(replyError("BUSY busy")) : Effect.succeed("ok")))
      const d = yield* Effect.forkChild(
        deliver(call, { held: held(60_000), stop: makeStopSignal(), onError: (e) => errors.push(e) }),
        { startImmediately: true },
      )
      yield* until(() => d.pollUnsafe() !== undefined, "answered", 1_000, 10)
      expect(n).toBe(4)
      expect(errors.length).toBe(3)
      // BUSY is a refusal before the script ran: the answer is certain
      expect((d.pollUnsafe() as { value: unknown }).value).toEqual({ _tag: "answered", value: "ok", uncertain: false })
    }),
  )

  it.effect("a dropped connection makes the outcome uncertain; the stop signal ends the attempts", () =>
    Effect.gen(function* () {
      yield* virtualMonotonic
      const stop = makeStopSignal()
      const call = Effect.fail(new RedisUnavailable({ reason: "Connection is closed." }))
      const d = yield* Effect.forkChild(deliver(call, { held: held(60_000), stop, onError: () => {} }), {
        startImmediately: true,
      })
      yield* settle
      expect(d.pollUnsafe()).toBeUndefined()
      fireStop(stop)
      yield* settle
      expect((d.pollUnsafe() as { value: unknown }).value).toEqual({
        _tag: "undelivered",
        reason: "stopped",
        uncertain: true,
      })
    }),
  )

  it.effect("attempts stop once the next pause would pass the lease's local deadline", () =>
    Effect.gen(function* () {
      yield* virtualMonotonic
      let n = 0
      const call = Effect.suspend(() => {
        n++
        return Effect.fail(replyError("BUSY busy"))
      })
      const d = yield* Effect.forkChild(deliver(call, { held: held(400), stop: makeStopSignal(), onError: () => {} }), {
        startImmediately: true,
      })
      yield* until(() => d.pollUnsafe() !== undefined, "given up", 2_000, 10)
      // attempts at 0, 50, 150, 350; the next pause (500 ms) would end past 400
      expect(n).toBe(4)
      expect((d.pollUnsafe() as { value: unknown }).value).toEqual({
        _tag: "undelivered",
        reason: "lease-expired",
        uncertain: false,
      })
    }),
  )
})

describe.each(paths)("acks on a worker, on the $path path", (path) => {
  it.effect("a complete sent alone and refused twice (BUSY) is sent until answered; the job completes once", () =>
    Effect.gen(function* () {
      yield* virtualMonotonic
      const fake = makeFake()
      let n = 0
      fake.on.complete = (...a) => (++n <= 2 ? Effect.fail(replyError("BUSY busy")) : fake.defaults.complete(...a))
      const { program: p, events } = path.ends()
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

describe("acks on a worker", () => {
  it.effect(
    "a complete that cannot be delivered while the lease holds is reported (AckUndelivered) and counted lost",
    () =>
      Effect.gen(function* () {
        yield* virtualMonotonic
        const fake = makeFake()
        const down = () => Effect.fail(new RedisUnavailable({ reason: "fake: connection refused" }))
        fake.on.complete = down
        fake.on.extend = down
        const { program: p, events } = program(() => Effect.void)
        fake.ready("a")
        yield* start(fake, settings({ leaseMs: 3_000, heartbeatMs: 1_000 }, false), p)
        yield* until(() => events.leaseLost.length === 1, "a counted lost")
        const undelivered = events.errors.filter((e): e is AckUndelivered => e instanceof AckUndelivered)
        expect(undelivered.map((e) => [e.jobId, e.ack, e.reason])).toEqual([["a", "complete", "lease-expired"]])
        expect(events.completed).toEqual([])
      }),
  )

  it.effect("an ack still unanswered when close stops waiting: its lease is released at close", () =>
    Effect.gen(function* () {
      yield* virtualMonotonic
      const fake = makeFake()
      fake.on.complete = () => Effect.fail(replyError("BUSY busy"))
      const { program: p, events } = program(() => Effect.void)
      fake.ready("a")
      const h = yield* start(fake, settings({ shutdownGraceMs: 1_000 }, false), p)
      yield* until(() => fake.of("complete").length >= 2, "the complete is being retried")
      yield* closeWorker(h)
      expect(fake.of("release").map((c) => c.leases)).toEqual([[{ id: "a", token: 1 }]])
      expect(events.errors.some((e) => e instanceof AckUndelivered && e.reason === "stopped")).toBe(true)
      expect(events.completed).toEqual([])
    }),
  )
})

describe("did an uncertain ack land (completeLanded, failLanded)", () => {
  /** The fake's commands, their client refusing every plain command as Redis would (a reply error). */
  const refusing = () => {
    const fake = makeFake()
    const sent: string[] = []
    Object.assign(fake.commands.client, {
      command: (name: string) => {
        sent.push(name)
        const e = Object.assign(new Error(`NOPERM User has no permissions to run the '${name}' command`), {
          name: "ReplyError",
        })
        return Promise.reject(e)
      },
    })
    return { commands: fake.commands, sent }
  }

  it.effect("a look-up Redis refuses fails with a typed RedisCommandError naming the command", () =>
    Effect.gen(function* () {
      const complete = refusing()
      const e1 = yield* Effect.flip(completeLanded(complete.commands, "a"))
      expect(e1).toBeInstanceOf(RedisCommandError)
      expect(e1).toMatchObject({ command: "ZSCORE", reason: expect.stringContaining("NOPERM") })
      expect(complete.sent).toEqual(["ZSCORE"])
      const fail = refusing()
      const e2 = yield* Effect.flip(failLanded(fail.commands, "a", '{"message":"x"}'))
      expect(e2).toBeInstanceOf(RedisCommandError)
      expect(e2).toMatchObject({ command: "HGET" })
    }),
  )

  it.effect("a look-up on a connection that failed is a RedisUnavailable", () =>
    Effect.gen(function* () {
      const fake = makeFake()
      // the fake's client rejects every plain command with a plain Error (no reply): as a dropped connection does
      const e = yield* Effect.flip(completeLanded(fake.commands, "a"))
      expect(e).toBeInstanceOf(RedisUnavailable)
    }),
  )
})
