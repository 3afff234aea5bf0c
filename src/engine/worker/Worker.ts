/**
 * The worker engine, written once in Effect; the Promise and Effect faces wrap it.
 *
 * Lifecycle (one way only):
 *
 *   running ──close──► draining ──grace over or all done──► releasing ──► closed
 *
 * - running:   the reserve loop leases jobs up to free concurrency; idle, it blocks on
 *              the queue's marker (one blocking command per `blockTimeoutMs`).
 * - draining:  no new reservations; running handlers get up to `shutdownGraceMs`.
 * - releasing: handlers still running are aborted; each job is released once its
 *              handler has ended (its lease heartbeated meanwhile, up to
 *              `shutdownAbortGraceMs`), so another worker starts it at once with attempts
 *              unchanged. Acks still unanswered stop waiting and their leases are released.
 * - closed:    loops stopped, connections closed. Reached even when Redis is gone.
 *
 * Each long-lived loop (reserve, heartbeat, fence, sweep) is supervised: a loop that fails
 * is reported and restarted. One that fails too often in a row is given up, and a running
 * worker becomes `failed` (it reserves no more jobs; close() works as from running).
 * `close` is memoized: every call waits for the one shutdown.
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import type { RedisClient } from "../../redis/Client.ts"
import { trackWorker, untrackWorker } from "../../testing/Leaks.ts"
import { planRetry } from "../Backoff.ts"
import { makeBatcher } from "../Batcher.ts"
import type { Commands, Reservation, SweepResult, SweptDead } from "../Commands.ts"
import { AckUndelivered, type InvalidPayload, LeaseLost, ShutdownOverrun, WorkerLoopFailed } from "../Errors.ts"
import { warnIfEvicting } from "../EvictionPolicy.ts"
import type { Job } from "../Job.ts"
import { redisError } from "../Replies.ts"
import { newWorkerId } from "../RequestId.ts"
import { sweepPass } from "../Sweeper.ts"
import {
  completeLanded,
  type Delivery,
  deliver,
  failLanded,
  fireStop,
  makeStopSignal,
  refusedBeforeRun,
  untilStopped,
} from "./Acks.ts"
import { encodeOutcome, safeHooks, stderrWarner, supervise, type WorkerHooks } from "./Callbacks.ts"
import { fenceAfter, fenceLoop, type Held, heartbeatLoop, makeLeaseTable, monotonicNow, signalOf } from "./Lease.ts"
import type { WorkerSettings } from "./WorkerOptions.ts"

/** The named states of a worker. */
export type WorkerState = "running" | "draining" | "releasing" | "closed" | "failed"

export type { WorkerHooks } from "./Callbacks.ts"

/** What the engine needs besides settings: how to decode and run a job. */
export interface WorkerProgram<A> {
  readonly decode: (text: string) => Effect.Effect<A, InvalidPayload>
  readonly handler: (job: Job<A>) => Effect.Effect<unknown, unknown>
  readonly hooks: WorkerHooks<A>
  /** How to serialise a handler's result when completed jobs are retained. */
  readonly encodeResult?: (result: unknown) => string
}

/** A started worker. */
export interface WorkerHandle {
  readonly state: () => WorkerState
  /** Jobs whose handlers are running. */
  readonly running: () => number
  /** Graceful shutdown (see the state machine). Never fails, always ends; a second call waits for the first. */
  readonly close: Effect.Effect<void>
}

const errorJson = (error: unknown): string => {
  if (error instanceof Error) {
    return JSON.stringify({
      name: error.name,
      message: error.message,
      stack: error.stack?.split("\n").slice(0, 8).join("\n"),
    })
  }
  try {
    return JSON.stringify({ message: typeof error === "string" ? error : JSON.stringify(error) })
  } catch {
    return JSON.stringify({ message: String(error) })
  }
}

const RESERVE_CHUNK = 500

/** The failure recorded for a handler that interrupted itself. */
const handlerInterrupted = (): Error => {
  const error = new Error("the handler interrupted itself (the worker still held its lease): counted as a failure")
  error.name = "HandlerInterrupted"
  return error
}

/** A finished job to acknowledge. */
interface Finished {
  readonly id: string
  readonly token: number
  readonly result?: string
}
const RETRY_PAUSE = [100, 200, 500, 1000, 2000] as const

/**
 * Most reserve calls a worker has out at once: with two, Redis runs one while this
 * process starts the jobs of the other (each asks only for free slots).
 */
const MAX_RESERVES_IN_FLIGHT = 2

/**
 * How much later than its own timeout a BZPOPMIN may answer before its connection is
 * taken for silent (half-open) and replaced: 5 s, room for a loaded Redis or process.
 */
export const BLOCK_REPLY_SLACK_MS = 5_000

/**
 * What a rider (a complete carried by a reserve call) learns: the script's answer, or
 * that it must be sent on its own (the reserve failed — `uncertain` when it may have
 * run — or never carried it).
 */
type RideAnswer = boolean | { readonly resend: true; readonly uncertain: boolean }

/** A reserve call that landed: what the loop needs to start its jobs. */
interface Landed {
  readonly reserved: Exit.Exit<{ readonly jobs: ReadonlyArray<Reservation>; readonly nextDueMs: number }, unknown>
  readonly starts: ReadonlyArray<{ readonly r: Reservation; readonly deadline: number }>
  /** True when the call landed after close began and gave its jobs back itself. */
  readonly handled: boolean
  readonly want: number
}

/** A complete riding with a reserve call: answered once, listened to by its job's fiber. */
interface Rider {
  readonly item: Finished
  readonly answer: (a: RideAnswer) => void
  /** Call `f` with the answer (at once if it came already); returns how to stop listening. */
  readonly listen: (f: (a: RideAnswer) => void) => () => void
}

const makeRider = (item: Finished): Rider => {
  let answered: RideAnswer | undefined
  let listener: ((a: RideAnswer) => void) | undefined
  return {
    item,
    answer: (a) => {
      if (answered !== undefined) return
      answered = a
      const f = listener
      listener = undefined
      f?.(a)
    },
    listen: (f) => {
      if (answered !== undefined) f(answered)
      else listener = f
      return () => {
        listener = undefined
      }
    },
  }
}

/**
 * Start a worker on `commands` (its queue) with `blocking` as its own connection for
 * the marker wait. The caller keeps ownership of `commands.client`; `blocking` is closed here.
 */
export const startWorker = <A>(
  commands: Commands,
  blocking: RedisClient,
  settings: WorkerSettings,
  program: WorkerProgram<A>,
): Effect.Effect<WorkerHandle> =>
  Effect.gen(function* () {
    // once per client: warn when the server may evict keys (maxmemory-policy)
    yield* warnIfEvicting(commands.client)
    // user callbacks never throw into the engine: a throw is reported on the error hook
    const hooks = safeHooks(program.hooks, stderrWarner(`worker of queue "${commands.keys.queue}"`))
    const table = makeLeaseTable()
    const workerId = newWorkerId()
    const jobFibers = new Set<Fiber.Fiber<void>>()
    const toRelease: Held[] = []
    let state: WorkerState = "running"
    let busy = 0
    let ringSlot: (() => void) | undefined
    /**
     * True while the reserve loop will send another reserve call without waiting (it has
     * free slots and is not blocked, sleeping or waiting for a slot): a job finished now
     * rides with that call (one script call for both) instead of going on its own.
     */
    let reserving = false
    /** Wake the reserve loop if it waits (a slot freed, a call landed). */
    const wakeLoop = () => {
      const ring = ringSlot
      ringSlot = undefined
      ring?.()
    }
    const freeSlot = () => {
      busy--
      wakeLoop()
    }
    const report = (e: unknown) => Effect.sync(() => hooks.error?.(e))

    /** Fired once close stops waiting for acks (past the grace): they give up, their leases are released. */
    const stopAcks = makeStopSignal()
    /** The lease length asked of the server: the worker fences on leaseMs, a sweep waits the grace more. */
    const serverLeaseMs = settings.leaseMs + settings.leaseGraceMs
    const localDeadline = (sentAt: number) => sentAt + fenceAfter(settings.leaseMs, settings.heartbeatMs)

    const completer = makeBatcher(
      (items: ReadonlyArray<Finished>) => commands.complete(items, settings.keepCompleted),
      RESERVE_CHUNK,
    )

    /**
     * Finished jobs riding along with the reserve call that their freed slots trigger:
     * one script call (and one write) completes them and leases their successors.
     */
    const riding: Rider[] = []

    /** Send a complete on its own, again and again until it is answered (see Acks.ts). */
    const sendAlone = (item: Finished, held: Held, uncertain: boolean) =>
      deliver<boolean>((done) => completer.offer(item, done), {
        held,
        stop: stopAcks,
        onError: (e) => hooks.error?.(e),
        uncertain,
      })

    /**
     * Complete a finished job and free its slot. When the reserve loop waits for that
     * slot, or will send its next reserve call without waiting (`reserving`: a call is in
     * flight or about to go), the complete rides along with that call (queued first, then
     * the slot is freed); otherwise it goes on its own. A rider whose reserve fails (or
     * never goes: the loop blocks, sleeps or waits for a slot) is sent on its own.
     */
    const complete = (item: Finished, held: Held, free: () => void): Effect.Effect<Delivery<boolean>> =>
      Effect.suspend(() => {
        if (settings.rideAlong === false || (ringSlot === undefined && !reserving) || state !== "running") {
          free()
          return sendAlone(item, held, false)
        }
        const rider = makeRider(item)
        riding.push(rider)
        free()
        return untilStopped<RideAnswer>(stopAcks, (answer) => rider.listen(answer)).pipe(
          Effect.flatMap((answer): Effect.Effect<Delivery<boolean>> => {
            if (answer === "stopped") return Effect.succeed({ _tag: "undelivered", reason: "stopped", uncertain: true })
            if (typeof answer === "boolean")
              return Effect.succeed({ _tag: "answered", value: answer, uncertain: false })
            return sendAlone(item, held, answer.uncertain)
          }),
        )
      })

    /** Riders that will not get a reserve call: each is sent on its own by its job's fiber. */
    const flushRiders = Effect.sync(() => {
      for (const r of riding.splice(0)) r.answer({ resend: true, uncertain: false })
    })

    const onLeaseEnd = (h: Held, why: "lease-lost" | "self-fenced") =>
      hooks.leaseLost?.({ id: h.id, token: h.token }, why)

    /** An ack that got no answer: at close its lease is released (token-fenced, so safe even if it lands later). */
    const undelivered = (held: Held, ack: "complete" | "fail", d: Delivery<unknown> & { _tag: "undelivered" }) => {
      if (d.reason === "stopped") toRelease.push(held)
      hooks.error?.(
        new AckUndelivered({ queue: commands.keys.queue, jobId: held.id, token: held.token, ack, reason: d.reason }),
      )
      if (d.reason === "lease-expired") onLeaseEnd(held, "lease-lost")
    }

    /** Report a complete's outcome; "lease lost" after an uncertain attempt is checked in Redis first. */
    const completed = (d: Delivery<boolean>, held: Held, job: Job<A>, result: unknown) =>
      Effect.gen(function* () {
        if (d._tag === "undelivered") return undelivered(held, "complete", d)
        if (d._tag === "refused") return // reported on error already; as before, no event
        const landed =
          d.value || (d.uncertain && (yield* completeLanded(commands, held.id).pipe(Effect.orElseSucceed(() => false))))
        if (landed) hooks.completed?.(job, result)
        else onLeaseEnd(held, "lease-lost")
      })

    /** Send a fail until answered; "lease lost" after an uncertain attempt is checked in Redis first. */
    const sendFail = (r: Reservation, held: Held, options: Parameters<Commands["fail"]>[1]) =>
      Effect.gen(function* () {
        const d = yield* deliver(commands.fail(r, options), { held, stop: stopAcks, onError: (e) => hooks.error?.(e) })
        if (d._tag === "undelivered") undelivered(held, "fail", d)
        if (d._tag !== "answered") return undefined
        if (d.value !== "lost" || !d.uncertain) return d.value
        return yield* failLanded(commands, r.id, options.error).pipe(Effect.orElseSucceed(() => "lost" as const))
      })

    /** What happens after the handler: ack, retry or dead. Runs uninterruptibly. */
    const settle = (
      r: Reservation,
      held: Held,
      job: Job<A>,
      handlerExit: Exit.Exit<unknown, unknown>,
      acked: () => void,
      free: () => void,
    ) =>
      Effect.gen(function* () {
        if (held.ended) return free() // lease lost or self-fenced: never ack; shutdown: released on exit
        held.settling = true // from here the complete/fail script's answer decides (see Held.settling)
        acked()
        // a result that cannot be serialised fails the job (normal retry/dead path)
        const { exit, result } = encodeOutcome(
          handlerExit,
          settings.keepCompleted > 0 ? program.encodeResult : undefined,
        )
        if (!Exit.isSuccess(exit)) free()
        if (Exit.isSuccess(exit)) {
          const d = yield* complete({ id: r.id, token: r.token, result }, held, free)
          return yield* completed(d, held, job, exit.value)
        }
        // not interrupted by the worker (held.ended is unset): the handler interrupted itself,
        // which counts as a failure (left alone, the job would wait out its lease)
        const error = Cause.hasInterruptsOnly(exit.cause) ? handlerInterrupted() : Cause.squash(exit.cause)
        const plan = yield* planRetry(settings.backoff, r.attempt, error, hooks.error)
        const outcome = yield* sendFail(r, held, {
          delayMs: plan.delayMs,
          error: errorJson(error),
          mode: plan.retry ? "retry" : "final",
        })
        if (outcome === "lost") onLeaseEnd(held, "lease-lost")
        else if (outcome !== undefined) {
          hooks.failed?.(job, error, outcome === "retry")
          if (outcome === "dead") hooks.dead?.({ id: r.id, token: r.token }, "failed", error)
        }
      })

    /** A payload that does not decode goes to dead at once, without spending an attempt. */
    const refuse = (r: Reservation, held: Held, cause: Cause.Cause<unknown>) =>
      Effect.gen(function* () {
        const error = Cause.squash(cause)
        const message = error instanceof Error ? error.message : String(error)
        const outcome = yield* sendFail(r, held, {
          delayMs: 0,
          error: JSON.stringify({ reason: "invalid-payload", message }),
          mode: "dead",
        })
        if (outcome === "dead") hooks.dead?.({ id: r.id, token: r.token }, "invalid-payload", error)
        else if (outcome === "lost") onLeaseEnd(held, "lease-lost")
      })

    /**
     * One job, one fiber: decode, run the handler (interruptible: a lost lease or the end
     * of the grace period interrupts this fiber), then settle (uninterruptible). The slot
     * and the table entry are given up only when the fiber ends, i.e. once the handler has
     * ended (the Promise face waits for the handler's promise to settle).
     */
    const runJob = (r: Reservation, held: Held) => {
      let slotFreed = false
      let settled = false
      const freeOnce = () => {
        if (!slotFreed) {
          slotFreed = true
          freeSlot()
        }
      }
      return Effect.gen(function* () {
        const decoded = yield* Effect.exit(program.decode(r.payload))
        if (Exit.isFailure(decoded)) {
          settled = true
          held.settling = true
          return yield* Effect.uninterruptible(refuse(r, held, decoded.cause))
        }
        const job: Job<A> = {
          id: r.id,
          payload: decoded.value,
          attempt: r.attempt,
          maxAttempts: r.maxAttempts,
          token: r.token,
          get signal() {
            return signalOf(held)
          },
        }
        const exit = yield* Effect.exit(program.handler(job))
        // settle frees the slot (after queueing the complete, so the reserve it triggers carries it)
        yield* Effect.uninterruptible(
          settle(
            r,
            held,
            job,
            exit,
            () => {
              settled = true
            },
            freeOnce,
          ),
        )
      }).pipe(
        Effect.catch((e) => report(e)),
        Effect.onExit(() =>
          Effect.sync(() => {
            freeOnce()
            table.remove(held)
            if (held.ended === "shutdown" && !settled && !held.overrun) toRelease.push(held)
          }),
        ),
      )
    }

    const startJob = (r: Reservation, deadline: number) =>
      Effect.gen(function* () {
        busy++
        const held: Held = {
          id: r.id,
          token: r.token,
          attempt: r.attempt,
          maxAttempts: r.maxAttempts,
          localDeadline: deadline,
          controller: undefined,
          fiber: undefined,
          ended: undefined,
        }
        // the server gave this job a newer token: an older lease on it here is surely lost
        const older = table.add(held)
        if (older) {
          const lost = new LeaseLost({ queue: commands.keys.queue, jobId: older.id, token: older.token })
          yield* table.end(older, "lease-lost", lost)
          onLeaseEnd(older, "lease-lost")
        }
        const fiber = yield* Effect.forkDetach(runJob(r, held), { startImmediately: true })
        held.fiber = fiber as Fiber.Fiber<unknown, unknown>
        jobFibers.add(fiber)
        fiber.addObserver(() => jobFibers.delete(fiber))
      })

    /**
     * Wait for the marker on the blocking connection. A reply later than the wait plus
     * {@link BLOCK_REPLY_SLACK_MS} means the connection went silent (half-open): it is
     * replaced and the call fails, so the loop reports it and goes on.
     */
    const blockOnMarker = (timeoutMs: number) =>
      Effect.tryPromise({
        try: () =>
          blocking.commandWithin(
            "BZPOPMIN",
            [commands.keys.marker, Math.max(0.01, timeoutMs / 1000).toFixed(3)],
            timeoutMs + BLOCK_REPLY_SLACK_MS,
          ),
        catch: (e) => redisError("BZPOPMIN", e, blocking.describe, blocking.lastError?.()),
      })

    /**
     * The local deadline of each reserved job, counted from the reserve's send. A reply
     * that comes late (Redis stalled, or ioredis sent the call again after a reconnect)
     * would start jobs near or past that deadline, to be self-fenced at once although
     * their server leases are fresh: then one extend, sent now, says which leases are
     * still held (the others are not started) and gives them a fresh deadline.
     */
    const freshen = (jobs: ReadonlyArray<Reservation>, sentAt: number) => {
      const deadline = localDeadline(sentAt)
      const late = deadline - monotonicNow() < fenceAfter(settings.leaseMs, settings.heartbeatMs) / 2
      if (jobs.length === 0 || !late) return Effect.succeed(jobs.map((r) => ({ r, deadline })))
      return Effect.gen(function* () {
        const again = monotonicNow()
        const extended = yield* Effect.exit(commands.extend(jobs, serverLeaseMs))
        if (Exit.isFailure(extended)) return jobs.map((r) => ({ r, deadline })) // the fence decides
        return jobs.filter((_, i) => (extended.value[i] ?? 0) > 0).map((r) => ({ r, deadline: localDeadline(again) }))
      })
    }

    /**
     * Numbers this worker's reserve calls: the request id a re-send is recognised by needs
     * to be unique only per worker (the script keeps one record per worker id), so a
     * counter does (no random bytes per call).
     */
    let reserveSeq = 0

    /** Reserve calls in flight (close waits for them to land, up to a bound). */
    const inFlight = new Set<Fiber.Fiber<unknown>>()
    /** Jobs asked for by calls in flight or landed and not yet started: their slots are spoken for. */
    let asked = 0
    /** Calls that landed while the worker runs, for the loop to start their jobs, in order. */
    const landed: Landed[] = []

    /**
     * One reserve call, in a fiber of its own: close may stop waiting for it, never cut it
     * off. It answers its riders whatever happens (a failed call sends them on their own),
     * and when it lands after close began, it gives its jobs back at once, unstarted.
     */
    const reserveCall = (want: number, ride: typeof riding) =>
      Effect.gen(function* () {
        const sentAt = monotonicNow()
        const items = ride.map((r) => r.item)
        const reserved = yield* Effect.exit(
          commands.reserve(want, serverLeaseMs, RESERVE_CHUNK, items, settings.keepCompleted, {
            workerId,
            requestId: String(++reserveSeq),
          }),
        )
        const uncertain = Exit.isFailure(reserved) && !refusedBeforeRun(Cause.squash(reserved.cause))
        for (let i = 0; i < ride.length; i++) {
          const answer: RideAnswer = Exit.isSuccess(reserved)
            ? reserved.value.completed[i] === true
            : { resend: true, uncertain }
          ride[i]!.answer(answer)
        }
        const starts =
          Exit.isSuccess(reserved) && state === "running" ? yield* freshen(reserved.value.jobs, sentAt) : []
        if (Exit.isSuccess(reserved) && state !== "running") {
          // closed while the call was in flight: give the jobs straight back, unstarted
          if (reserved.value.jobs.length > 0) yield* commands.release(reserved.value.jobs).pipe(Effect.catch(report))
          return { reserved, starts, handled: true }
        }
        return { reserved, starts, handled: false }
      })

    /**
     * Send a reserve call in a fiber of its own; when it lands, its answer is queued for
     * the loop (woken when the fiber ends), or, once close began, its jobs are given back at once.
     */
    const sendReserve = (want: number, ride: typeof riding) =>
      Effect.gen(function* () {
        asked += want
        const call = reserveCall(want, ride).pipe(
          Effect.flatMap((l) => {
            if (l.handled || state === "running") {
              landed.push({ ...l, want })
              return Effect.void
            }
            // close began while the jobs were being freshened: give them straight back
            const jobs = Exit.isSuccess(l.reserved) ? l.reserved.value.jobs : []
            return jobs.length > 0 ? commands.release(jobs).pipe(Effect.catch(report)) : Effect.void
          }),
        )
        const fiber = yield* Effect.forkDetach(call, { startImmediately: true })
        inFlight.add(fiber)
        // the loop is woken once the call is no longer counted as out
        fiber.addObserver(() => {
          inFlight.delete(fiber)
          wakeLoop()
        })
      })

    /**
     * Start the jobs of a landed call. Returns what the loop does next: "failed" (pause,
     * then go on), "short" (fewer jobs than asked: the queue looked empty; with the ms until
     * the next delayed job is due) or "full".
     */
    const startLanded = (l: Landed) =>
      Effect.gen(function* () {
        asked -= l.want
        if (l.handled) return { next: "full" as const, due: -1 }
        if (state !== "running") {
          // close began after the call landed: give its jobs straight back, unstarted
          const jobs = Exit.isSuccess(l.reserved) ? l.reserved.value.jobs : []
          if (jobs.length > 0) yield* commands.release(jobs).pipe(Effect.catch(report))
          return { next: "full" as const, due: -1 }
        }
        if (Exit.isFailure(l.reserved)) {
          yield* report(Cause.squash(l.reserved.cause))
          return { next: "failed" as const, due: -1 }
        }
        yield* Effect.uninterruptible(Effect.forEach(l.starts, (s) => startJob(s.r, s.deadline), { discard: true }))
        const short = l.reserved.value.jobs.length < l.want
        return { next: short ? ("short" as const) : ("full" as const), due: l.reserved.value.nextDueMs }
      })

    /**
     * True when the loop may send another call now: with none out, for any free slot (no
     * added latency); with one out, once half the slots are free (a call worth its round trip).
     */
    const canSend = (short: boolean) => {
      if (short || inFlight.size >= MAX_RESERVES_IN_FLIGHT) return false
      const free = settings.concurrency - busy - asked
      return inFlight.size === 0 ? free > 0 : free >= Math.ceil(settings.concurrency / 2)
    }

    /** Wait until a call lands, a slot frees, or the worker stops running. */
    const waitEvent = (short: boolean) =>
      Effect.callback<void>((resume) => {
        if (landed.length > 0 || state !== "running" || canSend(short)) resume(Effect.void)
        else ringSlot = () => resume(Effect.void)
      })

    /** Nothing will carry the riders: they go on their own, and new finishers too. */
    const standDown = Effect.suspend(() => {
      reserving = false
      return flushRiders
    })

    /**
     * The reserve loop: up to {@link MAX_RESERVES_IN_FLIGHT} calls out at once, each for
     * free slots only (never more jobs than `concurrency`), so Redis runs one call while
     * this process starts the jobs of another. When a call finds the queue empty and none
     * is out, it blocks on the marker.
     */
    const reserveLoop = Effect.gen(function* () {
      let failures = 0
      let short: number | undefined
      while (state === "running") {
        const l = landed.shift()
        if (l !== undefined) {
          const { next, due } = yield* startLanded(l)
          if (next === "failed") {
            yield* standDown
            yield* Effect.sleep(RETRY_PAUSE[Math.min(failures++, RETRY_PAUSE.length - 1)]!)
            continue
          }
          failures = 0
          short = next === "short" ? due : undefined
          continue
        }
        if (short !== undefined && inFlight.size === 0) {
          const due = short
          short = undefined
          if (due === 0) continue
          const wait = due > 0 ? Math.min(due, settings.blockTimeoutMs) : settings.blockTimeoutMs
          yield* standDown
          const woke = yield* Effect.exit(blockOnMarker(wait))
          if (Exit.isFailure(woke) && state === "running") {
            yield* report(Cause.squash(woke.cause))
            yield* Effect.sleep(RETRY_PAUSE[Math.min(failures++, RETRY_PAUSE.length - 1)]!)
          }
          continue
        }
        if (canSend(short !== undefined)) {
          reserving = true
          const ride = riding.splice(0, RESERVE_CHUNK)
          if (riding.length > 0) yield* flushRiders
          yield* sendReserve(Math.min(settings.concurrency - busy - asked, RESERVE_CHUNK), ride)
          continue
        }
        // riders left go on their own when no call is out (the next slot may be far off)
        if (inFlight.size === 0) yield* standDown
        yield* waitEvent(short !== undefined)
      }
    })

    /** At the loop's end: riders go on their own; landed calls whose jobs were not started give them back. */
    const endLoop = Effect.gen(function* () {
      yield* standDown
      const unstarted = landed
        .splice(0)
        .flatMap((l) => (!l.handled && Exit.isSuccess(l.reserved) ? l.reserved.value.jobs : []))
      if (unstarted.length > 0) yield* commands.release(unstarted).pipe(Effect.catch(report))
    })

    const hb = {
      queue: commands.keys.queue,
      leaseMs: settings.leaseMs,
      heartbeatMs: settings.heartbeatMs,
      serverLeaseMs,
      onEnd: onLeaseEnd,
      onError: hooks.error ?? (() => {}),
    }
    /** A loop restarted when it fails; given up after too many failures in a row (worker `failed`). */
    const supervised = (loop: string, effect: Effect.Effect<unknown, unknown>) =>
      supervise(effect, {
        onFailure: (cause, stopped) => {
          if (stopped && state === "running") state = "failed"
          if (stopped) ringSlot?.()
          hooks.error?.(new WorkerLoopFailed({ queue: commands.keys.queue, loop, cause, stopped }))
        },
      })
    const loops: Array<Fiber.Fiber<unknown, unknown>> = []
    loops.push(yield* Effect.forkDetach(supervised("heartbeat", heartbeatLoop(table, commands, hb))))
    loops.push(yield* Effect.forkDetach(supervised("fence", fenceLoop(table, hb))))
    if (settings.sweep) {
      const { intervalMs, limit } = settings.sweep
      const sweeper = Effect.gen(function* () {
        while (true) {
          yield* Effect.sleep(Math.round(intervalMs * (0.8 + Math.random() * 0.4)))
          // jobs this pass moved to dead (lease-expired) are reported through the dead hook
          const died: SweptDead[] = []
          const onBatch = (_: unknown, last: SweepResult) => died.push(...last.deadJobs)
          yield* sweepPass(commands, { limit, maxMs: 100, onBatch }).pipe(Effect.catch(report))
          for (const d of died) {
            const error = Object.assign(new Error(d.message), { name: "LeaseExpired" })
            yield* Effect.sync(() => hooks.dead?.({ id: d.id, token: d.token }, "lease-expired", error))
          }
        }
      })
      loops.push(yield* Effect.forkDetach(supervised("sweep", sweeper)))
    }
    const reserver = yield* Effect.forkDetach(supervised("reserve", reserveLoop).pipe(Effect.ensuring(endLoop)))

    /**
     * Releasing: abort the handlers still running; each job is released once its handler
     * has ended (the lease heartbeated meanwhile). A handler still running after
     * `shutdownAbortGraceMs` keeps its lease until it expires, and is reported.
     */
    const abortAndRelease = Effect.gen(function* () {
      state = "releasing"
      fireStop(stopAcks)
      for (const h of table.live()) yield* table.end(h, "shutdown", "worker shutting down")
      const ended = yield* Fiber.awaitAll([...jobFibers]).pipe(Effect.timeoutOption(settings.shutdownAbortGraceMs))
      if (Option.isNone(ended)) {
        for (const h of table.heartbeated()) {
          if (h.ended !== "shutdown" || h.settling) continue
          h.overrun = true
          const waitedMs = settings.shutdownAbortGraceMs
          yield* report(new ShutdownOverrun({ queue: commands.keys.queue, jobId: h.id, token: h.token, waitedMs }))
        }
      }
      const release =
        toRelease.length === 0
          ? Effect.void
          : commands.release(toRelease.splice(0)).pipe(Effect.timeoutOption(2_000), Effect.catch(report))
      // a reserve that lands now releases its own jobs (see reserveCall)
      const landing = Fiber.awaitAll([...inFlight]).pipe(Effect.timeoutOption(2_000))
      yield* Effect.all([release, landing], { concurrency: "unbounded", discard: true })
    })

    const shutdown = Effect.gen(function* () {
      state = "draining"
      // stop reserving: the loop is interrupted (a call in flight goes on in its own fiber)
      ringSlot?.()
      yield* Fiber.interrupt(reserver).pipe(Effect.timeoutOption(1_000))
      yield* Effect.promise(() => blocking.close(200))
      yield* flushRiders
      // draining: let running handlers finish, up to the grace period
      if (jobFibers.size > 0) {
        yield* Fiber.awaitAll([...jobFibers]).pipe(Effect.timeoutOption(settings.shutdownGraceMs))
      }
      yield* abortAndRelease
      yield* Fiber.interruptAll(loops)
      state = "closed"
      untrackWorker(handle)
    })

    let closing: Deferred.Deferred<void> | undefined
    const handle: WorkerHandle = {
      state: () => state,
      running: () => busy,
      close: Effect.suspend(() => {
        if (closing) return Deferred.await(closing)
        const done = Deferred.makeUnsafe<void>()
        closing = done
        // in a fiber of its own: a caller interrupted while it waits does not cut the shutdown short
        const run = shutdown.pipe(Effect.ensuring(Effect.sync(() => Deferred.doneUnsafe(done, Effect.void))))
        return Effect.forkDetach(run, { startImmediately: true }).pipe(Effect.andThen(Deferred.await(done)))
      }),
    }
    trackWorker(handle)
    return handle
  })
