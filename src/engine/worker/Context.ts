/**
 * What the roles of a worker share, in one typed object: settings, hooks, the lease table,
 * the state cell, the job fibers. Built once by `startWorker`; each role is a set of
 * functions taking it. The reserve loop's scheduling state (slots, calls, riders) is here
 * read-only (`sched`): only Scheduling.ts writes it, told what happened by the roles.
 *
 * The worker's state changes only through `transition` (WorkerState.ts); every move also
 * wakes the reserve loop, so a loop waiting for a slot sees the change at once.
 */
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import type { RedisClient } from "../../redis/Client.ts"
import { makeBatcher } from "../calls/Batcher.ts"
import { type Commands, SCRIPT_CHUNK } from "../calls/Commands.ts"
import { type AckLanes, makeAckLanes } from "../model/AckLanes.ts"
import { type InvalidPayload, LoopBlocked, type WorkerNotRunning } from "../model/Errors.ts"
import type { Job } from "../model/HandlerJob.ts"
import { makeRegistryBeat, type WorkerSelf } from "../model/Registry.ts"
import { newWorkerId } from "../model/RequestId.ts"
import { loopBlockedTelemetry } from "../telemetry/WorkerTelemetry.ts"
import { makeStopSignal, type StopSignal } from "./Acks.ts"
import { safeHooks, stderrWarner, type WorkerHooks } from "./Callbacks.ts"
import { type Held, type LeaseTable, makeLeaseTable } from "./Lease.ts"
import { type LoopMonitor, makeLoopMonitor } from "./LoopMonitor.ts"
import { type Finished, makeScheduling, type Scheduling, tell, WAKE } from "./Scheduling.ts"
import type { WorkerSettings } from "./WorkerOptions.ts"
import { makeStateCell, type StateCell, type WorkerState } from "./WorkerState.ts"

export type { Finished, Landed, RideAnswer, Rider, Waiting } from "./Scheduling.ts"
export type { WorkerState } from "./WorkerState.ts"

/** What the engine needs besides settings: how to decode and run a job. */
export interface WorkerProgram<A> {
  readonly decode: (text: string) => Effect.Effect<A, InvalidPayload>
  readonly handler: (job: Job<A>) => Effect.Effect<unknown, unknown>
  readonly hooks: WorkerHooks<A>
  /** How to serialise a handler's result when completed jobs are retained. */
  readonly encodeResult?: (result: unknown) => string
  /**
   * The same decode and handler as plain functions, when the face has them (the Promise
   * face): a job with nothing to trace and no timeout then runs without a fiber (PlainRun.ts).
   */
  readonly plain?: PlainProgram<A>
}

/** How the Promise face runs a job without Effects: decode (throws on a bad payload) and call the handler. */
export interface PlainProgram<A> {
  readonly decode: (text: string) => A
  readonly run: (job: Job<A>) => unknown
}

/** Jobs running without a fiber (PlainRun.ts): how many, and who waits for none to be left. */
export interface PlainRuns {
  count: number
  readonly idle: Array<() => void>
}

/** What the `drained` hook is judged by (written only by Drained.ts). */
export interface IdleWatch {
  /** A job was started since the last `drained` (or since the start). */
  hadWork: boolean
  /** The last reserve call that landed found fewer jobs than it asked for. */
  empty: boolean
}

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

/** The batcher of stand-alone completes: one call in flight at a time, so one ack lane of its own. */
const makeCompleter = (commands: Commands, lane: string) =>
  makeBatcher((items: ReadonlyArray<Finished>) => commands.complete(items, lane), SCRIPT_CHUNK)

/** Everything the roles of one worker share. */
export interface WorkerContext<A> {
  readonly commands: Commands
  /** The worker's own connection for the marker wait (closed by the worker). */
  readonly blocking: RedisClient
  readonly settings: WorkerSettings
  readonly program: WorkerProgram<A>
  /** The user's hooks, guarded: a throw is reported on the error hook, never thrown into the engine. */
  readonly hooks: Required<WorkerHooks<A>>
  readonly table: LeaseTable
  readonly workerId: string
  /** What the worker's heartbeat reports of it in the queue's registry. */
  readonly self: WorkerSelf
  /**
   * When the heartbeat sends the worker's record (see Registry.ts); the record goes stale
   * (a sweep drops it) when a lease of this worker would have expired too.
   */
  readonly registry: ReturnType<typeof makeRegistryBeat>
  /** The lease length asked of the server: the worker fences on leaseMs, a sweep waits the grace more. */
  readonly serverLeaseMs: number
  /** Fired once close stops waiting for acks (past the grace): they give up, their leases are released. */
  readonly stopAcks: StopSignal
  /** Completes sent on their own, batched. */
  readonly completer: ReturnType<typeof makeCompleter>
  /** The worker's ack lanes (model/AckLanes.ts): one per fail in flight, one the completer's. */
  readonly ackLanes: AckLanes
  /** Fibers of the jobs whose handlers run or settle. */
  readonly jobFibers: Set<Fiber.Fiber<void>>
  /** Jobs whose handlers run or settle without a fiber (PlainRun.ts). */
  readonly plainRuns: PlainRuns
  /** Leases to release at close (shutdown-ended jobs, acks that got no answer). */
  readonly toRelease: Held[]
  /**
   * The reserve loop's scheduling state (slots, calls asked, in flight and landed, riders,
   * prefetched jobs, the linger): read-only here; changed only by telling it what happened
   * (`tell`, Scheduling.ts) or by the loop's own steps.
   */
  readonly sched: Scheduling
  /** The worker's state (`lifecycle.current`); changed only through `transition` (WorkerState.ts). */
  readonly state: WorkerState
  /** The worker's state cell: a move wakes the reserve loop; a refused move is reported on the error hook. */
  readonly lifecycle: StateCell
  /** What the `drained` hook is judged by (Drained.ts: its only writer). */
  readonly idle: IdleWatch
  /** Leases this worker self-fenced since it started (reported to the queue's counter by its heartbeat). */
  selfFenced: number
  /** The event-loop check while in-process handlers run (LoopMonitor.ts). */
  readonly loop: LoopMonitor
  /** How many times the main connection was replaced as silent (a heartbeat got no reply). */
  replaced: number
  /** Wake the reserve loop if it waits (tells the scheduling state `Wake`). */
  readonly wakeLoop: () => void
  /** Report an error the worker survives on the error hook. */
  readonly report: (e: unknown) => Effect.Effect<void>
  /**
   * Start an Effect in a fiber of its own from plain code (a callback), with the services
   * the worker was started with (its clock, tracer, references): the plain runs' hand-overs.
   */
  readonly fork: <X>(effect: Effect.Effect<X>) => Fiber.Fiber<X>
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
    // made once its queue answered (opened by the caller): the worker reached Redis
    lifecycle: makeStateCell(
      (e) => hooks.error?.(e),
      () => ctx.wakeLoop(),
      "running",
    ),
    idle: { hadWork: false, empty: false },
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
