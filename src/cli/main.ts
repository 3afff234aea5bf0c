#!/usr/bin/env node
/**
 * The `leaseq` bin: commander parses (every flag checked before anything reaches
 * Redis), then the chosen command runs as one Effect at the edge; a failure becomes
 * a one-line reason on stderr, and the exit code goes to `process.exitCode`.
 * Runs under Node 24 type stripping (`node src/cli/main.ts`) and compiled
 * (`dist/cli/main.js`).
 */
import { readFileSync } from "node:fs"
import { Command, CommanderError } from "commander"
import {
  DEFAULT_SWEEP_LIMIT,
  DEFAULT_VERIFY_LINES,
  DEFAULT_VERIFY_PAGE,
  VERIFY_PAGE_LIMITS,
} from "../engine/model/CallDefaults.ts"
import { Limits } from "../engine/model/Validate.ts"
import type { CommandGroup, Job } from "./CommandGroup.ts"
import { queueList, queueName, resolveUrl, statsFlags, wholeNumber, withCommonFlags } from "./Flags.ts"
import { jobCommands } from "./JobsFlags.ts"
import { opsCommands } from "./OpsFlags.ts"
import { ExitCode, type Io, oneLine, processIo, toFailure } from "./Output.ts"
import { scheduleCommands } from "./SchedulesFlags.ts"
import { serveCommands } from "./ServeFlags.ts"

/** Default `--max-ms` of `leaseq sweep`: the whole pass starts no new call after this. */
const DEFAULT_SWEEP_MAX_MS = 30_000

const version = (): string => {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string }
    return pkg.version ?? "unknown"
  } catch {
    return "unknown"
  }
}

const EXIT_CODES = `
Every command takes --url <url> (default: $REDIS_URL, else redis://127.0.0.1:6379),
--prefix <prefix> (default: leaseq) and --json (not metrics, dashboard). Run leaseq <command> --help for the rest.

Exit codes:
  0  the command ran (a sweep that found nothing is a success)
  1  Redis could not be reached or failed, a queue's keys are not leaseq's, or the queue refused (WrongJobState, …)
  2  bad flags or configuration; nothing was written to Redis
  3  verify found a violation (listed on stdout)`

/** Resolve the URL (a usage failure when bad), then load the command and run it against the URL. */
const withUrl =
  (env: NodeJS.ProcessEnv): CommandGroup["url"] =>
  (flags, run) =>
  async () => {
    let url: string
    try {
      url = resolveUrl(flags.url, env)
    } catch (e) {
      return refuse(toFailure(e))()
    }
    return run(url)
  }

/** A job that only fails with `failure`. */
const refuse =
  (failure: ReturnType<typeof toFailure>): Job =>
  async () =>
    (await import("effect/Effect")).fail(failure)

/** What every group of commands is built with. */
type Ctx = CommandGroup

/**
 * Build the commander program. Actions do not run anything: each hands the Effect
 * to run to `setJob`, so parsing and running stay apart.
 */
const buildProgram = (io: Io, env: NodeJS.ProcessEnv, setJob: (job: Job) => void): Command => {
  const program = new Command("leaseq")
  const ctx: Ctx = { program, io, url: withUrl(env), refuse, setJob }
  program
    .description("leaseq: a reliable job queue on Redis. Sweep expired leases from cron, inspect and repair queues.")
    .version(version(), "-V, --version")
    .exitOverride()
    .configureOutput({
      writeOut: io.out,
      writeErr: io.err,
      outputError: (text, write) => write(`leaseq: ${oneLine(text.replace(/^error: /, ""))}\n`),
    })
    .addHelpText("after", EXIT_CODES)
  queueCommands(ctx)
  serveCommands(ctx)
  deadCommands(ctx)
  watchCommands(ctx)
  jobCommands(ctx)
  scheduleCommands(ctx)
  opsCommands(ctx)
  return program
}

/** `sweep`, `stats`, `verify`: every queue under the prefix, or those named. */
const queueCommands = ({ program, io, url, setJob }: Ctx): void => {
  const sweep = withCommonFlags(
    program
      .command("sweep")
      .description(
        "one bounded pass: reclaim expired leases, promote due delayed jobs and tick due schedules in every queue under the prefix (or those named)",
      ),
  )
    .option(
      "--queue <name>",
      "sweep only this queue (repeat for more; default: every queue under the prefix)",
      queueList,
    )
    .option(
      "--limit <n>",
      `jobs per script call (${Limits.sweepLimit.min}-${Limits.sweepLimit.max})`,
      wholeNumber("--limit", Limits.sweepLimit.min, Limits.sweepLimit.max),
      DEFAULT_SWEEP_LIMIT,
    )
    .option(
      "--max-ms <ms>",
      "start no new script call after this many ms for the whole pass (every queue still gets one call)",
      wholeNumber("--max-ms", 0, 86_400_000),
      DEFAULT_SWEEP_MAX_MS,
    )
    .addHelpText(
      "after",
      "\nExamples:\n  leaseq sweep --url redis://127.0.0.1:6379\n  leaseq sweep --queue emails --queue thumbnails --json",
    )
  sweep.action(() => setJob(url(sweep.opts(), async (u) => (await import("./Sweep.ts")).runSweep(io, u, sweep.opts()))))

  const stats = statsFlags(
    withCommonFlags(program.command("stats").description("per queue: jobs in each state, completed and failed, rates")),
  )
  stats.action(() => setJob(url(stats.opts(), async (u) => (await import("./Admin.ts")).runStats(io, u, stats.opts()))))

  const verify = withCommonFlags(
    program
      .command("verify")
      .description("check every job is in exactly one state and no data is orphaned (exit 3 if not)"),
  )
    .option("--queue <name>", "only this queue (repeat for more; default: every queue under the prefix)", queueList)
    .option(
      "--max-lines <n>",
      "list at most this many violations per queue (the count is always exact)",
      wholeNumber("--max-lines", 1, 100_000),
      DEFAULT_VERIFY_LINES,
    )
    .option(
      "--page-size <n>",
      "entries checked per Redis call (each call is short; larger pages: fewer calls, more Lua memory per call)",
      wholeNumber("--page-size", VERIFY_PAGE_LIMITS.min, VERIFY_PAGE_LIMITS.max),
      DEFAULT_VERIFY_PAGE,
    )
  verify.action(() =>
    setJob(url(verify.opts(), async (u) => (await import("./Admin.ts")).runVerify(io, u, verify.opts()))),
  )
}

/** `dead list|retry|purge` for one queue. */
const deadCommands = ({ program, io, url, setJob }: Ctx): void => {
  const dead = program.command("dead").description("list, retry or purge the dead jobs of a queue")
  const deadCommand = (name: string, description: string) =>
    withCommonFlags(dead.command(name).description(description)).requiredOption(
      "--queue <name>",
      "the queue (required)",
      queueName,
    )

  const list = deadCommand("list", "list dead jobs, oldest death first, with their last error")
    .option("--offset <n>", "skip this many dead jobs", wholeNumber("--offset", 0, 1_000_000_000), 0)
    .option("--count <n>", "list at most this many", wholeNumber("--count", 1, 10_000), 50)
  list.action(() => setJob(url(list.opts(), async (u) => (await import("./Dead.ts")).runDeadList(io, u, list.opts()))))

  const retry = deadCommand("retry", "give dead jobs a fresh set of attempts: they go back on wait")
    .argument("[ids...]", "ids of the dead jobs to retry")
    .option("--all", "retry every dead job of the queue")
    .addHelpText(
      "after",
      "\nExamples:\n  leaseq dead retry --queue emails 01JD3K…\n  leaseq dead retry --queue emails --all",
    )
  retry.action((ids: string[]) =>
    setJob(url(retry.opts(), async (u) => (await import("./Dead.ts")).runDeadAct(io, u, "retry", ids, retry.opts()))),
  )

  const purge = deadCommand("purge", "delete dead jobs and their data for good (asks for --yes)")
    .argument("[ids...]", "ids of the dead jobs to delete")
    .option("--all", "delete every dead job of the queue")
    .option("--yes", "confirm: without it nothing is deleted (exit 2)")
    .addHelpText("after", "\nExamples:\n  leaseq dead purge --queue emails --all --yes")
  purge.action((ids: string[]) =>
    setJob(url(purge.opts(), async (u) => (await import("./Dead.ts")).runDeadAct(io, u, "purge", ids, purge.opts()))),
  )
}

/** `workers` (every queue, or those named) and `events` of one queue. */
const watchCommands = ({ program, io, url, setJob }: Ctx): void => {
  const workers = withCommonFlags(
    program
      .command("workers")
      .description("live workers of every queue (or those named): id, state, running/concurrency, last heartbeat"),
  ).option("--queue <name>", "only this queue (repeat for more; default: every queue under the prefix)", queueList)
  workers.action(() =>
    setJob(url(workers.opts(), async (u) => (await import("./Workers.ts")).runWorkers(io, u, workers.opts()))),
  )

  const events = withCommonFlags(
    program
      .command("events")
      .description("a queue's job events (added, active, completed, failed, dead, …), from its events stream"),
  )
    .requiredOption("--queue <name>", "the queue (required; a partitioned queue's partitions are merged)", queueName)
    .option("--from <where>", "start | now | an event id (default: start, or now with --follow)")
    .option("--follow", "keep printing events as they are recorded, until stopped (Ctrl-C)")
    .addHelpText(
      "after",
      "\nWith --json: one JSON object per event, one per line.\nExamples:\n  leaseq events --queue emails\n  leaseq events --queue emails --from start --follow --json",
    )
  events.action(() =>
    setJob(url(events.opts(), async (u) => (await import("./Events.ts")).runEvents(io, u, events.opts()))),
  )
}

/**
 * Run a parsed command: load it, run it, and print a failure's one-line reason on
 * stderr. Effect is imported here, so `--help` and a bad flag load none of it.
 */
const runJob = async (io: Io, job: Job): Promise<number> => {
  const [Effect, Cause] = await Promise.all([import("effect/Effect"), import("effect/Cause")])
  return Effect.runPromise(
    Effect.promise(job).pipe(
      Effect.flatten,
      Effect.catch((failure) =>
        Effect.sync(() => {
          io.err(`leaseq: ${failure.message}\n`)
          return failure.exitCode
        }),
      ),
      Effect.catchCause((cause) =>
        Effect.sync(() => {
          const e = Cause.squash(cause)
          io.err(`leaseq: internal error: ${oneLine(e instanceof Error ? e.message : String(e))}\n`)
          return ExitCode.redis
        }),
      ),
    ),
  )
}

/**
 * Parse `argv` (without node and script), run the command, and return the exit
 * code. Help and version exit 0; any parse error exits 2 with one line on stderr.
 */
const runCli = async (argv: ReadonlyArray<string>, io: Io, env: NodeJS.ProcessEnv): Promise<number> => {
  let job: Job | undefined
  const program = buildProgram(io, env, (j) => {
    job = j
  })
  try {
    await program.parseAsync([...argv], { from: "user" })
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e
    // Help asked for (`--help`, `help <command>`) and --version end 0; help shown for a missing command ends 2.
    if (e.code === "commander.helpDisplayed" || e.code === "commander.version") return ExitCode.ok
    if (e.code === "commander.help" && e.exitCode === 0) return ExitCode.ok
    return ExitCode.usage
  }
  return job === undefined ? ExitCode.ok : runJob(io, job)
}

// A closed pipe (`leaseq stats | head -1`) is not an error worth a stack trace.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code !== "EPIPE") throw e
})

process.exitCode = await runCli(process.argv.slice(2), processIo(), process.env)

// Every connection is closed by now, so Node exits at once. Should a stray handle
// ever keep it alive, a cron job must still end: this timer does not hold Node open.
setTimeout(() => process.exit(), 5_000).unref()
