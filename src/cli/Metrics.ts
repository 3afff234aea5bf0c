/**
 * `leaseq metrics`: serve `/metrics` in the Prometheus text format for every queue
 * under a prefix (or those named), read from Redis, so any one process can export the
 * whole fleet. Runs until SIGINT or SIGTERM, then closes its server and connection.
 */
import { createServer } from "node:http"
import { Option } from "commander"
import * as Effect from "effect/Effect"
import { DEFAULT_MAX_QUEUES, type MetricsHandler, metricsHandler, READ_TIMEOUT_MS } from "../metrics/MetricsHandler.ts"
import { type CommonFlags, wholeNumber } from "./Flags.ts"
import { type CliFailure, ExitCode, type ExitCodeValue, type Io } from "./Output.ts"
import { type ListenAddress, serveUntilSignal, urlOf } from "./Serve.ts"

export { listenAddress } from "./Serve.ts"

/** Default of `--listen`: loopback only, the port Prometheus' exporter list gives leaseq's kind of exporter. */
export const DEFAULT_METRICS_LISTEN = "127.0.0.1:9464"

/** Flags of `leaseq metrics`. */
export interface MetricsFlags extends CommonFlags {
  readonly listen: ListenAddress
  /** `--queue`, repeatable; absent: every queue under the prefix. */
  readonly queue?: ReadonlyArray<string>
  /** `--max-queues`: the most queues exported. */
  readonly maxQueues?: number
  /** `--read-timeout-ms`: the longest a reading of Redis may take before a scrape is answered 503. */
  readonly readTimeoutMs?: number
}

/** `--max-queues <n>` (default {@link DEFAULT_MAX_QUEUES}). */
export const maxQueuesOption = (): Option =>
  new Option(
    "--max-queues <n>",
    "the most queues exported, 20 series each (the rest counted in leaseq_queues_not_exported)",
  )
    .argParser(wholeNumber("--max-queues", 1, 1_000_000))
    .default(DEFAULT_MAX_QUEUES)

/** `--read-timeout-ms <ms>` (default {@link READ_TIMEOUT_MS}). */
export const readTimeoutOption = (): Option =>
  new Option(
    "--read-timeout-ms <ms>",
    "answer a scrape 503 when Redis has not answered within this (keep it under scrape_timeout)",
  )
    .argParser(wholeNumber("--read-timeout-ms", 10, 3_600_000))
    .default(READ_TIMEOUT_MS)

/** Route: `/metrics` to the handler, `/` to a line saying where the metrics are, anything else 404. */
const route = (handler: MetricsHandler) =>
  createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]
    if (path === "/metrics") return handler(req, res)
    if (path === "/") {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("leaseq metrics: see /metrics\n")
      return
    }
    res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found: see /metrics\n")
  })

/**
 * Run `leaseq metrics`. Checks that Redis answers first (exit 1 with a redacted reason
 * when not), then serves until a signal; Redis going away later answers scrapes 503
 * (Prometheus marks the target down) and the exporter keeps trying.
 */
export const runMetrics = (io: Io, url: string, flags: MetricsFlags): Effect.Effect<ExitCodeValue, CliFailure> =>
  serveUntilSignal(
    url,
    flags.listen,
    (connection) =>
      metricsHandler({
        connection,
        prefix: flags.prefix,
        queues: flags.queue,
        maxQueues: flags.maxQueues,
        readTimeoutMs: flags.readTimeoutMs,
      }),
    route,
    (_handler, at) =>
      io.err(`leaseq: serving metrics of prefix ${flags.prefix} at ${urlOf(at, "/metrics")} (Ctrl-C to stop)\n`),
  ).pipe(Effect.as(ExitCode.ok))
