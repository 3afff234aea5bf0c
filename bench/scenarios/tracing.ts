/**
 * tracing.off.add, tracing.on.add: single adds, 64 at a time (adds/s);
 * tracing.off.process, tracing.on.process: a filled queue drained by one worker at
 * concurrency 16 with a no-op handler (jobs/s). leaseq only: "off" has no OpenTelemetry
 * provider registered (the `@opentelemetry/api` package is installed, as in an app that
 * has it but does not trace); "on" registers the real SDK's tracer provider (every span
 * sampled, recorded and handed to the batch span processor, whose exporter drops it) and
 * a meter provider with a reader. One untimed warm-up of each first; then off and on
 * alternate within each repetition, Redis emptied before each. Each run also records
 * Node CPU per job (less disturbed than wall time on a shared machine).
 */
import { metrics, trace } from "@opentelemetry/api"
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics"
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base"
import { payload } from "../adapters/types.ts"
import { wanted } from "../config.ts"
import type { BenchContext } from "../context.ts"
import { fresh, QUEUE, type Section, withDeadline } from "../harness.ts"
import { fmt } from "../lib/stats.ts"

type Lq = typeof import("../../src/index.ts")
const entry = new URL("../../src/index.ts", import.meta.url)

class DropReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve()
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve()
  }
}
const dropExporter: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: () => Promise.resolve(),
}

/** Register the SDK for the length of `f` (tracing on), or nothing (tracing off). */
const traced = async <A>(on: boolean, f: () => Promise<A>): Promise<A> => {
  if (!on) return f()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(dropExporter)] })
  const meterProvider = new MeterProvider({ readers: [new DropReader()] })
  trace.setGlobalTracerProvider(tracerProvider)
  metrics.setGlobalMeterProvider(meterProvider)
  try {
    return await f()
  } finally {
    trace.disable()
    metrics.disable()
    await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()])
  }
}

/** `n` single adds, 64 in flight: adds per second. */
const addRate = async (lq: Lq, url: string, n: number): Promise<number> => {
  const queue = new lq.Queue(QUEUE, { connection: url })
  try {
    await queue.add(payload(-1)) // open the queue first, so its open check is not timed
    let next = 0
    const started = performance.now()
    const lane = async () => {
      while (next < n) {
        next++
        await queue.add(payload(next))
      }
    }
    await Promise.all(Array.from({ length: 64 }, lane))
    return n / ((performance.now() - started) / 1000)
  } finally {
    await queue.close()
  }
}

/** Drain the queue (`n` jobs) at concurrency 16: jobs per second from the first handler call. */
const drainRate = async (lq: Lq, url: string, n: number): Promise<number> => {
  let first = 0
  let done = 0
  let finish: (t: number) => void = () => {}
  const finished = new Promise<number>((resolve) => {
    finish = resolve
  })
  const worker = new lq.Worker(
    QUEUE,
    async () => {
      if (first === 0) first = performance.now()
    },
    { connection: url, concurrency: 16 },
  )
  worker.on("completed", () => {
    if (++done === n) finish(performance.now())
  })
  try {
    const end = await withDeadline("leaseq tracing drain", 300_000, finished)
    return n / ((end - first) / 1000)
  } finally {
    await worker.close()
  }
}

export const tracingSection: Section = {
  name: "tracing",
  async run(ctx: BenchContext) {
    if (!ctx.config.libs.includes("leaseq")) return
    const n = ctx.config.sizes.tracingJobs
    const ids = ["add", "process"].flatMap((what) => ["off", "on"].map((mode) => `tracing.${mode}.${what}`))
    const wantedIds = ids.filter((id) => wanted(ctx.config, id))
    if (wantedIds.length === 0) return
    const lq = (await import(entry.href)) as Lq
    const scenarios = new Map(
      wantedIds.map((id) => {
        const [, mode, what] = id.split(".")
        const title =
          what === "add"
            ? `tracing ${mode}: single adds, 64 in flight (${fmt(n)} jobs)`
            : `tracing ${mode}: process, no-op handler, concurrency 16 (${fmt(n)} jobs)`
        return [id, ctx.results.scenario(id, title, what === "add" ? "adds/s" : "jobs/s", "higher")] as const
      }),
    )
    for (const s of scenarios.values()) ctx.log(s.title)
    for (const on of [false, true]) {
      await fresh(ctx)
      await traced(on, async () => {
        await addRate(lq, ctx.url, Math.min(n, 1000))
        await drainRate(lq, ctx.url, Math.min(n, 1000) + 1)
      })
    }
    for (let rep = 0; rep < ctx.config.sizes.reps; rep++) {
      for (const mode of ["off", "on"] as const) {
        await fresh(ctx)
        await traced(mode === "on", async () => {
          const add = scenarios.get(`tracing.${mode}.add`)
          const drain = scenarios.get(`tracing.${mode}.process`)
          // the adds fill the queue the drain then empties (traced jobs carry their context)
          const cpu0 = process.cpuUsage()
          const rate = await addRate(lq, ctx.url, n)
          const cpu1 = process.cpuUsage()
          const drained = await drainRate(lq, ctx.url, n + 1)
          const cpu2 = process.cpuUsage()
          const perJob = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) => (b.user + b.system - a.user - a.system) / n
          if (add) ctx.results.record(add, "leaseq", rate, { nodeCpuUsPerJob: perJob(cpu0, cpu1) })
          if (drain) ctx.results.record(drain, "leaseq", drained, { nodeCpuUsPerJob: perJob(cpu1, cpu2) })
        })
      }
    }
    await fresh(ctx)
  },
}
