/**
 * The real OpenTelemetry SDK for the tracing tests: a tracer provider exporting to an
 * in-memory exporter, a meter provider with a reader the test collects from, and the
 * AsyncLocalStorage context manager (so a handler's own spans see the active span).
 * Registered globally for the test file (each file runs in a process of its own).
 */
import { context, metrics, trace } from "@opentelemetry/api"
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks"
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics"
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base"

class TestReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve()
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve()
  }
}

/** One data point of a metric: its attributes and value (a number, or a histogram's count and sum). */
export interface Point {
  readonly attributes: Record<string, unknown>
  readonly value: number | { readonly count: number; readonly sum?: number }
}

/** Install the SDK globally; returns the exporter, a collector, and how to take it down. */
export const installOtel = () => {
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const reader = new TestReader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  const contextManager = new AsyncLocalStorageContextManager().enable()
  const register = () => {
    context.setGlobalContextManager(contextManager)
    trace.setGlobalTracerProvider(tracerProvider)
    metrics.setGlobalMeterProvider(meterProvider)
  }
  register()
  return {
    exporter,
    /** Every finished span so far. */
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    /** The data points of metric `name` whose attributes include `match`. */
    points: async (name: string, match: Record<string, unknown> = {}): Promise<Point[]> => {
      const { resourceMetrics } = await reader.collect()
      const metricsNamed = resourceMetrics.scopeMetrics
        .flatMap((s) => s.metrics)
        .filter((m) => m.descriptor.name === name)
      const all = metricsNamed.flatMap((m) => m.dataPoints as ReadonlyArray<Point>)
      return all.filter((p) => Object.entries(match).every(([k, v]) => p.attributes[k] === v))
    },
    /** Take the tracer provider away (metrics stay), as an app without tracing has it. */
    withoutTracing: async <A>(f: () => Promise<A>): Promise<A> => {
      trace.disable()
      try {
        return await f()
      } finally {
        trace.setGlobalTracerProvider(tracerProvider)
      }
    },
    uninstall: async () => {
      trace.disable()
      metrics.disable()
      context.disable()
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()])
    },
  }
}

/** The sum of a counter's points (or a histogram's counts). */
export const total = (points: ReadonlyArray<Point>): number =>
  points.reduce((n, p) => n + (typeof p.value === "number" ? p.value : p.value.count), 0)
