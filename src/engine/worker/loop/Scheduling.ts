/**
 * The reserve loop's scheduling state, with one owner: slots taken (`busy`), jobs asked
 * for (`asked`), calls in flight and landed, riders, prefetched jobs waiting, the linger
 * and the loop's wait. Everyone reads it (read-only outside this file); only this file
 * writes it: job runs, reserve calls and close *tell* it what happened with a
 * {@link SchedEvent}, as River's executors report to their producer through `jobResultCh`;
 * the loop's own steps (below the events) are called from its fiber only.
 *
 * An event is applied at once, in the sender's turn (one JavaScript turn runs at a time,
 * so nothing interleaves inside it): a job's end costs no queue and no fiber (PlainRun.ts),
 * and what the loop reads is never behind what happened. The counts never go negative,
 * whatever order events come in: a slot freed that was not taken is ignored, and so is
 * a call over before it was counted out (it is then never counted).
 */
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import type { Reservation } from "../../calls/Commands.ts"
import type { Held } from "../lease/LeaseTable.ts"
import type { Rider } from "./Ride.ts"

export type { Finished, RideAnswer, Rider } from "./Ride.ts"

/** A reserve call that landed: what the loop needs to start its jobs. */
export interface Landed {
  readonly reserved: Exit.Exit<
    { readonly jobs: ReadonlyArray<Reservation>; readonly nextDueMs: number; readonly limitMs?: number },
    unknown
  >
  readonly starts: ReadonlyArray<{ readonly r: Reservation; readonly deadline: number }>
  /** True when the call landed after close began and gave its jobs back itself. */
  readonly handled: boolean
  /** True when the call failed because the marker wait it was sent behind failed (that failure is reported instead). */
  readonly quiet: boolean
  readonly want: number
  /** The worker's `idle.looks` when the call was sent (loop/Drained.ts). */
  readonly looks: number
}

/** A leased job waiting for a slot (prefetched, see Prefetch.ts). */
export interface Waiting {
  readonly r: Reservation
  readonly held: Held
}

/** The scheduling state as everyone but this file sees it: read-only. */
export interface Scheduling {
  /** Jobs whose handlers are running (their slots are taken). */
  readonly busy: number
  /** Jobs asked for by calls in flight or landed and not yet started: their slots are spoken for. */
  readonly asked: number
  /** Calls that landed while the worker runs, for the loop to start their jobs, in order. */
  readonly landed: ReadonlyArray<Landed>
  /** Finished jobs riding with the next reserve call (one script call completes them and leases their successors). */
  readonly riding: ReadonlyArray<Rider>
  /** Reserve calls in flight (close waits for them to land, up to a bound). */
  readonly inFlight: ReadonlySet<Fiber.Fiber<unknown>>
  /** Leased jobs waiting for a slot, in order (prefetched: see Prefetch.ts). */
  readonly waiting: ReadonlyArray<Waiting>
  /** The loop waits for an event (a slot freed, a call landed): `Wake` resumes it. */
  readonly loopWaits: boolean
  /** The loop's current wait follows a short (empty) answer: a freed slot then sends nothing. */
  readonly waitShort: boolean
  /** The loop lingered its LINGER_MS (Slots.ts) since its last call: the next one goes now. */
  readonly lingerOver: boolean
  /** The loop waits with a linger timeout armed (Slots.ts). */
  readonly lingerArmed: boolean
  /**
   * True while the reserve loop will send another reserve call without waiting (it has
   * free slots and is not blocked, sleeping or waiting for a slot): a job finished now
   * rides with that call (one script call for both) instead of going on its own.
   */
  readonly reserving: boolean
  /** Moving average of handler durations in ms (undefined until one finished), for prefetch "auto". */
  readonly handlerPaceMs: number | undefined
  /** When a fragile job last landed (monotonic ms): prefetch pauses for a while after (Fragile.ts). */
  readonly fragileAt: number | undefined
  /** Until when (monotonic ms) a flow limit holds the loop back (reserve's `limitMs`): no call before. */
  readonly limitedUntil: number | undefined
  /** The hold of `limitedUntil` ends when one of this worker's jobs frees its slot (the concurrency cap). */
  readonly limitEndsOnSlot: boolean
}

/** The same, writable: reachable only in this file. */
type State = {
  -readonly [K in Exclude<keyof Scheduling, "landed" | "riding" | "inFlight" | "waiting">]: Scheduling[K]
} & {
  readonly landed: Landed[]
  readonly riding: Rider[]
  readonly inFlight: Set<Fiber.Fiber<unknown>>
  /** Calls over before they were counted out (events out of order): not counted then. */
  readonly over: WeakSet<Fiber.Fiber<unknown>>
  readonly waiting: Waiting[]
  /** Resumes the waiting loop. */
  ring: (() => void) | undefined
  /** Numbers the worker's reserve calls (their request ids). */
  reserveSeq: number
}

/** What happened, told to the scheduling state by whoever saw it. */
export type SchedEvent =
  /** A job run started (RunJob.ts, PlainRun.ts): its slot is taken. */
  | { readonly _tag: "SlotTaken" }
  /** A job run gave its slot back (JobEnd.ts, once per run). */
  | { readonly _tag: "SlotFreed" }
  /** A finished job's complete is to ride the next reserve call (Riders.ts). */
  | { readonly _tag: "Rider"; readonly rider: Rider }
  /** A handler ran for `ms` (RunJob.ts, PlainRun.ts): its pace, for prefetch "auto" and the linger. */
  | { readonly _tag: "Paced"; readonly ms: number }
  /** A reserve call for `want` jobs is about to go (Reserve.ts): their slots are spoken for. */
  | { readonly _tag: "Asked"; readonly want: number }
  /** A reserve call is in flight in `fiber` (Reserve.ts). */
  | { readonly _tag: "CallOut"; readonly fiber: Fiber.Fiber<unknown> }
  /** A reserve call landed while the worker runs: the loop starts its jobs (Reserve.ts). */
  | { readonly _tag: "Landed"; readonly landed: Landed }
  /** A reserve call's fiber ended (Reserve.ts): no longer out; the loop is woken. */
  | { readonly _tag: "CallOver"; readonly fiber: Fiber.Fiber<unknown> }
  /** Something the waiting loop must look at (the worker's state moved, a loop failed). */
  | { readonly _tag: "Wake" }
  /** The riders waiting will get no reserve call (too many for one; close): they go on their own. */
  | { readonly _tag: "FlushRiders" }
  /** Nothing will carry riders (the loop blocks, sleeps or stops): those waiting and new finishers go on their own. */
  | { readonly _tag: "StandDown" }

/** The events without data, made once (a job's end allocates nothing for them). */
export const SLOT_TAKEN: SchedEvent = { _tag: "SlotTaken" }
export const SLOT_FREED: SchedEvent = { _tag: "SlotFreed" }
export const WAKE: SchedEvent = { _tag: "Wake" }
export const FLUSH_RIDERS: SchedEvent = { _tag: "FlushRiders" }
export const STAND_DOWN: SchedEvent = { _tag: "StandDown" }

/** Weight of the newest handler duration in the moving average. */
const PACE_WEIGHT = 0.2

/** A worker's scheduling state, before its first job. */
export const makeScheduling = (): Scheduling => {
  const s: State = {
    busy: 0,
    asked: 0,
    landed: [],
    riding: [],
    inFlight: new Set(),
    over: new WeakSet(),
    waiting: [],
    ring: undefined,
    loopWaits: false,
    waitShort: false,
    lingerOver: false,
    lingerArmed: false,
    reserving: false,
    reserveSeq: 0,
    handlerPaceMs: undefined,
    fragileAt: undefined,
    limitedUntil: undefined,
    limitEndsOnSlot: false,
  }
  return s
}

const own = (s: Scheduling): State => s as State

/** Resume the loop if it waits. */
const wake = (s: State): void => {
  const ring = s.ring
  s.ring = undefined
  s.loopWaits = false
  ring?.()
}

/** The riders waiting go on their own (each is told to send its complete alone). */
const flush = (s: State): void => {
  for (const r of s.riding.splice(0)) r.answer({ resend: true, uncertain: false })
}

/** Tell the scheduling state what happened (see {@link SchedEvent}); applied at once. */
export const tell = (sched: Scheduling, e: SchedEvent): void => {
  const s = own(sched)
  switch (e._tag) {
    case "SlotTaken":
      s.busy++
      return
    case "SlotFreed":
      if (s.busy > 0) s.busy--
      // a lease of this worker left active: the concurrency cap has a slot again
      if (s.limitEndsOnSlot) s.limitedUntil = undefined
      return
    case "Rider":
      s.riding.push(e.rider)
      return
    case "Paced":
      s.handlerPaceMs = s.handlerPaceMs === undefined ? e.ms : s.handlerPaceMs + (e.ms - s.handlerPaceMs) * PACE_WEIGHT
      return
    case "Asked":
      s.asked += e.want
      return
    case "CallOut":
      if (!s.over.has(e.fiber)) s.inFlight.add(e.fiber)
      return
    case "Landed":
      s.landed.push(e.landed)
      return
    case "CallOver":
      if (!s.inFlight.delete(e.fiber)) s.over.add(e.fiber)
      wake(s)
      return
    case "Wake":
      wake(s)
      return
    case "StandDown":
      s.reserving = false
      flush(s)
      return
    case "FlushRiders":
      flush(s)
      return
  }
}

// ---- the reserve loop's own steps: called from its fiber only ----

/** The loop takes the next landed call (its jobs are no longer spoken for: they start or go back). */
export const nextLanded = (sched: Scheduling): Landed | undefined => {
  const s = own(sched)
  const l = s.landed.shift()
  if (l !== undefined) s.asked = Math.max(0, s.asked - l.want)
  return l
}

/** The loop takes every landed call (at its end). */
export const takeAllLanded = (sched: Scheduling): Landed[] => {
  const all: Landed[] = []
  for (let l = nextLanded(sched); l !== undefined; l = nextLanded(sched)) all.push(l)
  return all
}

/** The loop sends a call: its linger starts over, riders ride it (up to `maxRiders`, returned). */
export const beginCall = (sched: Scheduling, maxRiders: number): Rider[] => {
  const s = own(sched)
  s.lingerOver = false
  s.reserving = true
  return s.riding.splice(0, maxRiders)
}

/** The loop's call follows soon (it lingers): finishers ride it. */
export const expectCall = (sched: Scheduling): void => {
  own(sched).reserving = true
}

/** The request id of the loop's next reserve call: unique per worker (the script keeps one record per worker id). */
export const nextRequestId = (sched: Scheduling): string => String(++own(sched).reserveSeq)

/** A prefetched job waits for a slot. */
export const hold = (sched: Scheduling, w: Waiting): void => {
  own(sched).waiting.push(w)
}

/** The first prefetched job waiting, taken to start. */
export const takeWaiting = (sched: Scheduling): Waiting | undefined => own(sched).waiting.shift()

/** Every prefetched job waiting, taken (at the loop's end). */
export const takeAllWaiting = (sched: Scheduling): Waiting[] => own(sched).waiting.splice(0)

/**
 * The loop waits for an event: `ring` resumes it (once). `short`: the wait follows a short
 * answer. Returns how to stop waiting (the wait was interrupted or timed out).
 */
export const waitFor = (sched: Scheduling, short: boolean, ring: () => void): (() => void) => {
  const s = own(sched)
  s.waitShort = short
  s.ring = ring
  s.loopWaits = true
  return () => {
    if (s.ring !== ring) return
    s.ring = undefined
    s.loopWaits = false
  }
}

/** The loop's linger timeout is armed (or no longer). */
export const armLinger = (sched: Scheduling, armed: boolean): void => {
  own(sched).lingerArmed = armed
}

/** The loop lingered its full time: its next call goes now. */
export const lingerEnded = (sched: Scheduling): void => {
  own(sched).lingerOver = true
}

/** A fragile job landed at `at` (monotonic ms), or (undefined) none is live and the pause is over (Fragile.ts). */
export const noteFragile = (sched: Scheduling, at: number | undefined): void => {
  own(sched).fragileAt = at
}

/** A flow limit holds the loop back until `until` (monotonic ms; undefined: no longer), or (`endsOnSlot`) until a job of its own frees a slot. */
export const holdBack = (sched: Scheduling, until: number | undefined, endsOnSlot: boolean): void => {
  const s = own(sched)
  s.limitedUntil = until
  s.limitEndsOnSlot = endsOnSlot
}
