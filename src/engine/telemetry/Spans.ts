/**
 * leaseq's spans, named and shaped by the OpenTelemetry messaging conventions:
 * `send <queue>` (PRODUCER) around add/addBulk, `process <queue>` (CONSUMER) around
 * one handler run, `settle <queue>` (CLIENT) around a complete or fail.
 *
 * One seam, two tracers. When the running fiber has a tracer of its own (an Effect
 * application that provides a tracing layer), the spans go through Effect's tracer;
 * otherwise through `@opentelemetry/api`'s global tracer provider. With neither, no
 * span object is made at all: {@link startSpan} answers undefined and the callers
 * skip every tracing step.
 */
import type * as OtelApi from "@opentelemetry/api"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as References from "effect/References"
import * as Tracer from "effect/Tracer"
import type { TraceParent } from "../model/Carrier.ts"
import { describeError } from "../model/Failure.ts"
import { activeTracer, loadOtel, otel, otelSettled } from "./Otel.ts"

/** Span attributes: strings, numbers, booleans. */
export type Attributes = Record<string, string | number | boolean>

/** A started span, whichever tracer made it. */
export interface SpanHandle {
  /** This span's context, to carry with a job or to link to. */
  readonly context: TraceParent
  /** True when the span records (a sampled-out span is not carried with jobs). */
  readonly recording: boolean
  readonly attribute: (key: string, value: string | number | boolean) => void
  readonly event: (name: string, attributes?: Attributes) => void
  /** End the span; with `error`, the exception is recorded and the status set to error. */
  readonly end: (error?: { readonly error: unknown; readonly type: string }) => void
  /** Run `effect` with this span as its parent (and, for a Promise handler, as the active OpenTelemetry span). */
  readonly within: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Call `f` with this span active in the OpenTelemetry context (a no-op wrapper for Effect spans). */
  readonly runIn: <T>(f: () => T) => T
}

/** What to start. */
export interface SpanSpec {
  readonly name: string
  readonly kind: "producer" | "consumer" | "client"
  readonly attributes: Attributes
  /** The parent: a carried context, a span of ours, or (undefined) the caller's current span. */
  readonly parent?: TraceParent | SpanHandle | undefined
  /** Start a new trace when there is no parent (a process span of an untraced job). */
  readonly root?: boolean | undefined
  readonly links?: ReadonlyArray<TraceParent> | undefined
}

/** The span of the job a handler runs for, read by the Promise face to make it the active span. */
export const JobSpan = Context.Reference<SpanHandle | undefined>("leaseq/JobSpan", { defaultValue: () => undefined })

const isHandle = (p: TraceParent | SpanHandle): p is SpanHandle => "end" in p

const nowNanos = (): bigint => BigInt(Date.now()) * 1_000_000n

/** A span through Effect's tracer (the fiber's own). */
const effectSpan = (spec: SpanSpec): Effect.Effect<SpanHandle> =>
  Effect.gen(function* () {
    const external = (p: TraceParent) =>
      Tracer.externalSpan({ traceId: p.traceId, spanId: p.spanId, sampled: p.sampled })
    const p = spec.parent
    const parent: Tracer.AnySpan | undefined =
      p === undefined ? undefined : "span" in p ? (p as EffectHandle).span : external(isHandle(p) ? p.context : p)
    const span = yield* Effect.makeSpan(spec.name, {
      kind: spec.kind,
      attributes: spec.attributes,
      links: (spec.links ?? []).map((l) => ({ span: external(l), attributes: {} })),
      ...(parent === undefined ? { root: spec.root === true } : { parent }),
    })
    const handle: EffectHandle = {
      span,
      context: { traceId: span.traceId, spanId: span.spanId, sampled: span.sampled },
      recording: span.sampled,
      attribute: (k, v) => span.attribute(k, v),
      event: (name, attributes) => span.event(name, nowNanos(), attributes),
      end: (failure) => {
        if (failure) span.attribute("error.type", failure.type)
        span.end(nowNanos(), failure ? Exit.fail(failure.error) : Exit.void)
      },
      within: (effect) => Effect.withParentSpan(effect, span),
      runIn: (f) => f(),
    }
    return handle
  })

interface EffectHandle extends SpanHandle {
  readonly span: Tracer.Span
}

const KIND = { producer: 3, consumer: 4, client: 2 } as const // OtelApi.SpanKind values

const spanContextOf = (p: TraceParent): OtelApi.SpanContext => ({
  traceId: p.traceId,
  spanId: p.spanId,
  traceFlags: p.sampled ? 1 : 0,
  isRemote: true,
})

/** A span through `@opentelemetry/api`'s global tracer. */
const otelSpan = (api: typeof OtelApi, tracer: OtelApi.Tracer, spec: SpanSpec): SpanHandle => {
  let parentContext: OtelApi.Context
  if (spec.parent === undefined) parentContext = spec.root ? api.ROOT_CONTEXT : api.context.active()
  else if ("otelContext" in spec.parent) parentContext = (spec.parent as OtelHandle).otelContext
  else {
    const p = isHandle(spec.parent) ? spec.parent.context : spec.parent
    parentContext = api.trace.setSpanContext(api.ROOT_CONTEXT, spanContextOf(p))
  }
  const span = tracer.startSpan(
    spec.name,
    {
      kind: KIND[spec.kind],
      attributes: spec.attributes,
      ...(spec.links ? { links: spec.links.map((l) => ({ context: spanContextOf(l) })) } : {}),
    },
    parentContext,
  )
  const sc = span.spanContext()
  const otelContext = api.trace.setSpan(parentContext, span)
  const handle: OtelHandle = {
    otelContext,
    context: { traceId: sc.traceId, spanId: sc.spanId, sampled: (sc.traceFlags & 1) === 1 },
    recording: span.isRecording(),
    attribute: (k, v) => span.setAttribute(k, v),
    event: (name, attributes) => span.addEvent(name, attributes),
    end: (failure) => {
      if (failure) {
        const e = failure.error
        span.setAttribute("error.type", failure.type)
        // an error whose getters throw must not throw here: its fields are read through describeError
        const { name, message } = describeError(e)
        try {
          span.recordException(e instanceof Error ? e : { name: failure.type, message })
        } catch {
          span.recordException({ name: name ?? failure.type, message })
        }
        span.setStatus({ code: 2, message }) // SpanStatusCode.ERROR
      }
      span.end()
    },
    within: (effect) => Effect.provideService(effect, JobSpan, handle),
    runIn: (f) => api.context.with(otelContext, f),
  }
  return handle
}

interface OtelHandle extends SpanHandle {
  readonly otelContext: OtelApi.Context
}

/**
 * Start a span with the global OpenTelemetry tracer, synchronously (no Effect), or
 * answer undefined when none is registered (or the API is not loaded).
 */
export const startOtelSpan = (spec: SpanSpec): SpanHandle | undefined => {
  const api = otel()
  const tracer = api && activeTracer()
  return api && tracer ? otelSpan(api, tracer, spec) : undefined
}

/**
 * Which tracer a span started in `fiber` would go to: the fiber's own Effect tracer
 * (one the application provided), the global OpenTelemetry provider, or none (then no
 * tracing work is done at all). Synchronous and cheap: two reference reads and, without
 * an Effect tracer, a look at the global provider.
 */
export const tracerFor = (fiber: Fiber.Fiber<unknown, unknown>): "effect" | "otel" | undefined => {
  if (hasEffectTracer(fiber)) return "effect"
  return activeTracer() ? "otel" : undefined
}

/** True when `fiber` has an Effect tracer of the application's (enabled): spans started there go to it. */
export const hasEffectTracer = (fiber: Fiber.Fiber<unknown, unknown>): boolean =>
  fiber.getRef(Tracer.Tracer) !== Tracer.nativeTracer && fiber.getRef(References.TracerEnabled)

/**
 * Start a span, or answer undefined when nothing would record it: then the caller does
 * no tracing work at all. The first call awaits the one-time import of the API.
 */
export const startSpan = (spec: SpanSpec): Effect.Effect<SpanHandle | undefined> =>
  Effect.withFiber((fiber) => {
    if (!otelSettled()) return Effect.flatMap(Effect.promise(loadOtel), () => startSpan(spec))
    const to = tracerFor(fiber)
    if (to === "effect") return effectSpan(spec)
    return Effect.succeed(to === "otel" ? startOtelSpan(spec) : undefined)
  })
