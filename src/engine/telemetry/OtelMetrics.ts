/**
 * leaseq's OpenTelemetry metrics, through `@opentelemetry/api`'s global meter provider
 * (the same for both faces). The instruments are made once per provider: one
 * registered after leaseq started is picked up at the next measurement. Without the
 * API (or before its one-time import settled) nothing is measured.
 *
 * The messaging conventions' instruments, and leaseq's own:
 *
 * | instrument | type | unit |
 * |---|---|---|
 * | `messaging.client.sent.messages` | counter | `{message}` |
 * | `messaging.client.consumed.messages` | counter | `{message}` |
 * | `messaging.client.operation.duration` | histogram | `s` |
 * | `messaging.process.duration` | histogram | `s` |
 * | `leaseq.leases.lost` | counter | `{lease}` |
 * | `leaseq.leases.self_fenced` | counter | `{lease}` |
 * | `leaseq.acks.refused` | counter | `{ack}` |
 * | `leaseq.heartbeat.duration` | histogram | `s` |
 * | `leaseq.job.wait.duration` | histogram | `s` |
 */
import type * as OtelApi from "@opentelemetry/api"
import { otel } from "./Otel.ts"

/** Bucket boundaries (s) the messaging conventions ask for their duration histograms. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]

const makeInstruments = (meter: OtelApi.Meter) => {
  const histogram = (name: string, description: string) =>
    meter.createHistogram(name, { description, unit: "s", advice: { explicitBucketBoundaries: DURATION_BUCKETS } })
  return {
    sent: meter.createCounter("messaging.client.sent.messages", {
      description: "Jobs a producer added (deduplicated ones included).",
      unit: "{message}",
    }),
    consumed: meter.createCounter("messaging.client.consumed.messages", {
      description: "Jobs handed to a handler (each run counts).",
      unit: "{message}",
    }),
    operation: histogram("messaging.client.operation.duration", "Duration of an add (send) or an ack (settle)."),
    process: histogram("messaging.process.duration", "Duration of one handler run."),
    lost: meter.createCounter("leaseq.leases.lost", {
      description: "Leases a worker learnt were lost while its handler ran (the server gave the job away).",
      unit: "{lease}",
    }),
    fenced: meter.createCounter("leaseq.leases.self_fenced", {
      description: "Leases a worker gave up itself because it could not extend them in time.",
      unit: "{lease}",
    }),
    refused: meter.createCounter("leaseq.acks.refused", {
      description: "Completes and fails refused because the lease's token was no longer current (fencing at work).",
      unit: "{ack}",
    }),
    blocked: meter.createCounter("leaseq.worker.loop_blocked", {
      description: "Times an in-process handler blocked a worker's event loop for at least half a lease.",
      unit: "{block}",
    }),
    heartbeat: histogram("leaseq.heartbeat.duration", "Round trip of one heartbeat (extend) call."),
    wait: histogram("leaseq.job.wait.duration", "Time from a job's add to the start of its first run."),
  }
}

/** The instruments leaseq records on. */
export type Instruments = ReturnType<typeof makeInstruments>

let provider: OtelApi.MeterProvider | undefined
let instruments: Instruments | undefined
/** The class of the API's no-op meter (what a meter provider hands out when none is registered). */
let noopMeter: object | undefined

/**
 * The instruments of the current global meter provider; undefined without the API or
 * when no meter provider is registered (then callers skip every measurement). Made once
 * per provider, so one registered later is picked up.
 */
export const meter = (): Instruments | undefined => {
  const api = otel()
  if (!api) return undefined
  const p = api.metrics.getMeterProvider()
  if (p !== provider) {
    provider = p
    noopMeter ??= Object.getPrototypeOf(api.createNoopMeter()) as object
    const m = p.getMeter("leaseq")
    instruments = Object.getPrototypeOf(m) === noopMeter ? undefined : makeInstruments(m)
  }
  return instruments
}
