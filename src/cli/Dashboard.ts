/**
 * `leaseq dashboard`: serve the dashboard for every queue under a prefix until SIGINT or
 * SIGTERM. Read-only unless `--allow-actions`. The token comes from `--token-file`,
 * `LEASEQ_DASHBOARD_TOKEN` or `--token` (in that order; the first two keep it out of `ps`),
 * else it is generated: shown once inside the link (after `#`, so it never reaches a server
 * log) when stderr is a terminal, else written to a file only this user can read, whose
 * path is printed. A token the user gave is never printed.
 *
 * Beyond loopback (`--listen 0.0.0.0:…`) every reading needs the token too, and starting
 * there without one is refused: plain HTTP, so put TLS in front (docs/security.md).
 */
import { closeSync, fstatSync, mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { isIP } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import type { DashboardHandler } from "../dashboard/DashboardHandler.ts"
import { isLoopback } from "../dashboard/Guard.ts"
import type { CommonFlags } from "./Flags.ts"
import { type CliFailure, ExitCode, type ExitCodeValue, type Io, usage } from "./Output.ts"
import { serveUntilSignal, urlOf } from "./Serve.ts"
import type { ListenAddress } from "./ServeFlags.ts"

/** The environment variable a token may come from. */
export const TOKEN_ENV = "LEASEQ_DASHBOARD_TOKEN"

/** Flags of `leaseq dashboard`. */
export interface DashboardFlags extends CommonFlags {
  readonly listen: ListenAddress
  readonly allowActions?: boolean
  /** `--token`; default: `--token-file`, then `LEASEQ_DASHBOARD_TOKEN`, then generated when needed. */
  readonly token?: string
  /** `--token-file`: a file holding the token (surrounding white space ignored). */
  readonly tokenFile?: string
  /** `--allowed-host`, repeatable: names the dashboard answers to besides IPs and localhost. */
  readonly allowedHost?: ReadonlyArray<string>
  readonly hidePayloads?: boolean
}

/**
 * Read `--token-file`, refusing one that other users can read (any group or other bit:
 * 0644, 0640), as ssh refuses such a private key: the token opens every action, and a
 * warning on a service's stderr goes unread. The mode is taken from the open file, so the
 * file checked is the file read. Windows has no such mode bits: not checked there.
 */
const readTokenFile = (file: string): string => {
  const fd = openSync(file, "r")
  try {
    const mode = fstatSync(fd).mode & 0o777
    if (process.platform !== "win32" && (mode & 0o077) !== 0)
      throw new Error(
        `other users can read it (mode 0${mode.toString(8)}); make it readable by you alone: chmod 600 ${JSON.stringify(file)}`,
      )
    return readFileSync(fd, "utf8").trim()
  } finally {
    closeSync(fd)
  }
}

/** The token the user gave (file, environment, flag), or undefined; a file that cannot be read, or others can, fails. */
const givenToken = (flags: DashboardFlags, env: NodeJS.ProcessEnv): Effect.Effect<string | undefined, CliFailure> =>
  Effect.suspend(() => {
    if (flags.tokenFile !== undefined) {
      const file = flags.tokenFile
      return Effect.try({
        try: () => readTokenFile(file),
        catch: (e) => usage(`cannot use --token-file ${JSON.stringify(file)}: ${(e as Error).message}`),
      })
    }
    const fromEnv = env[TOKEN_ENV]
    return Effect.succeed(fromEnv !== undefined && fromEnv !== "" ? fromEnv : flags.token)
  })

const BEYOND_LOOPBACK = (host: string) =>
  `--listen ${host} is reachable beyond this machine, and every payload, result and error would be readable there: ` +
  `give a token (--token-file <file> or ${TOKEN_ENV}; reads and actions then need it), or listen on 127.0.0.1 ` +
  "and reach it through an SSH tunnel or an authenticating proxy with TLS (docs/security.md)"

/** Write a generated token to a new file only this user can read; its path. */
const tokenToFile = (token: string): string => {
  const file = join(mkdtempSync(join(tmpdir(), "leaseq-dashboard-")), "token")
  writeFileSync(file, `${token}\n`, { mode: 0o600 })
  return file
}

/** The startup line: where, which mode, and how to get the token (never the token itself unless generated for a terminal). */
const announce =
  (io: Io, flags: DashboardFlags, given: string | undefined) => (h: DashboardHandler, at: ListenAddress) => {
    const page = urlOf(at, "/")
    const mode = flags.allowActions === true ? "actions allowed" : "read-only"
    const reads = isLoopback(at.host) ? "" : "; reads need the token"
    let how = ""
    if (h.token !== undefined && given !== undefined) how = `: open ${page}#token=<your token>`
    else if (h.token !== undefined && io.errIsTTY) how = `: open ${page}#token=${h.token} (the link carries the token)`
    else if (h.token !== undefined)
      how = `: the generated token is in ${tokenToFile(h.token)} (mode 0600); open ${page}#token=<its contents>`
    io.err(`leaseq: dashboard of prefix ${flags.prefix} at ${page} (${mode}${reads}${how}; Ctrl-C to stop)\n`)
  }

/** Run `leaseq dashboard` (exit 1 when Redis does not answer, 2 for a port in use or a token missing beyond loopback). */
export const runDashboard = (
  io: Io,
  url: string,
  flags: DashboardFlags,
  env: NodeJS.ProcessEnv = process.env,
): Effect.Effect<ExitCodeValue, CliFailure> =>
  Effect.gen(function* () {
    const given = yield* givenToken(flags, env)
    const beyond = !isLoopback(flags.listen.host)
    if (beyond && given === undefined) return yield* Effect.fail(usage(BEYOND_LOOPBACK(flags.listen.host)))
    // loaded here, not at start-up: every other command (a cron's `leaseq sweep`) runs
    // without the dashboard's page and browser script
    const { dashboardHandler } = yield* Effect.promise(() => import("../dashboard/DashboardHandler.ts"))
    yield* serveUntilSignal(
      url,
      flags.listen,
      (connection) =>
        dashboardHandler({
          connection,
          prefix: flags.prefix,
          allowActions: flags.allowActions === true,
          token: given,
          readsNeedToken: beyond,
          // the name it listens on is its own (an IP address or localhost needs no entry)
          allowedHosts: [...(flags.allowedHost ?? []), ...(isIP(flags.listen.host) === 0 ? [flags.listen.host] : [])],
          hidePayloads: flags.hidePayloads === true,
        }),
      (handler) => createServer(handler),
      announce(io, flags, given),
    )
    return ExitCode.ok
  })
