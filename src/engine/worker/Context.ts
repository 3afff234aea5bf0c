/**
 * The worker's shared state, in one typed object: what every role of the worker (slots,
 * riders, running a job, the reserve loop, leases, the sweep, the lifecycle) reads and
 * changes. Built once by `startWorker`; each role is a set of functions taking it.
 *
 * The worker's state changes only through `transition` (WorkerState.ts); every move also
 * wakes the reserve loop, so a loop waiting for a slot sees the change at once.
 */
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import type { RedisClient } from "../../redis/Client.ts"
import { type Commands, type Reservation, SCRIPT_CHUNK } from "../calls/Commands.ts"
import type { InvalidPayload } from "../model/Errors.ts"
import { makeRegistryBeat, type WorkerSelf } from "../model/Registry.ts"
import { newWorkerId } from "../model/RequestId.ts"
import { makeBatcher } from "../queue/Batcher.ts"
import type { Job } from "../queue/Job.ts"
import { makeStopSignal, type StopSignal } from "./Acks.ts"
import { safeHooks, stderrWarner, type WorkerHooks } from "./Callbacks.ts"
import { type Held, type LeaseTable, makeLeaseTable } from "./Lease.ts"
import type { WorkerSettings } from "./WorkerOptions.ts"
import { makeStateCell, type StateCell, type WorkerState } from "./WorkerState.ts"

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

/** A started worker. */
export interface WorkerHandle {
  readonly state: () => WorkerState
  /** Jobs whose handlers are running. */
  readonly running: () => number
  /** Graceful shutdown (see the state machine). Never fails, always ends; a second call waits for the first. */
  readonly close: Effect.Effect<void>
}

/** A finished job to acknowledge. */
export interface Finished {
  readonly id: string
  readonly token: number
  readonly result?: string
}

/**
 * What a rider (a complete carried by a reserve call) learns: the script's answer, or
 * that it must be sent on its own (the reserve failed — `uncertain` when it may have
 * run — or never carried it).
 */
export type RideAnswer = boolean | { readonly resend: true; readonly uncertain: boolean }

/** A complete riding with a reserve call: answered once, listened to by its job's fiber. */
export interface Rider {
  readonly item: Finished
  readonly answer: (a: RideAnswer) => void
  /** Call `f` with the answer (at once if it came already); returns how to stop listening. */
  readonly listen: (f: (a: RideAnswer) => void) => () => void
}

/** A reserve call that landed: what the loop needs to start its jobs. */
export interface Landed {
  readonly reserved: Exit.Exit<{ readonly jobs: ReadonlyArray<Reservation>; readonly nextDueMs: number }, unknown>
  readonly starts: ReadonlyArray<{ readonly r: Reservation; readonly deadline: number }>
  /** True when the call landed after close began and gave its jobs back itself. */
  readonly handled: boolean
  /** True when the call failed because the marker wait it was sent behind failed (that failure is reported instead). */
  readonly quiet: boolean
  readonly want: number
}

/** A leased job waiting for a slot (prefetched, see Prefetch.ts). */
export interface Waiting {
  readonly r: Reservation
  readonly held: Held
}

const makeCompleter = (commands: Commands, settings: WorkerSettings) =>
  makeBatcher((items: ReadonlyArray<Finished>) => commands.complete(items, settings.keepCompleted), SCRIPT_CHUNK)

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
  /** Fibers of the jobs whose handlers run or settle. */
  readonly jobFibers: Set<Fiber.Fiber<void>>
  /** Jobs whose handlers run or settle without a fiber (PlainRun.ts). */
  readonly plainRuns: PlainRuns
  /** Leases to release at close (shutdown-ended jobs, acks that got no answer). */
  readonly toRelease: Held[]
  /**
   * Finished jobs riding along with the reserve call that their freed slots trigger:
   * one script call (and one write) completes them and leases their successors.
   */
  readonly riding: Rider[]
  /** Reserve calls in flight (close waits for them to land, up to a bound). */
  readonly inFlight: Set<Fiber.Fiber<unknown>>
  /** Calls that landed while the worker runs, for the loop to start their jobs, in order. */
  readonly landed: Landed[]
  /** Leased jobs waiting for a slot, in order (prefetched: see Prefetch.ts). */
  readonly waiting: Waiting[]
  /** Moving average of handler durations in ms (undefined until one finished), for prefetch "auto". */
  handlerPaceMs: number | undefined
  /** When a fragile job last landed (monotonic ms): prefetch pauses for a while after (Fragile.ts). */
  fragileAt: number | undefined
  /** The worker's state (`lifecycle.current`); changed only through `transition` (WorkerState.ts). */
  readonly state: WorkerState
  /** The worker's state cell: a move wakes the reserve loop; a refused move is reported on the error hook. */
  readonly lifecycle: StateCell
  /** Jobs whose handlers are running (their slots are taken). */
  busy: number
  /** Leases this worker self-fenced since it started (reported to the queue's counter by its heartbeat). */
  selfFenced: number
  /** Jobs asked for by calls in flight or landed and not yet started: their slots are spoken for. */
  asked: number
  /** Resumes the reserve loop while it waits for an event (a slot freed, a call landed). */
  ringSlot: (() => void) | undefined
  /** The loop lingered its LINGER_MS (Slots.ts) since its last call: the next one goes now. */
  lingerOver: boolean
  /** The loop waits with a linger timeout armed (Slots.ts). */
  lingerArmed: boolean
  /** The loop's current wait follows a short (empty) answer: a freed slot then sends nothing. */
  waitShort: boolean
  /**
   * True while the reserve loop will send another reserve call without waiting (it has
   * free slots and is not blocked, sleeping or waiting for a slot): a job finished now
   * rides with that call (one script call for both) instead of going on its own.
   */
  reserving: boolean
  /**
   * Numbers this worker's reserve calls: the request id a re-send is recognised by needs
   * to be unique only per worker (the script keeps one record per worker id), so a
   * counter does (no random bytes per call).
   */
  reserveSeq: number
  /** How many times the main connection was replaced as silent (a heartbeat got no reply). */
  replaced: number
  /** Wake the reserve loop if it waits (a slot freed, a call landed). */
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
  const self: WorkerSelf = {
    id: workerId,
    concurrency: settings.concurrency,
    startedAt: Date.now(),
    running: () => ctx.busy,
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
    completer: makeCompleter(commands, settings),
    jobFibers: new Set(),
    plainRuns: { count: 0, idle: [] },
    toRelease: [],
    riding: [],
    inFlight: new Set(),
    landed: [],
    waiting: [],
    handlerPaceMs: undefined,
    fragileAt: undefined,
    get state() {
      return ctx.lifecycle.current
    },
    // made once its queue answered (opened by the caller): the worker reached Redis
    lifecycle: makeStateCell(
      (e) => hooks.error?.(e),
      () => ctx.wakeLoop(),
      "running",
    ),
    busy: 0,
    selfFenced: 0,
    asked: 0,
    ringSlot: undefined,
    lingerOver: false,
    lingerArmed: false,
    waitShort: false,
    reserving: false,
    reserveSeq: 0,
    replaced: 0,
    wakeLoop: () => {
      const ring = ctx.ringSlot
      ctx.ringSlot = undefined
      ring?.()
    },
    report: (e) => Effect.sync(() => hooks.error?.(e)),
    fork,
  }
  return ctx
}
