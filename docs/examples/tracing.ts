// docs/observability.md, "Tracing". Run: npm run example docs/examples/tracing.ts
import { context, metrics, trace } from "@opentelemetry/api"
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks"
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics"
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Queue, Worker } from "leaseq"

// #region setup
// an app's OpenTelemetry setup (here with in-memory exporters; use OTLP in production)
const spans = new InMemorySpanExporter()
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] })
const reader = new PeriodicExportingMetricReader({
  exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
  exportIntervalMillis: 60_000,
})
const meterProvider = new MeterProvider({ readers: [reader] })
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
trace.setGlobalTracerProvider(tracerProvider)
metrics.setGlobalMeterProvider(meterProvider)
// #endregion

// #region use
const connection = process.env.REDIS_URL
const queue = new Queue<{ to: string }>("tracing-example", { connection })
const app = trace.getTracer("shop")

// the add happens inside the app's request span: "send tracing-example" is its child
await app.startActiveSpan("POST /orders", async (request) => {
  await queue.add({ to: "ada@example.com" })
  request.end()
})

let completed = () => {}
const done = new Promise<void>((resolve) => {
  completed = resolve
})
const worker = new Worker<{ to: string }>(
  "tracing-example",
  async (job) => {
    // the job's "process tracing-example" span is active here: this span is its child
    await app.startActiveSpan("send email", async (span) => {
      span.setAttribute("email.to", job.payload.to)
      span.end()
    })
  },
  { connection },
)
worker.on("completed", () => completed())
await done
await worker.close()
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
// #endregion

// one trace, from the request to the email
for (const s of spans.getFinishedSpans()) {
  console.log(s.spanContext().traceId.slice(0, 8), s.name.padEnd(26), s.attributes["messaging.operation.type"] ?? "")
}
const { resourceMetrics } = await reader.collect()
const names = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics.map((m) => m.descriptor.name))
console.log("metrics:", names.sort().join(", "))
await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()])
