/**
 * The flags of the servers, `leaseq metrics` and `leaseq dashboard`, apart from what
 * runs them: `--listen` and the options whose defaults the help states. Light on
 * purpose: every `leaseq` process builds them; Metrics.ts or Dashboard.ts is imported
 * only when its command is chosen.
 */
import { InvalidArgumentError, Option } from "commander"
import { DEFAULT_MAX_QUEUES, READ_TIMEOUT_MS } from "../metrics/HandlerDefaults.ts"
import type { CommandGroup } from "./CommandGroup.ts"
import { queueList, wholeNumber, withCommonFlags } from "./Flags.ts"

/** Where to listen. */
export interface ListenAddress {
  readonly host: string
  readonly port: number
}

/** Parse `--listen host:port` (`[::1]:9464` for IPv6); a bad value is refused by the parser (exit 2). */
export const listenAddress = (value: string): ListenAddress => {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(value)
  const port = m ? Number(m[2]) : Number.NaN
  if (!m || port < 0 || port > 65_535) {
    throw new InvalidArgumentError(`--listen must be host:port (e.g. 127.0.0.1:9464), got ${JSON.stringify(value)}`)
  }
  return { host: (m[1] as string).replace(/^\[|\]$/g, ""), port }
}

/** The `--listen` option, its default shown as written (`127.0.0.1:7300`). */
export const listenOption = (fallback: string): Option =>
  new Option("--listen <host:port>", "address to serve on (loopback unless told otherwise)")
    .argParser(listenAddress)
    .default(listenAddress(fallback), fallback)

/** Default of `--listen` of `leaseq metrics`: loopback only, the port Prometheus' exporter list gives leaseq's kind of exporter. */
export const DEFAULT_METRICS_LISTEN = "127.0.0.1:9464"

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

/** Default of `--listen` of `leaseq dashboard`: loopback only. */
export const DEFAULT_DASHBOARD_LISTEN = "127.0.0.1:7300"

/** `--allowed-host <name>` of `leaseq dashboard`, repeatable. */
export const allowedHostOption = (): Option =>
  new Option(
    "--allowed-host <name>",
    "a host name the dashboard answers to besides IP addresses and localhost (repeat for more)",
  ).argParser((v: string, all: ReadonlyArray<string> = []) => [...all, v])

/** `metrics` and `dashboard`: long-running servers, until a signal. */
export const serveCommands = ({ program, io, url, setJob }: CommandGroup): void => {
  const metrics = withCommonFlags(
    program
      .command("metrics")
      .description(
        "serve /metrics in the Prometheus text format for every queue under the prefix (or those named), until Ctrl-C",
      ),
  )
    .addOption(listenOption(DEFAULT_METRICS_LISTEN))
    .addOption(maxQueuesOption())
    .addOption(readTimeoutOption())
    .option("--queue <name>", "only this queue (repeat for more; default: every queue under the prefix)", queueList)
    .addHelpText(
      "after",
      "\nExamples:\n  leaseq metrics --url redis://127.0.0.1:6379\n  leaseq metrics --listen 0.0.0.0:9464 --prefix jobs",
    )
  metrics.action(() =>
    setJob(url(metrics.opts(), async (u) => (await import("./Metrics.ts")).runMetrics(io, u, metrics.opts()))),
  )

  const dashboard = withCommonFlags(
    program
      .command("dashboard")
      .description(
        "serve a live dashboard of the queues under the prefix (read-only unless --allow-actions), until Ctrl-C",
      ),
  )
    .addOption(listenOption(DEFAULT_DASHBOARD_LISTEN))
    .option(
      "--allow-actions",
      "allow retry, promote, cancel and delete of jobs, purge of dead jobs, pause and resume from the page (each action needs the token)",
    )
    .option(
      "--token <token>",
      "the token actions (and reads beyond loopback) need, at least 16 characters; visible in ps: prefer --token-file or $LEASEQ_DASHBOARD_TOKEN (default: generated)",
    )
    .option("--token-file <file>", "read the token from this file")
    .addOption(allowedHostOption())
    .option("--hide-payloads", "never send payloads or results to the page (queues carrying personal data)")
    .addHelpText(
      "after",
      "\nExamples:\n  leaseq dashboard --url redis://127.0.0.1:6379\n  leaseq dashboard --allow-actions --hide-payloads",
    )
  dashboard.action(() =>
    setJob(url(dashboard.opts(), async (u) => (await import("./Dashboard.ts")).runDashboard(io, u, dashboard.opts()))),
  )
}
