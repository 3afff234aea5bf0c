/**
 * The worker engine, written once in Effect; the Promise and Effect faces wrap it.
 *
 * Lifecycle: the states, their order and the moves between them are WorkerState.ts
 * (drawn there); the shutdown phases and their timeouts are Lifecycle.ts. Idle, the
 * reserve loop blocks on the queue's marker (one blocking command per `blockTimeoutMs`).
 *
 * Each long-lived loop (reserve, heartbeat, fence, sweep) is supervised: a loop that fails
 * is reported and restarted. One that fails too often in a row is given up, and a running
 * worker becomes `failed` (it reserves no more jobs; close() works as from running).
 * `close` is memoized: every call waits for the one shutdown.
 *
 * This file wires the worker: it builds the shared state (Context.ts) and starts the
 * loops. The three rooms sit below it, each taking only its part of the state: loop/ (the
 * reserve loop, its calls, slots, prefetch, riders; it starts runs through the `startRun`
 * it is handed), run/ (one job, from its start to its settled ack) and lease/ (the lease
 * table, heartbeat and fence, acks sent until answered). Beside it: Lifecycle.ts
 * (supervision, the shutdown phases and their timeouts), SweepLoop.ts (the in-process sweep).
 */

import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import type { RedisClient } from "../../redis/Client.ts"
import type { Commands } from "../calls/Commands.ts"
import { warnIfEvicting } from "../calls/EvictionPolicy.ts"
import { loadOtel } from "../telemetry/Otel.ts"
import { makeContext, type WorkerContext, type WorkerHandle } from "./Context.ts"
import { memoizedClose, shutdown, supervised } from "./Lifecycle.ts"
import { trackWorker, untrackWorker } from "./LiveWorkers.ts"
import { leaseLoops, register } from "./lease/LeaseLoops.ts"
import { endLoop, reserveLoop } from "./loop/ReserveLoop.ts"
import { outboxLoop } from "./OutboxLoop.ts"
import { pause, resume } from "./Pause.ts"
import { timeOut } from "./run/Steer.ts"
import { sweepLoop } from "./SweepLoop.ts"
import type { WorkerSettings } from "./WorkerOptions.ts"
import type { WorkerProgram } from "./WorkerProgram.ts"

export type { PauseOptions, WorkerHandle } from "./Context.ts"
export { BLOCK_REPLY_SLACK_MS } from "./loop/Reserve.ts"
export type { WorkerHooks } from "./WorkerHooks.ts"
export type { WorkerProgram } from "./WorkerProgram.ts"
export { leastAdvanced, WORKER_STATE_ORDER, type WorkerState } from "./WorkerState.ts"

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
    // the optional OpenTelemetry API, imported once, before the first job runs
    yield* Effect.promise(loadOtel)
    // fibers started from plain code (PlainRun.ts) run with the services this worker runs with
    const ctx = makeContext(commands, blocking, settings, program, Effect.runForkWith(yield* Effect.context<never>()))
    // into the queue's registry before the first job (a failure is left to the heartbeats)
    yield* register(ctx)
    // from here on nothing stops half-way: the loops start and the handle tracks them
    return yield* Effect.uninterruptible(startLoops(ctx))
  })

/** Start the worker's loops (heartbeat, fence, sweep, reserve) and make its handle. */
const startLoops = <A>(ctx: WorkerContext<A>): Effect.Effect<WorkerHandle> =>
  Effect.gen(function* () {
    const settings = ctx.settings
    const lease = leaseLoops(ctx, (h) => ctx.fork(Effect.uninterruptible(timeOut(ctx, h))))
    const loops: Array<Fiber.Fiber<unknown, unknown>> = []
    loops.push(yield* Effect.forkDetach(supervised(ctx, "heartbeat", lease.heartbeat)))
    loops.push(yield* Effect.forkDetach(supervised(ctx, "fence", lease.fence)))
    loops.push(yield* Effect.forkDetach(supervised(ctx, "outbox", outboxLoop(ctx))))
    if (settings.sweep) {
      const { intervalMs, limit } = settings.sweep
      loops.push(yield* Effect.forkDetach(supervised(ctx, "sweep", sweepLoop(ctx, intervalMs, limit))))
    }
    const reserver = yield* Effect.forkDetach(
      supervised(ctx, "reserve", reserveLoop(ctx)).pipe(Effect.ensuring(endLoop(ctx))),
    )
    const handle: WorkerHandle = {
      state: () => ctx.state,
      running: () => ctx.sched.busy,
      close: memoizedClose(shutdown(ctx, { reserver, loops }, () => untrackWorker(handle))),
      pause: (options) => pause(ctx, options),
      resume: resume(ctx),
    }
    trackWorker(handle)
    return handle
  })
