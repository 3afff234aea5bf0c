/**
 * What the CLI's long-running servers (`leaseq metrics`, `leaseq dashboard`) share:
 * listening with a clear reason when it cannot, running until a
 * signal, and closing the server without waiting for kept-alive connections.
 */
import type { Server } from "node:http"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { ConnectionOption } from "../redis/Client.ts"
import { clusterStartup, withRedis } from "./CliSession.ts"
import { type CliFailure, toFailure, usage } from "./Output.ts"
import type { ListenAddress } from "./ServeFlags.ts"

/** Listen, or fail with a clear reason (a port in use is exit 2: configuration). */
export const listen = (server: Server, at: ListenAddress): Effect.Effect<ListenAddress, CliFailure> =>
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
export const untilSignal = Effect.callback<void>((resume) => {
  const stop = () => {
    process.off("SIGINT", stop)
    process.off("SIGTERM", stop)
    resume(Effect.void)
  }
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
})

/** Close `server` when the scope closes, ending kept-alive connections (Prometheus and browsers keep theirs open). */
export const closeWithScope = (server: Server): Effect.Effect<void, never, Scope.Scope> =>
  Effect.addFinalizer(() =>
    Effect.callback<void>((resume) => {
      server.close(() => resume(Effect.void))
      server.closeAllConnections()
    }),
  )

/** The URL a listening address is reached at. */
export const urlOf = (at: ListenAddress, path: string): string =>
  `http://${at.host.includes(":") ? `[${at.host}]` : at.host}:${at.port}${path}`

/**
 * Check that Redis answers at `url` (exit 1 with a redacted reason when not), make the
 * request handler (on a cluster, a cluster connection that reconnects by itself), serve it
 * at `at` until SIGINT or SIGTERM, then close the server and the handler. `announce` gets
 * the address the server listens on.
 */
export const serveUntilSignal = <H extends { readonly close: () => Promise<void> }>(
  url: string,
  at: ListenAddress,
  make: (connection: ConnectionOption) => H,
  serverOf: (handler: H) => Server,
  announce: (handler: H, bound: ListenAddress) => void,
): Effect.Effect<void, CliFailure> =>
  Effect.gen(function* () {
    const isCluster = yield* withRedis(url, (client) => Effect.succeed(client.isCluster))
    const handler = yield* Effect.acquireRelease(
      Effect.try({ try: () => make(isCluster ? clusterStartup(url, false) : url), catch: (e) => toFailure(e) }),
      (h) => Effect.promise(() => h.close()),
    )
    const server = serverOf(handler)
    yield* closeWithScope(server)
    announce(handler, yield* listen(server, at))
    yield* untilSignal
  }).pipe(Effect.scoped)
