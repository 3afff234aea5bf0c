/**
 * The worker's context, assembled: settings, hooks, the lease table, the state cell, the job
 * fibers. Built once by `startWorker`. Each room takes only its part of it (lease/LeaseDeps.ts,
 * loop/LoopDeps.ts, run/RunDeps.ts), and the loop starts runs through the `startRun` built
 * here. The reserve loop's scheduling state (slots, calls, riders) is read-only to the rooms
 * (`sched`): only loop/Scheduling.ts writes it, told what happened.
 *
 * The worker's state changes only through `transition` (WorkerState.ts); every move also
 * wakes the reserve loop, so a loop waiting for a slot sees the change at once.
 */
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import type { RedisClient } from "../../redis/Client.ts"
import type { Commands } from "../calls/Commands.ts"
import { payloadSizes } from "../calls/PayloadRefs.ts"
import { makeAckLanes } from "../model/AckLanes.ts"
import { LoopBlocked, type WorkerNotRunning } from "../model/Errors.ts"
import { makeRegistryBeat, type WorkerSelf } from "../model/Registry.ts"
import { newWorkerId } from "../model/RequestId.ts"
import { loopBlockedTelemetry } from "../telemetry/WorkerTelemetry.ts"
import { makeStopSignal } from "./lease/Acks.ts"
import { makeLeaseTable } from "./lease/LeaseTable.ts"
import { makeLoopMonitor } from "./lease/LoopMonitor.ts"
import { makeCompleter } from "./loop/LoopDeps.ts"
import { makeScheduling, tell, WAKE } from "./loop/Scheduling.ts"
import type { RunDeps } from "./run/RunDeps.ts"
import { startJob, startWaiting } from "./run/RunJob.ts"
import { safeHooks, stderrWarner } from "./WorkerHooks.ts"
import type { WorkerSettings } from "./WorkerOptions.ts"
import type { WorkerProgram } from "./WorkerProgram.ts"
import { makeStateCell, type StateCell, type WorkerState } from "./WorkerState.ts"

export type { PlainProgram, WorkerProgram } from "./WorkerProgram.ts"
export type { WorkerState } from "./WorkerState.ts"

/** A started worker. */
export interface WorkerHandle {
  readonly state: () => WorkerState
  /** Jobs whose handlers are running. */
  readonly running: () => number
  /** Graceful shutdown (see the state machine). Never fails, always ends; a second call waits for the first. */
  readonly close: Effect.Effect<void>
  /** Stop leasing new jobs (Pause.ts); `wait`: end once the running handlers have. Never fails. */
  readonly pause: (options?: PauseOptions) => Effect.Effect<void>
  /** Lease again after `pause`; fails when the worker is closing, closed or failed. */
  readonly resume: Effect.Effect<void, WorkerNotRunning>
}

/** Options of `pause`. */
export interface PauseOptions {
  /** Resolve only once the handlers running now have ended and settled. Default false: once no new job will start. */
  readonly wait?: boolean | undefined
}

/**
 * Everything the rooms of one worker share: what the run of a job is given (which holds the
 * reserve loop's part, which holds the lease keeper's), and what only the worker itself uses.
 */
export interface WorkerContext<A> extends RunDeps<A> {
  /** What the worker's heartbeat reports of it in the queue's registry. */
  readonly self: WorkerSelf
  /** The worker's state (`lifecycle.current`); changed only through `transition` (WorkerState.ts). */
  readonly state: WorkerState
  /** The worker's state cell: a move wakes the reserve loop; a refused move is reported on the error hook. */
  readonly lifecycle: StateCell
  /** Wake the reserve loop if it waits (tells the scheduling state `Wake`). */
  readonly wakeLoop: () => void
}

/**
 * Build the shared state of a worker on `commands` (its queue), with `blocking` as its
 * own connection for the marker wait, and `fork` to start fibers from plain code (default:
 * `Effect.runFork`, the default services). Starts nothing.
 */
export const makeContext = <A>(
  commands: Commands,
  blocking: RedisClient,
  settings: WorkerSettings,
  program: WorkerProgram<A>,
  fork: <X>(effect: Effect.Effect<X>) => Fiber.Fiber<X> = Effect.runFork,
): WorkerContext<A> => {
  // user callbacks never throw into the engine: a throw is reported on the error hook
  const hooks = safeHooks(program.hooks, stderrWarner(`worker of queue "${commands.keys.queue}"`))
  const workerId = newWorkerId()
  const ackLanes = makeAckLanes(workerId)
  const self: WorkerSelf = {
    id: workerId,
    concurrency: settings.concurrency,
    startedAt: Date.now(),
    running: () => ctx.sched.busy,
    state: () => ctx.state,
    selfFenced: () => ctx.selfFenced,
  }
  const ctx: WorkerContext<A> = {
    commands,
    blocking,
    settings,
    program,
    hooks,
    table: makeLeaseTable(),
    workerId,
    self,
    registry: makeRegistryBeat(self, settings.leaseMs + settings.leaseGraceMs),
    serverLeaseMs: settings.leaseMs + settings.leaseGraceMs,
    stopAcks: makeStopSignal(),
    completer: makeCompleter(commands, ackLanes.take()),
    ackLanes,
    jobFibers: new Set(),
    plainRuns: { count: 0, idle: [] },
    toRelease: [],
    sched: makeScheduling(),
    get state() {
      return ctx.lifecycle.current
    },
    // the loop starts runs through this, so it never imports run/ (the worker hands it over)
    startRun: {
      job: (r, deadline) => startJob(ctx, r, deadline),
      waiting: () => startWaiting(ctx),
    },
    // made once its queue answered (opened by the caller): the worker reached Redis
    lifecycle: makeStateCell(
      (e) => hooks.error?.(e),
      () => ctx.wakeLoop(),
      "running",
    ),
    idle: { hadWork: false, empty: false, looks: 0 },
    payloads: payloadSizes(),
    selfFenced: 0,
    loop: makeLoopMonitor(
      settings.leaseMs,
      () => ctx.sched.busy > 0,
      (ms) => {
        loopBlockedTelemetry(commands.keys.queue)
        hooks.loopBlocked(new LoopBlocked({ queue: commands.keys.queue, blockedMs: ms, leaseMs: settings.leaseMs }))
      },
    ),
    replaced: 0,
    wakeLoop: () => tell(ctx.sched, WAKE),
    report: (e) => Effect.sync(() => hooks.error?.(e)),
    fork,
  }
  return ctx
}
