/**
 * What the queue core and the worker call to trace and measure: the `send`, `process`
 * and `settle` spans with their attributes, and the metrics beside them. Every step
 * is skipped when no tracer would record the span, and every measurement when no
 * meter provider is registered: then an add or a job costs a few property reads more.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { TraceParent } from "../model/Carrier.ts"
import { loadOtel, otelSettled } from "./Otel.ts"
import { meter } from "./OtelMetrics.ts"
import { type Attributes, type SpanHandle, startSpan, tracerFor } from "./Spans.ts"

/** `messaging.system` of every span and measurement. */
export const MESSAGING_SYSTEM = "leaseq"

const queueAttrs = new Map<string, Attributes>()

/**
 * The attributes naming a queue: the system, the destination (a partition's sub-queue
 * `<name>~<i>` is named by its queue `<name>`, with `messaging.leaseq.partition` = i).
 */
export const queueAttributes = (queue: string): Attributes => {
  let a = queueAttrs.get(queue)
  if (a === undefined) {
    const m = /^(.*)~(\d+)$/.exec(queue)
    a = {
      "messaging.system": MESSAGING_SYSTEM,
      "messaging.destination.name": m ? m[1]! : queue,
      ...(m ? { "messaging.leaseq.partition": Number(m[2]) } : {}),
    }
    queueAttrs.set(queue, a)
  }
  return a
}

/** The queue a span is named after: a partition's sub-queue `<name>~<i>` is named `<name>`. */
export const destination = (queue: string): string => queueAttributes(queue)["messaging.destination.name"] as string

const opAttrs = new Map<string, Attributes>()
/** Queue attributes plus `messaging.operation.name` (and `error.type`), cached: metrics record them per job. */
export const operationAttributes = (queue: string, operation: string, errorType?: string): Attributes => {
  const key = `${queue}\n${operation}\n${errorType ?? ""}`
  let a = opAttrs.get(key)
  if (a === undefined) {
    a = {
      ...queueAttributes(queue),
      "messaging.operation.name": operation,
      ...(errorType ? { "error.type": errorType } : {}),
    }
    opAttrs.set(key, a)
  }
  return a
}

/** The name of an error for `error.type`: its `_tag` (leaseq's errors) or its `name`. */
export const errorType = (e: unknown): string => {
  if (typeof e === "object" && e !== null) {
    const tag = (e as { _tag?: unknown })._tag
    if (typeof tag === "string") return tag
    const name = (e as { name?: unknown }).name
    if (typeof name === "string" && name !== "") return name
  }
  return "Error"
}

const seconds = (since: number): number => (performance.now() - since) / 1000

/**
 * Run an add of `count` jobs in a `send <queue>` span (kind PRODUCER). `body` gets the
 * context to carry with each job: the span's, when it records; else undefined, and
 * the jobs are stored as they are. With no tracer and no meter provider, `body` runs
 * as it is.
 */
export const traceSend = <A, E, R>(
  queue: string,
  operation: "add" | "addBulk",
  count: number,
  messageId: string | undefined,
  body: (parent: TraceParent | undefined) => Effect.Effect<A, E, R>,
): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    if (!otelSettled())
      return Effect.flatMap(Effect.promise(loadOtel), () => traceSend(queue, operation, count, messageId, body))
    const traced = tracerFor(fiber) !== undefined
    const m = meter()
    if (!traced && m === undefined) return body(undefined)
    const measure = (span: SpanHandle | undefined) => {
      const started = performance.now()
      const run = body(span?.recording ? span.context : undefined)
      return Effect.onExit(span ? span.within(run) : run, (exit) =>
        Effect.sync(() => {
          const error = failureOf(exit)
          const type = Exit.isFailure(exit) ? errorType(error) : undefined
          m?.operation.record(seconds(started), operationAttributes(queue, operation, type))
          if (type === undefined) m?.sent.add(count, operationAttributes(queue, operation))
          span?.end(type === undefined ? undefined : { error, type })
        }),
      )
    }
    if (!traced) return measure(undefined)
    return Effect.flatMap(
      startSpan({
        name: `send ${destination(queue)}`,
        kind: "producer",
        attributes: {
          ...queueAttributes(queue),
          "messaging.operation.type": "send",
          "messaging.operation.name": operation,
          "messaging.batch.message_count": count,
          ...(messageId === undefined ? {} : { "messaging.message.id": messageId }),
        },
      }),
      measure,
    )
  })

/** The error an exit failed with (squashed, as the worker records it). */
export const failureOf = (exit: Exit.Exit<unknown, unknown>): unknown =>
  Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined

export { carry } from "../model/Carrier.ts"
export type { SpanHandle, TraceParent }
