/**
 * The worker side of job steering, without Redis: the engine on the fake command layer
 * (test/unit/support/fake.ts) under the TestClock. A job's timeout fires at its time and
 * fails the attempt once; an extend answering "cancelled" or "timeout" ends the lease with
 * that reason; progress rides the next heartbeat; the registry record goes at start, rides
 * the heartbeats, and an idle worker resends it only once per half ttl.
 */
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import type { ExtendRef, Reservation } from "../../src/engine/calls/Commands.ts"
import { JobCancelled, JobTimedOut } from "../../src/engine/model/Errors.ts"
import type { WorkerRecord } from "../../src/engine/model/Registry.ts"
import {
  advance,
  expectNeverAcked,
  type Fake,
  makeFake,
  program,
  settings,
  start,
  until,
  virtualMonotonic,
} from "../unit/support/fake.ts"

/** Hand out the scripted jobs with `timeoutMs`, as a reserve of jobs with that timeout does. */
const withTimeout = (fake: Fake, timeoutMs: number) => {
  fake.on.reserve = (...a) =>
    fake.defaults
      .reserve(...a)
      .pipe(Effect.map((r) => ({ ...r, jobs: r.jobs.map((j): Reservation => ({ ...j, timeoutMs })) })))
}

describe("timeoutMs on the worker", () => {
  it.effect("at timeoutMs (not before) the signal aborts with JobTimedOut and one fail goes, reason timeout", () =>
    Effect.gen(function* () {
      yield* virtualMonotonic
      const fake = makeFake()
      withTimeout(fake, 2_000)
      let signal: AbortSignal | undefined
      let interrupted = false
      const { program: p, events } = program((job) =>
        Effect.suspend(() => {
          signal = job.signal
          return Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => (interrupted = true))))
        }),
      )
      fake.ready("a")
      const h = yield* start(fake, settings({ leaseMs: 3_000, backoff: { type: "fixed", delayMs: 250 } }), p)
      yield* until(() => h.running() === 1, "a runs")
      yield* advance(1_900)
      expect(fake.of("fail")).toEqual([])
      expect(signal?.aborted).toBe(false)
      yield* until(() => fake.of("fail").length === 1, "the timeout's fail")
      const [fail] = fake.of("fail")
      expect(fail).toMatchObject({ lease: { id: "a", token: 1 }, mode: "retry", delayMs: 250 })
      expect(JSON.parse(fail!.error)).toMatchObject({ name: "JobTimedOut", reason: "timeout", timeoutMs: 2_000 })
      expect(signal?.reason).toBeInstanceOf(JobTimedOut)
      yield* until(() => interrupted && h.running() === 0, "the handler interrupted, its slot free")
      expect(events.failed).toMatchObject([{ id: "a", willRetry: true }])
      expect(events.failed[0]!.error).toBeInstanceOf(JobTimedOut)
      // once: no second fail, no complete, no lost lease
      yield* advance(3_000)
      expect(fake.of("fail")).toHaveLength(1)
      expect(fake.of("complete")).toEqual([])
      expect(events.leaseLost).toEqual([])
    }),
  )

  it.effect("a job that finishes in time disarms its timer: completed, never failed", () =>
    Effect.gen(function* () {
      yield* virtualMonotonic
      const fake = makeFake()
      withTimeout(fake, 1_000)
      const { program: p, events } = program(() => Effect.sleep(500))
      fake.ready("a")
      yield* start(fake, settings({ leaseMs: 3_000 }, false), p)
      yield* until(() => events.completed.length === 1, "a completes")
      yield* advance(2_000)
      expect(fake.of("fail")).toEqual([])
    }),
  )

  it.effect("an extend answered 'timeout' (the server's limit) ends the lease and fails it as a timeout", () =>
    Effect.gen(function* () {
      yield* virtualMonotonic
      const fake = makeFake()
      let signal: AbortSignal | undefined
      const { program: p, events } = program((job) =>
        Effect.suspend(() => {
          signal = job.signal
          return Effect.never
        }),
      )
      fake.on.extend = (leases) => Effect.succeed(leases.map(() => -2))
      fake.ready("a")
      yield* start(fake, settings({ leaseMs: 3_000, heartbeatMs: 1_000 }), p)
      yield* until(() => fake.of("fail").length === 1, "the fail after the heartbeat")
      expect(signal?.reason).toBeInstanceOf(JobTimedOut)
      expect(JSON.parse(fake.of("fail")[0]!.error)).toMatchObject({ reason: "timeout" })
      yield* until(() => events.failed.length === 1, "the failed hook")
    }),
  )
})

describe("a cancel seen by the heartbeat", () => {
  it.effect("an extend answered 'cancelled' aborts the signal with JobCancelled; nothing is sent for the job", () =>
    Effect.gen(function* () {
      yield* virtualMonotonic
      const fake = makeFake()
      let signal: AbortSignal | undefined
      const cancelled: string[] = []
      const { program: base, events } = program((job) =>
        Effect.suspend(() => {
          signal = job.signal
          return Effect.never
        }),
      )
      const p = { ...base, hooks: { ...base.hooks, cancelled: (j: { id: string }) => cancelled.push(j.id) } }
      fake.on.extend = (leases) => Effect.succeed(leases.map(() => -1))
      fake.ready("a")
      const h = yield* start(fake, settings({ leaseMs: 3_000, heartbeatMs: 1_000 }), p)
      yield* until(() => cancelled.length === 1, "the cancelled hook")
      expect(signal?.reason).toBeInstanceOf(JobCancelled)
      yield* until(() => h.running() === 0, "the handler ended")
      expectNeverAcked(fake)
      expect(events.leaseLost).toEqual([])
    }),
  )
})

describe("progress and the registry ride the heartbeat", () => {
  it.effect("the next extend carries the latest progress (once) and the worker's record", () =>
    Effect.gen(function* () {
      yield* virtualMonotonic
      const fake = makeFake()
      const sent: Array<{ readonly progress: Array<string | undefined>; readonly record?: WorkerRecord }> = []
      fake.on.extend = (leases: ReadonlyArray<ExtendRef>, leaseMs, worker) => {
        sent.push({ progress: leases.map((l) => l.progress), ...(worker ? { record: worker } : {}) })
        return fake.defaults.extend(leases, leaseMs, worker)
      }
      const { program: p } = program((job) =>
        Effect.gen(function* () {
          job.progress(1)
          job.progress({ half: true })
          yield* Effect.never
        }),
      )
      fake.ready("a")
      yield* start(fake, settings({ leaseMs: 3_000, heartbeatMs: 1_000, concurrency: 4 }), p)
      yield* advance(2_100)
      // the registration at start, then two heartbeats with the lease
      expect(sent.map((s) => s.progress)).toEqual([[], ['{"half":true}'], [undefined]])
      const record = JSON.parse(sent[1]!.record!.json)
      expect(record).toMatchObject({ concurrency: 4, running: 1, state: "running", pid: process.pid })
      expect(sent[1]!.record!.ttlMs).toBe(3_000 + 1_000)
    }),
  )

  it.effect("an idle worker registers at start, then sends its record alone once per half ttl, not per heartbeat", () =>
    Effect.gen(function* () {
      yield* virtualMonotonic
      const fake = makeFake()
      const { program: p } = program(() => Effect.void)
      // ttl = leaseMs + leaseGraceMs = 4 s: a record alone every 2 s, with heartbeats every 500 ms
      yield* start(fake, settings({ leaseMs: 3_000, heartbeatMs: 500 }), p)
      yield* advance(100)
      expect(fake.of("register")).toHaveLength(1)
      yield* advance(1_800)
      expect(fake.of("register")).toHaveLength(1)
      yield* advance(600)
      expect(fake.of("register")).toHaveLength(2)
      expect(fake.of("extend")).toEqual([])
    }),
  )
})
