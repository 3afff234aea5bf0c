/**
 * `leaseq metrics`: serve `/metrics` in the Prometheus text format for every queue
 * under a prefix (or those named), read from Redis, so any one process can export the
 * whole fleet. Runs until SIGINT or SIGTERM, then closes its server and connection.
 */
import { createServer, type Server } from "node:http"
import { InvalidArgumentError } from "commander"
import * as Effect from "effect/Effect"
import { type MetricsHandler, metricsHandler } from "../metrics/Handler.ts"
import { clusterStartup, withRedis } from "./Connection.ts"
import type { CommonFlags } from "./Flags.ts"
import { type CliFailure, ExitCode, type ExitCodeValue, type Io, toFailure, usage } from "./Output.ts"

/** Where to listen. */
export interface ListenAddress {
  readonly host: string
  readonly port: number
}

/** Default of `--listen`: loopback only, the port Prometheus' exporter list gives leaseq's kind of exporter. */
export const DEFAULT_METRICS_LISTEN = "127.0.0.1:9464"

/** Flags of `leaseq metrics`. */
export interface MetricsFlags extends CommonFlags {
  readonly listen: ListenAddress
  /** `--queue`, repeatable; absent: every queue under the prefix. */
  readonly queue?: ReadonlyArray<string>
}

/** Parse `--listen host:port` (`[::1]:9464` for IPv6); a bad value is refused by the parser (exit 2). */
export const listenAddress = (value: string): ListenAddress => {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(value)
  const port = m ? Number(m[2]) : Number.NaN
  if (!m || port < 0 || port > 65_535) {
    throw new InvalidArgumentError(
      `--listen must be host:port (e.g. ${DEFAULT_METRICS_LISTEN}), got ${JSON.stringify(value)}`,
    )
  }
  return { host: (m[1] as string).replace(/^\[|\]$/g, ""), port }
}

/** Listen, or fail with a clear reason (a port in use is exit 2: configuration). */
const listen = (server: Server, at: ListenAddress): Effect.Effect<ListenAddress, CliFailure> =>
  Effect.callback<ListenAddress, CliFailure>((resume) => {
    server.once("error", (e: NodeJS.ErrnoException) => {
      const why = e.code === "EADDRINUSE" ? "the address is in use (another exporter running?)" : e.message
      resume(Effect.fail(usage(`cannot listen on ${at.host}:${at.port}: ${why}`)))
    })
    server.listen(at.port, at.host, () => {
      const a = server.address()
      resume(Effect.succeed(typeof a === "object" && a !== null ? { host: at.host, port: a.port } : at))
    })
  })

/** Resolves on the first SIGINT or SIGTERM. */
const untilSignal = Effect.callback<void>((resume) => {
  const stop = () => {
    process.off("SIGINT", stop)
    process.off("SIGTERM", stop)
    resume(Effect.void)
  }
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
})

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
  Effect.gen(function* () {
    const isCluster = yield* withRedis(url, (client) => Effect.succeed(client.isCluster))
    const handler = yield* Effect.acquireRelease(
      Effect.try({
        try: () =>
          metricsHandler({
            connection: isCluster ? clusterStartup(url, false) : url,
            prefix: flags.prefix,
            queues: flags.queue,
          }),
        catch: (e) => toFailure(e),
      }),
      (h) => Effect.promise(() => h.close()),
    )
    const server = route(handler)
    yield* Effect.addFinalizer(() =>
      Effect.callback<void>((resume) => {
        server.close(() => resume(Effect.void))
        // Prometheus keeps its connection open between scrapes: end it, or close waits for it
        server.closeAllConnections()
      }),
    )
    const at = yield* listen(server, flags.listen)
    const where = `http://${at.host.includes(":") ? `[${at.host}]` : at.host}:${at.port}/metrics`
    io.err(`leaseq: serving metrics of prefix ${flags.prefix} at ${where} (Ctrl-C to stop)\n`)
    yield* untilSignal
    return ExitCode.ok
  }).pipe(Effect.scoped)
