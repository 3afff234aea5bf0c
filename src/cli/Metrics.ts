/**
 * `leaseq metrics`: serve `/metrics` in the Prometheus text format for every queue
 * under a prefix (or those named), read from Redis, so any one process can export the
 * whole fleet. Runs until SIGINT or SIGTERM, then closes its server and connection.
 */
import { createServer } from "node:http"
import * as Effect from "effect/Effect"
import { type MetricsHandler, metricsHandler } from "../metrics/MetricsHandler.ts"
import type { CommonFlags } from "./Flags.ts"
import { type CliFailure, ExitCode, type ExitCodeValue, type Io } from "./Output.ts"
import { serveUntilSignal, urlOf } from "./Serve.ts"
import type { ListenAddress } from "./ServeFlags.ts"

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
