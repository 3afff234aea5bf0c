/**
 * The scheduling state's owner (Scheduling.ts), without Redis: what job runs and reserve
 * calls tell it, in any order, never makes a count negative nor leaves a call counted out
 * once it is over; and outside its owner the state is read-only.
 */
import { readdirSync, readFileSync } from "node:fs"
import * as Exit from "effect/Exit"
import { describe, expect, it } from "vitest"
import {
  holdBack,
  makeScheduling,
  nextLanded,
  type SchedEvent,
  type Scheduling,
  SLOT_FREED,
  SLOT_TAKEN,
  tell,
} from "../../src/engine/worker/loop/Scheduling.ts"

/** A small seeded generator (mulberry32), so a failing order can be replayed. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const shuffled = <T>(items: ReadonlyArray<T>, next: () => number): T[] => {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

/** Stand-in for a reserve call's fiber (only its identity matters to the owner). */
const fiber = () => ({}) as never

/** The invariants every state must keep, whatever it was told. */
const sound = (s: Scheduling) => {
  expect(s.busy).toBeGreaterThanOrEqual(0)
  expect(s.asked).toBeGreaterThanOrEqual(0)
  expect(s.inFlight.size).toBeLessThanOrEqual(3)
}

const NONE = Exit.succeed({ jobs: [], nextDueMs: -1 })

describe("Scheduling: one owner of the loop's state", () => {
  it("a slot freed that was never taken is ignored: the count never goes negative", () => {
    const s = makeScheduling()
    tell(s, SLOT_TAKEN)
    tell(s, SLOT_FREED)
    tell(s, SLOT_FREED) // a second free of the same slot
    expect(s.busy).toBe(0)
    tell(s, SLOT_TAKEN)
    expect(s.busy).toBe(1) // and the next job's slot is counted as taken
  })

  it("a call over before it was counted out is never counted out", () => {
    const s = makeScheduling()
    const f = fiber()
    tell(s, { _tag: "CallOver", fiber: f })
    tell(s, { _tag: "CallOut", fiber: f })
    expect(s.inFlight.size).toBe(0)
  })

  it("a landing taken by the loop gives back what its call asked for, never below zero", () => {
    const s = makeScheduling()
    tell(s, { _tag: "Landed", landed: { want: 4, reserved: NONE } as never }) // landed before its ask was told
    tell(s, { _tag: "Asked", want: 4 })
    expect(s.asked).toBe(4)
    expect(nextLanded(s)?.want).toBe(4)
    expect(s.asked).toBe(0)
    tell(s, { _tag: "Landed", landed: { want: 2, reserved: NONE } as never })
    nextLanded(s)
    expect(s.asked).toBe(0)
  })

  it("job and call events in any order: every count ends where the events say, never negative on the way", () => {
    const next = random(23)
    for (let round = 0; round < 200; round++) {
      const s = makeScheduling()
      const runs = 1 + Math.floor(next() * 16)
      const calls = [fiber(), fiber(), fiber()]
      const events: SchedEvent[] = []
      for (let i = 0; i < runs; i++) events.push(SLOT_TAKEN, SLOT_FREED)
      for (const f of calls) events.push({ _tag: "CallOut", fiber: f }, { _tag: "CallOver", fiber: f })
      let wakes = 0
      for (const e of shuffled(events, next)) {
        tell(s, e)
        sound(s)
        if (e._tag === "CallOver") wakes++
      }
      // every slot taken was freed and every call is over: none is left counted, whatever the order
      expect(s.inFlight.size).toBe(0)
      expect(s.busy).toBeLessThanOrEqual(runs)
      expect(wakes).toBe(calls.length)
    }
  })

  it("slots taken and freed in order, run by run, count exactly the runs still going", () => {
    const s = makeScheduling()
    for (let i = 0; i < 5; i++) tell(s, SLOT_TAKEN)
    for (let i = 0; i < 3; i++) tell(s, SLOT_FREED)
    expect(s.busy).toBe(2)
  })

  it("outside its owner the state is read-only (checked by tsc)", () => {
    const s = makeScheduling()
    // @ts-expect-error: only Scheduling.ts writes the scheduling state
    s.busy = 5
    // @ts-expect-error: the landed calls are the loop's to take
    s.landed.push({} as never)
    expect(typeof tell).toBe("function")
  })
})

/** The loop's own steps (Scheduling.ts, below the events): for the reserve loop's fiber only. */
const LOOP_STEPS = [
  "nextLanded",
  "takeAllLanded",
  "beginCall",
  "expectCall",
  "nextRequestId",
  "hold",
  "takeWaiting",
  "takeAllWaiting",
  "waitFor",
  "armLinger",
  "lingerEnded",
  "noteFragile",
]
/** The files that run in the loop's fiber: the loop, its slot rules, its calls, what it starts and places. */
const LOOP_FILES = ["ReserveLoop.ts", "Slots.ts", "Reserve.ts", "RunJob.ts", "Prefetch.ts", "Fragile.ts"]

describe("Scheduling: who may call the loop's own steps", () => {
  it("only the files the reserve loop runs import them; every other file only tells events or reads", () => {
    const dir = new URL("../../src/engine/", import.meta.url)
    const offenders: string[] = []
    for (const entry of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
      if (!entry.endsWith(".ts") || entry.endsWith("Scheduling.ts")) continue
      const text = readFileSync(new URL(entry, dir), "utf8")
      const imported = /import\s*\{([^}]*)\}\s*from\s*"[^"]*Scheduling\.ts"/.exec(text)?.[1] ?? ""
      const names = imported.split(",").map((n) => n.replace(/^\s*type\s+/, "").trim())
      const steps = names.filter((n) => LOOP_STEPS.includes(n))
      const base = entry.split("/").pop()!
      if (steps.length > 0 && !LOOP_FILES.includes(base)) offenders.push(`${entry}: ${steps.join(", ")}`)
    }
    expect(offenders).toEqual([])
  })
})

describe("a flow limit's hold", () => {
  it("a rate or RateLimited hold outlasts freed slots; the concurrency cap's ends at this worker's first freed slot", () => {
    const s = makeScheduling()
    tell(s, SLOT_TAKEN)
    tell(s, SLOT_TAKEN)
    holdBack(s, 1_000, false)
    tell(s, SLOT_FREED)
    expect(s.limitedUntil).toBe(1_000)
    holdBack(s, 2_000, true)
    expect(s.limitEndsOnSlot).toBe(true)
    tell(s, SLOT_FREED)
    expect(s.limitedUntil).toBeUndefined()
    holdBack(s, undefined, false)
    expect(s).toMatchObject({ limitedUntil: undefined, limitEndsOnSlot: false, busy: 0 })
  })
})
