/**
 * The worker's spans and measurements: a `process <queue>` span (kind CONSUMER) per
 * handler run, a `settle <queue>` span (kind CLIENT) per complete or fail, events on
 * them when a lease ends early, and the worker's metrics.
 *
 * Each handler run processes one job, so its process span is a child of the job's
 * creation context (the producer's `send` span) and also links to it; a job added
 * untraced gets a process span that starts a trace of its own.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type { Reservation } from "../calls/Commands.ts"
import type { TraceParent } from "../model/Carrier.ts"
import { activeTracer } from "./Otel.ts"
import { type Instruments, meter } from "./OtelMetrics.ts"
import { hasEffectTracer, type SpanHandle, type SpanSpec, startOtelSpan, startSpan, tracerFor } from "./Spans.ts"
import { destination, errorType, failureOf, operationAttributes, queueAttributes } from "./Telemetry.ts"

/**
 * The event a span gets when its lease ends without an ack; attribute `leaseq.reason`:
 * `lease-lost`, `self-fenced`, `ack-refused` (a complete or fail refused: the token was
 * no longer current) or `shutdown` (released at close).
 */
export const LEASE_ENDED = "leaseq.lease_ended"

/** What the worker's telemetry needs to know about the worker. */
export interface WorkerIdentity {
  readonly queue: string
  readonly workerId: string
  readonly leaseMs: number
}

/** A lease's span holder (the `Held` of the lease table carries one). */
export interface Traced {
  span?: SpanHandle | undefined
}

const B32 = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
/** The time (ms) in a ULID job id, or undefined when the id is not a ULID. */
const idTime = (id: string): number | undefined => {
  if (id.length !== 26) return undefined
  let t = 0
  for (let i = 0; i < 10; i++) {
    const v = B32.indexOf(id[i]!)
    if (v < 0) return undefined
    t = t * 32 + v
  }
  return t
}

/** What one run of a job records: its process span (when traced) and the meter (when measured). */
export interface Run {
  readonly span: SpanHandle | undefined
  readonly meter: Instruments | undefined
  readonly started: number
}

/**
 * True when nothing would record a run started now: no tracer for the current fiber and
 * no meter provider. The caller then skips {@link startProcess} (and its Effects) for the
 * job; false when it cannot tell (outside a fiber).
 */
export const recordsNothing = (): boolean => {
  const fiber = Fiber.getCurrent()
  return fiber !== undefined && tracerFor(fiber) === undefined && meter() === undefined
}

/** The process span of a reserved job's run (see the top of this file). */
const processSpec = (w: WorkerIdentity, r: Reservation, parent: TraceParent | undefined): SpanSpec => ({
  name: `process ${destination(w.queue)}`,
  kind: "consumer",
  parent,
  root: parent === undefined,
  links: parent === undefined ? undefined : [parent],
  attributes: {
    ...queueAttributes(w.queue),
    "messaging.operation.type": "process",
    "messaging.operation.name": "process",
    "messaging.message.id": r.id,
    "messaging.client.id": w.workerId,
    "messaging.leaseq.attempt": r.attempt,
    "messaging.leaseq.max_attempts": r.maxAttempts,
    "messaging.leaseq.lease_token": r.token,
    "messaging.leaseq.lease_ms": w.leaseMs,
  },
})

/** Count a run as consumed and (first runs) record how long its job waited, from its id's time to now. */
const countRun = (w: WorkerIdentity, r: Reservation, m: Instruments): void => {
  m.consumed.add(1, operationAttributes(w.queue, "process"))
  const t = r.attempt === 1 ? idTime(r.id) : undefined
  if (t !== undefined) m.wait.record(Math.max(0, Date.now() - t) / 1000, queueAttributes(w.queue))
}

/**
 * Start recording a reserved job's run: its process span, its count as consumed, and
 * (first runs) how long it waited, from its id's time (the producer's clock) to now.
 * Undefined when nothing records (no tracer, no meter provider): the run is untouched.
 */
export const startProcess = (
  w: WorkerIdentity,
  r: Reservation,
  parent: TraceParent | undefined,
): Effect.Effect<Run | undefined> =>
  Effect.withFiber((fiber) => {
    const traced = tracerFor(fiber) !== undefined
    const m = meter()
    if (!traced && m === undefined) return Effect.succeed(undefined)
    if (m) countRun(w, r, m)
    if (!traced) return Effect.succeed({ span: undefined, meter: m, started: performance.now() })
    return Effect.map(startSpan(processSpec(w, r, parent)), (span) => ({ span, meter: m, started: performance.now() }))
  })

/**
 * True when a run started now records nothing or can be recorded without Effects: no
 * Effect tracer of the application's (spans, if any, go to the global OpenTelemetry
 * tracer, and metrics to the global meter). False outside a fiber.
 */
export const recordsPlainly = (): boolean => {
  const fiber = Fiber.getCurrent()
  return fiber !== undefined && !hasEffectTracer(fiber)
}

/** {@link startProcess} without Effects, where {@link recordsPlainly} holds. */
export const startProcessPlain = (w: WorkerIdentity, r: Reservation, parent: TraceParent | undefined) => {
  const span = activeTracer() ? startOtelSpan(processSpec(w, r, parent)) : undefined
  const m = meter()
  if (span === undefined && m === undefined) return undefined
  if (m) countRun(w, r, m)
  const run: Run = { span, meter: m, started: performance.now() }
  return run
}

/**
 * End a handler run: record its duration, and end its span — with the error when the
 * handler failed, or with `error.type` = the reason when its lease ended early
 * (`lease-lost`, `self-fenced`, `shutdown`).
 */
export const endProcess = (
  w: WorkerIdentity,
  run: Run | undefined,
  exit: Exit.Exit<unknown, unknown>,
  ended: string | undefined,
) => {
  if (run === undefined) return
  const type = ended ?? (Exit.isFailure(exit) ? errorType(failureOf(exit)) : undefined)
  run.meter?.process.record((performance.now() - run.started) / 1000, operationAttributes(w.queue, "process", type))
  const span = run.span
  if (span === undefined) return
  if (ended === "shutdown") span.event(LEASE_ENDED, { "leaseq.reason": "shutdown" })
  span.end(type === undefined ? undefined : { error: ended ?? failureOf(exit), type })
}

/**
 * Run a handler inside its run's span, ending the run when the handler ends (in a
 * finalizer: a lost lease interrupts the fiber, and the span still ends). An untraced,
 * unmeasured run is the handler as it is.
 */
export const runHandler = <A, E, R>(
  w: WorkerIdentity,
  run: Run | undefined,
  ended: () => string | undefined,
  handler: Effect.Effect<A, E, R>,
): Effect.Effect<A, E, R> =>
  run === undefined
    ? handler
    : Effect.onExit(run.span ? run.span.within(handler) : handler, (exit) =>
        Effect.sync(() => endProcess(w, run, exit, ended())),
      )

/** The settle span of a complete or fail, a child of the run's process span. */
const settleSpec = (w: WorkerIdentity, r: Reservation, parent: SpanHandle, operation: string): SpanSpec => ({
  name: `settle ${destination(w.queue)}`,
  kind: "client",
  parent,
  attributes: {
    ...queueAttributes(w.queue),
    "messaging.operation.type": "settle",
    "messaging.operation.name": operation,
    "messaging.message.id": r.id,
    "messaging.client.id": w.workerId,
    "messaging.leaseq.attempt": r.attempt,
    "messaging.leaseq.lease_token": r.token,
  },
})

/** Called as a settle starts: the function that ends it (its duration recorded when measured, its span ended with the error, if any). */
const endSettle = (w: WorkerIdentity, run: Run, operation: string, span: SpanHandle | undefined) => {
  const started = performance.now()
  return (exit: Exit.Exit<unknown, unknown>): void => {
    const error = failureOf(exit)
    const type = Exit.isFailure(exit) ? errorType(error) : undefined
    run.meter?.operation.record((performance.now() - started) / 1000, operationAttributes(w.queue, operation, type))
    span?.end(type === undefined ? undefined : { error, type })
  }
}

/**
 * Run a complete or fail in a `settle <queue>` span, a child of the process span (when
 * there is one), recording its duration (when measured). While it runs, the lease's
 * span is the settle span, so a refused ack is an event on it.
 */
export const traceSettle = <A, E, R>(
  w: WorkerIdentity,
  r: Reservation,
  held: Traced,
  run: Run | undefined,
  operation: "complete" | "fail",
  settle: Effect.Effect<A, E, R>,
): Effect.Effect<A, E, R> => {
  if (run === undefined) return settle
  const measured = (span: SpanHandle | undefined) => {
    const end = endSettle(w, run, operation, span)
    return Effect.onExit(span ? span.within(settle) : settle, (exit) => Effect.sync(() => end(exit)))
  }
  if (run.span === undefined) return measured(undefined)
  return Effect.flatMap(startSpan(settleSpec(w, r, run.span, operation)), (span) => {
    held.span = span
    return measured(span)
  })
}

/**
 * {@link traceSettle} without Effects, where {@link recordsPlainly} holds: the settle
 * span starts now (and becomes the lease's span); the answer ends it with the settle's exit.
 */
export const startSettlePlain = (
  w: WorkerIdentity,
  r: Reservation,
  held: Traced,
  run: Run,
  operation: "complete" | "fail",
): ((exit: Exit.Exit<unknown, unknown>) => void) => {
  const span = run.span === undefined ? undefined : startOtelSpan(settleSpec(w, r, run.span, operation))
  if (span !== undefined) held.span = span
  return endSettle(w, run, operation, span)
}

/**
 * A lease ended without an ack: counted (lost, self-fenced, or — once its ack was being
 * sent — a refused late acknowledgement) and recorded as an event on its span.
 */
export const leaseEndedTelemetry = (
  w: WorkerIdentity,
  held: Traced,
  why: "lease-lost" | "self-fenced",
  refused: boolean,
) => {
  const m = meter()
  if (m) {
    const attributes = queueAttributes(w.queue)
    if (refused) m.refused.add(1, attributes)
    else if (why === "self-fenced") m.fenced.add(1, attributes)
    else m.lost.add(1, attributes)
  }
  held.span?.event(LEASE_ENDED, { "leaseq.reason": refused ? "ack-refused" : why })
}

/** Count a block of the event loop (LoopMonitor.ts). */
export const loopBlockedTelemetry = (queue: string) => meter()?.blocked.add(1, queueAttributes(queue))

/** Record one heartbeat's round trip. */
export const heartbeatTelemetry = (w: WorkerIdentity, ms: number) =>
  meter()?.heartbeat.record(ms / 1000, queueAttributes(w.queue))
