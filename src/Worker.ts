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
 * - releasing: handlers still running are aborted and their jobs released in one
 *              call, so another worker starts them at once with attempts unchanged.
 * - closed:    loops stopped, connections closed. Reached even when Redis is gone.
 *
 * Each long-lived loop (reserve, heartbeat, fence, sweep) is supervised: a loop that fails
 * is reported and restarted. One that fails too often in a row is given up, and a running
 * worker becomes `failed` (it reserves no more jobs; close() works as from running).
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { planRetry } from "./Backoff.ts"
import { makeBatcher } from "./Batcher.ts"
import { encodeOutcome, safeHooks, stderrWarner, supervise } from "./Callbacks.ts"
import type { Commands, Reservation, ScriptFailure, SweepResult, SweptDead } from "./Commands.ts"
import { type InvalidPayload, WorkerLoopFailed } from "./Errors.ts"
import { warnIfEvicting } from "./EvictionPolicy.ts"
import type { Job } from "./Job.ts"
import { fenceLoop, fenceMargin, type Held, heartbeatLoop, makeLeaseTable, monotonicNow } from "./Lease.ts"
import { redisError } from "./Outcomes.ts"
import { newWorkerId } from "./RequestId.ts"
import type { RedisClient } from "./redis/Client.ts"
import { sweepPass } from "./Sweeper.ts"
import { trackWorker, untrackWorker } from "./testing/Leaks.ts"
import type { WorkerSettings } from "./WorkerOptions.ts"

/** The named states of a worker. */
export type WorkerState = "running" | "draining" | "releasing" | "closed" | "failed"

/** What happened to jobs, for events and hooks. */
export interface WorkerHooks<A> {
  readonly completed?: (job: Job<A>, result: unknown) => void
  /** A handler failed; `willRetry` is false when the job went to dead. */
  readonly failed?: (job: Job<A>, error: unknown, willRetry: boolean) => void
  /** The lease was lost (reclaimed by a sweep, or self-fenced): the handler was aborted and did not ack. */
  readonly leaseLost?: (
    job: { readonly id: string; readonly token: number },
    reason: "lease-lost" | "self-fenced",
  ) => void
  /** The job went to dead: reason "failed", "invalid-payload", or "lease-expired" (found by this worker's sweep). */
  readonly dead?: (job: { readonly id: string; readonly token: number }, reason: string, error: unknown) => void
  /** A Redis or infrastructure error the worker survived (it keeps retrying). */
  readonly error?: (error: unknown) => void
}

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
  /** Graceful shutdown (see the state machine). Never fails, always ends. */
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

/** A finished job to acknowledge. */
interface Finished {
  readonly id: string
  readonly token: number
  readonly result?: string
}
const RETRY_PAUSE = [100, 200, 500, 1000, 2000] as const

/**
 * How much later than its own timeout a BZPOPMIN may answer before its connection is
 * taken for silent (half-open) and replaced: 5 s, room for a loaded Redis or process.
 */
export const BLOCK_REPLY_SLACK_MS = 5_000

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
    const freeSlot = () => {
      busy--
      const ring = ringSlot
      ringSlot = undefined
      ring?.()
    }
    const waitSlot = Effect.callback<void>((resume) => {
      if (busy < settings.concurrency || state !== "running") resume(Effect.void)
      else ringSlot = () => resume(Effect.void)
    })
    const report = (e: unknown) => Effect.sync(() => hooks.error?.(e))

    const completer = makeBatcher(
      (items: ReadonlyArray<Finished>) => commands.complete(items, settings.keepCompleted),
      RESERVE_CHUNK,
    )

    /**
     * Finished jobs riding along with the reserve call that their freed slots trigger:
     * one script call (and one write) completes them and leases their successors.
     */
    const riding: Array<{ readonly item: Finished; readonly done: Deferred.Deferred<boolean, ScriptFailure> }> = []

    /**
     * Complete a finished job and free its slot. When the reserve loop waits for that
     * slot, the complete rides along with the reserve call the freed slot triggers
     * (queued first, then the slot is freed); otherwise it goes on its own.
     */
    const complete = (item: Finished, free: () => void): Effect.Effect<boolean, ScriptFailure> =>
      Effect.suspend(() => {
        if (settings.rideAlong === false || ringSlot === undefined || state !== "running") {
          free()
          return completer.submit(item)
        }
        const done = Deferred.makeUnsafe<boolean, ScriptFailure>()
        riding.push({ item, done })
        free()
        return Deferred.await(done)
      })

    /** Send riders that will not get a reserve call on their own. */
    const flushRiders = Effect.suspend(() => {
      const rest = riding.splice(0)
      return Effect.forEach(
        rest,
        (r) =>
          Effect.forkDetach(
            Effect.exit(completer.submit(r.item)).pipe(Effect.map((exit) => Deferred.doneUnsafe(r.done, exit))),
          ),
        { discard: true },
      )
    })

    const onLeaseEnd = (h: Held, why: "lease-lost" | "self-fenced") =>
      hooks.leaseLost?.({ id: h.id, token: h.token }, why)

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
          const ok = yield* complete({ id: r.id, token: r.token, result }, free)
          if (ok) hooks.completed?.(job, exit.value)
          else onLeaseEnd(held, "lease-lost")
          return
        }
        if (Cause.hasInterruptsOnly(exit.cause)) return
        const error = Cause.squash(exit.cause)
        const plan = yield* planRetry(settings.backoff, r.attempt, error, hooks.error)
        const outcome = yield* commands.fail(r, {
          delayMs: plan.delayMs,
          error: errorJson(error),
          mode: plan.retry ? "retry" : "dead",
        })
        if (outcome === "lost") onLeaseEnd(held, "lease-lost")
        else {
          hooks.failed?.(job, error, outcome === "retry")
          if (outcome === "dead") hooks.dead?.({ id: r.id, token: r.token }, "failed", error)
        }
      })

    /** A payload that does not decode goes to dead at once, without spending an attempt. */
    const refuse = (r: Reservation, held: Held, cause: Cause.Cause<unknown>) =>
      Effect.gen(function* () {
        const error = Cause.squash(cause)
        const message = error instanceof Error ? error.message : String(error)
        const outcome = yield* commands.fail(r, {
          delayMs: 0,
          error: JSON.stringify({ reason: "invalid-payload", message }),
          mode: "dead",
        })
        if (outcome === "dead") hooks.dead?.({ id: r.id, token: r.token }, "invalid-payload", error)
        else if (outcome === "lost") onLeaseEnd(held, "lease-lost")
      })

    /**
     * One job, one fiber: decode, run the handler (interruptible: a lost lease or the end
     * of the grace period interrupts this fiber), then settle (uninterruptible).
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
          signal: held.controller.signal,
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
            table.remove(r.id)
            if (held.ended === "shutdown" && !settled) toRelease.push(held)
          }),
        ),
      )
    }

    const startJob = (r: Reservation, localDeadline: number) =>
      Effect.gen(function* () {
        busy++
        const held: Held = {
          id: r.id,
          token: r.token,
          attempt: r.attempt,
          maxAttempts: r.maxAttempts,
          localDeadline,
          controller: new AbortController(),
          fiber: undefined,
          ended: undefined,
        }
        table.add(held)
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

    const reserveLoop = Effect.gen(function* () {
      let failures = 0
      while (state === "running") {
        if (busy >= settings.concurrency) {
          yield* waitSlot
          continue
        }
        const want = Math.min(settings.concurrency - busy, RESERVE_CHUNK)
        const ride = riding.splice(0, RESERVE_CHUNK)
        if (riding.length > 0) yield* flushRiders
        const sentAt = monotonicNow()
        const reserved = yield* Effect.exit(
          commands.reserve(
            want,
            settings.leaseMs,
            RESERVE_CHUNK,
            ride.map((r) => r.item),
            settings.keepCompleted,
            { workerId },
          ),
        )
        for (let i = 0; i < ride.length; i++) {
          const done = ride[i]!.done
          if (Exit.isSuccess(reserved)) Deferred.doneUnsafe(done, Effect.succeed(reserved.value.completed[i] === true))
          else Deferred.doneUnsafe(done, Effect.failCause(reserved.cause))
        }
        if (Exit.isFailure(reserved)) {
          if (state !== "running") break
          yield* report(Cause.squash(reserved.cause))
          yield* Effect.sleep(RETRY_PAUSE[Math.min(failures++, RETRY_PAUSE.length - 1)]!)
          continue
        }
        failures = 0
        if (state !== "running") {
          // closed while the call was in flight: give the jobs straight back, unstarted
          if (reserved.value.jobs.length > 0) yield* commands.release(reserved.value.jobs).pipe(Effect.catch(report))
          break
        }
        const local = sentAt + settings.leaseMs - fenceMargin(settings.leaseMs)
        for (const r of reserved.value.jobs) yield* startJob(r, local)
        if (reserved.value.jobs.length < want && state === "running") {
          const due = reserved.value.nextDueMs
          if (due === 0) continue
          const wait = due > 0 ? Math.min(due, settings.blockTimeoutMs) : settings.blockTimeoutMs
          const woke = yield* Effect.exit(blockOnMarker(wait))
          if (Exit.isFailure(woke) && state === "running") {
            yield* report(Cause.squash(woke.cause))
            yield* Effect.sleep(RETRY_PAUSE[Math.min(failures++, RETRY_PAUSE.length - 1)]!)
          }
        }
      }
    })

    const hb = {
      queue: commands.keys.queue,
      leaseMs: settings.leaseMs,
      heartbeatMs: settings.heartbeatMs,
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
    const reserver = yield* Effect.forkDetach(supervised("reserve", reserveLoop).pipe(Effect.ensuring(flushRiders)))

    const handle: WorkerHandle = {
      state: () => state,
      running: () => busy,
      close: Effect.suspend(() => {
        if (state !== "running" && state !== "failed") return Effect.void
        state = "draining"
        return Effect.gen(function* () {
          // stop reserving: the blocked marker wait ends when its connection closes
          ringSlot?.()
          yield* Effect.promise(() => blocking.close(200))
          yield* Fiber.await(reserver).pipe(Effect.timeoutOption(2_000))
          yield* Fiber.interrupt(reserver).pipe(Effect.timeoutOption(100))
          yield* flushRiders
          // draining: let running handlers finish, up to the grace period
          const grace = Fiber.awaitAll([...jobFibers]).pipe(Effect.timeoutOption(settings.shutdownGraceMs))
          if (jobFibers.size > 0) yield* grace
          // releasing: abort the rest and give their jobs back
          state = "releasing"
          for (const h of table.live()) yield* table.end(h, "shutdown", "worker shutting down")
          yield* Fiber.awaitAll([...jobFibers]).pipe(Effect.timeoutOption(2_000))
          if (toRelease.length > 0) {
            yield* commands.release(toRelease).pipe(
              Effect.timeoutOption(2_000),
              Effect.catch((e) => report(e)),
            )
          }
          yield* Fiber.interruptAll(loops)
          state = "closed"
          untrackWorker(handle)
        })
      }),
    }
    trackWorker(handle)
    return handle
  })
