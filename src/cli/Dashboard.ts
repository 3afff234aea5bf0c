/**
 * `leaseq dashboard`: serve the dashboard for every queue under a prefix until SIGINT or
 * SIGTERM. Read-only unless `--allow-actions`; then the token (given with `--token`, or
 * generated) is printed once, inside the link to open (after `#`, so it never reaches a
 * server log), and never again.
 */
import { createServer } from "node:http"
import * as Effect from "effect/Effect"
import { dashboardHandler } from "../dashboard/Handler.ts"
import type { CommonFlags } from "./Flags.ts"
import { type CliFailure, ExitCode, type ExitCodeValue, type Io } from "./Output.ts"
import { type ListenAddress, serveUntilSignal, urlOf } from "./Serve.ts"

/** Default of `--listen`: loopback only. */
export const DEFAULT_DASHBOARD_LISTEN = "127.0.0.1:7300"

/** Flags of `leaseq dashboard`. */
export interface DashboardFlags extends CommonFlags {
  readonly listen: ListenAddress
  readonly allowActions?: boolean
  /** `--token`; default: generated when actions are allowed. */
  readonly token?: string
  readonly hidePayloads?: boolean
}

/** Run `leaseq dashboard` (exit 1 when Redis does not answer, 2 for a port in use). */
export const runDashboard = (io: Io, url: string, flags: DashboardFlags): Effect.Effect<ExitCodeValue, CliFailure> =>
  serveUntilSignal(
    url,
    flags.listen,
    (connection) =>
      dashboardHandler({
        connection,
        prefix: flags.prefix,
        allowActions: flags.allowActions === true,
        token: flags.token,
        hidePayloads: flags.hidePayloads === true,
      }),
    (handler) => createServer(handler),
    (handler, at) => {
      const link = handler.token === undefined ? urlOf(at, "/") : `${urlOf(at, "/")}#token=${handler.token}`
      const mode = handler.token === undefined ? "read-only" : "actions allowed: the link carries the token"
      io.err(`leaseq: dashboard of prefix ${flags.prefix} at ${link} (${mode}; Ctrl-C to stop)\n`)
    },
  ).pipe(Effect.as(ExitCode.ok))
