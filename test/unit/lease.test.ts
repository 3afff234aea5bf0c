/**
 * The lease table, the heartbeat and the self-fence, without Redis: the table keyed by
 * fencing token; a lease the heartbeat's extend reports lost ends at once (signal aborted,
 * handler interrupted, never acknowledged); a lease whose extends keep failing is
 * self-fenced at its local deadline, not before; a handler deaf to its abort keeps its
 * slot until it ends. A lost lease is checked on both ways of running a job (`paths`: in a
 * fiber, and as a plain function). Time is the TestClock (the engine's monotonic clock
 * reads it too: `virtualMonotonic`).
 */
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import { LeaseLost, RedisUnavailable } from "../../src/engine/model/Errors.ts"
import { HELD, leaseState } from "../../src/engine/worker/lease/LeaseState.ts"
import {
  fenceAfter,
  fenceMargin,
  type Held,
  makeLeaseTable,
  signalOf,
} from "../../src/engine/worker/lease/LeaseTable.ts"
import {
  advance,
  expectNeverAcked,
  gate,
  makeFake,
  paths,
  program,
  settings,
  start,
  until,
  virtualMonotonic,
} from "./support/fake.ts"

const held = (id: string, token: number): Held => ({
  id,
  token,
  attempt: 1,
  maxAttempts: 3,
  localDeadline: 0,
  controller: undefined,
  fiber: undefined,
  state: HELD,
})

describe("lease table", () => {
  it("a newer token for a job supersedes the older live lease; both entries stay until removed", () => {
    const t = makeLeaseTable()
    const old = held("j", 1)
    expect(t.add(old)).toBeUndefined()
    const newer = held("j", 2)
    expect(t.add(newer)).toBe(old)
    expect(t.held.size).toBe(2)
    t.remove(old)
    expect([...t.held.keys()]).toEqual([2])
  })

  it("an older token arriving after a newer one is itself the superseded lease", () => {
    const t = makeLeaseTable()
    t.add(held("j", 5))
    const late = held("j", 4)
    expect(t.add(late)).toBe(late)
  })

  it("a settling or ended older lease is not returned (its ack's answer decides)", () => {
    const t = makeLeaseTable()
    const settling = { ...held("j", 1), state: leaseState("settling") }
    t.add(settling)
    expect(t.add(held("j", 2))).toBeUndefined()
  })

  it("live leaves out every ended lease; heartbeated keeps those ended by shutdown", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const t = makeLeaseTable()
        const a = held("a", 1)
        const b = held("b", 2)
        const c = held("c", 3)
        for (const h of [a, b, c]) t.add(h)
        yield* t.end(b, "lease-lost", "gone")
        yield* t.end(c, "shutdown", "closing")
        expect(t.live().map((h) => h.id)).toEqual(["a"])
        expect(t.heartbeated().map((h) => h.id)).toEqual(["a", "c"])
      }),
    ))

  it("end aborts a signal already read, and a signal first read after the end is born aborted; the first reason stays", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const t = makeLeaseTable()
        const a = held("a", 1)
        const early = signalOf(a)
        yield* t.end(a, "lease-lost", "first")
        yield* t.end(a, "self-fenced", "second")
        expect(early.aborted).toBe(true)
        expect(early.reason).toBe("first")
        expect(a.state.ended).toBe("lease-lost")
        const b = held("b", 2)
        yield* t.end(b, "shutdown", "bye")
        expect(signalOf(b).aborted).toBe(true)
        expect(signalOf(b).reason).toBe("bye")
      }),
    ))

  it("fenceAfter: 2.5 heartbeats, at least half the lease, at most the lease minus 2 %", () => {
    expect(fenceAfter(30_000, 10_000)).toBe(25_000)
    expect(fenceAfter(3_000, 100)).toBe(1_500)
    expect(fenceAfter(3_000, 1_400)).toBe(3_000 - fenceMargin(3_000))
    expect(fenceMargin(100)).toBe(5)
  })
})

describe.each(paths)("a lease the heartbeat finds lost, on the $path path", (path) => {
  it.effect("an extend that answers 0 for a lease ends it at once: signal aborted, handler stopped, no ack", () =>
    Effect.gen(function* () {
      yield* virtualMonotonic
      const fake = makeFake()
      const { program: p, events, signal, aborted } = path.untilAborted()
      fake.on.extend = (leases) => Effect.succeed(leases.map(() => 0))
      fake.ready("a")
      const h = yield* start(fake, settings({ leaseMs: 3_000, heartbeatMs: 1_000 }), p)
      yield* until(() => h.running() === 1, "a runs")
      yield* advance(900)
      expect(fake.of("extend")).toEqual([])
      yield* advance(200)
      expect(fake.of("extend").map((c) => c.leases)).toEqual([[{ id: "a", token: 1 }]])
      yield* until(() => h.running() === 0, "a's run ends")
      expect(aborted()).toBe(true)
      expect(signal()?.aborted).toBe(true)
      expect(signal()?.reason).toBeInstanceOf(LeaseLost)
      expect(events.leaseLost).toEqual([{ id: "a", token: 1, why: "lease-lost" }])
      expectNeverAcked(fake)
    }),
  )

  it.effect("a handler deaf to its abort: signal aborted, slot held until the handler ends, never acked", () =>
    Effect.gen(function* () {
      yield* virtualMonotonic
      const fake = makeFake()
      const hold = gate()
      const { program: p, events, signal } = path.endsWith(hold.promise)
      fake.on.extend = (leases) => Effect.succeed(leases.map(() => 0))
      fake.ready("a")
      const h = yield* start(fake, settings({ leaseMs: 3_000, heartbeatMs: 1_000 }), p)
      yield* until(() => h.running() === 1, "a runs")
      yield* advance(1_100)
      expect(signal()?.aborted).toBe(true)
      expect(signal()?.reason).toBeInstanceOf(LeaseLost)
      expect(events.leaseLost).toEqual([{ id: "a", token: 1, why: "lease-lost" }])
      // the handler has not returned: its slot stays taken
      expect(h.running()).toBe(1)
      hold.resolve()
      yield* until(() => h.running() === 0, "a's slot freed")
      expectNeverAcked(fake)
      expect(events.completed).toEqual([])
    }),
  )
})

describe("heartbeat and fence on a worker", () => {
  it.effect(
    "extends that keep failing: the handler runs until the local deadline (2.5 heartbeats), then is self-fenced",
    () =>
      Effect.gen(function* () {
        yield* virtualMonotonic
        const fake = makeFake()
        let interrupted = false
        const { program: p, events } = program(() =>
          Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => (interrupted = true)))),
        )
        fake.on.extend = () => Effect.fail(new RedisUnavailable({ reason: "fake: connection refused" }))
        fake.ready("a")
        const h = yield* start(fake, settings({ leaseMs: 3_000, heartbeatMs: 1_000 }), p)
        yield* until(() => h.running() === 1, "a runs")
        yield* advance(2_400)
        expect(fake.of("extend").length).toBe(2)
        expect(interrupted).toBe(false)
        yield* advance(200)
        yield* until(() => h.running() === 0, "a's fiber ends")
        expect(interrupted).toBe(true)
        expect(events.leaseLost).toEqual([{ id: "a", token: 1, why: "self-fenced" }])
        expect(events.errors.filter((e) => e instanceof RedisUnavailable).length).toBe(2)
        expect(fake.of("complete")).toEqual([])
      }),
  )

  it.effect(
    "a heartbeat that gets no reply within leaseMs (a silent connection) is reported, naming the server; the lease is self-fenced",
    () =>
      Effect.gen(function* () {
        yield* virtualMonotonic
        const fake = makeFake()
        const { program: p, events } = program(() => Effect.never)
        fake.ready("a")
        const h = yield* start(fake, settings({ leaseMs: 3_000, heartbeatMs: 1_000 }), p)
        // from the first heartbeat on, no extend ever answers
        fake.on.extend = () => Effect.never
        yield* until(() => h.running() === 1, "a runs")
        yield* advance(2_600)
        // fenced at 2.5 heartbeats, before the heartbeat sent at 1 s is given up (at 4 s)
        expect(events.leaseLost).toEqual([{ id: "a", token: 1, why: "self-fenced" }])
        expect(events.errors).toEqual([])
        yield* advance(1_500)
        const silent = events.errors.filter((e) => e instanceof RedisUnavailable)
        expect(silent.length).toBe(1)
        expect(String(silent[0])).toContain("no reply to a heartbeat within 3000 ms")
        expect(String(silent[0])).toContain("half-open")
        expect((silent[0] as RedisUnavailable).server).toBe(fake.commands.client.describe)
      }),
  )

  it.effect("a successful extend moves the local deadline: a long handler is never fenced while extends succeed", () =>
    Effect.gen(function* () {
      yield* virtualMonotonic
      const fake = makeFake()
      const { program: p, events } = program(() => Effect.sleep(10_000))
      fake.ready("a")
      const h = yield* start(fake, settings({ leaseMs: 3_000, heartbeatMs: 1_000 }), p)
      yield* until(() => events.completed.length === 1, "a completes")
      expect(events.leaseLost).toEqual([])
      expect(fake.of("extend").length).toBeGreaterThanOrEqual(9)
      expect(h.state()).toBe("running")
    }),
  )
})
