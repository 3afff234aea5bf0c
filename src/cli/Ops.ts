/**
 * `leaseq jobs` (a page of the jobs in one state), `leaseq drain`, `leaseq clean`,
 * `leaseq obliterate` (with `--yes`), `leaseq promote <id>`, `leaseq retry <id>`: the
 * operator's calls of one queue (`--queue`; a partitioned queue's name covers every
 * partition). Flags are checked before anything is sent; a refusal (a job in another state,
 * active jobs) is a one-line reason and exit 1, having changed nothing.
 */
import { Option } from "commander"
import * as Effect from "effect/Effect"
import type { JobPage, QueueOps } from "../engine/queue/OpsApi.ts"
import { CLEAN_STATES, LIST_STATES } from "../engine/scripts/OpsScripts.ts"
import { openQueueApi, withRedis } from "./CliSession.ts"
import type { CommandGroup } from "./CommandGroup.ts"
import { queueName, wholeNumber, withCommonFlags } from "./Flags.ts"
import type { JobFlags } from "./Jobs.ts"
import {
  type CliFailure,
  clip,
  ExitCode,
  type ExitCodeValue,
  escapeControl,
  type Io,
  table,
  toFailure,
  usage,
  writeJson,
  writeText,
} from "./Output.ts"
import { upgradeCommands } from "./Upgrade.ts"

type Run = Effect.Effect<ExitCodeValue, CliFailure>

/** Run `use` with the operator's calls of the queue `--queue` stands for, errors as one line under `context`. */
const onOps = <A>(url: string, flags: JobFlags, context: string, use: (ops: QueueOps) => Effect.Effect<A, unknown>) =>
  withRedis(url, (client) =>
    openQueueApi(client, flags.prefix, flags.queue).pipe(
      Effect.flatMap(({ api }) => use(api.ops)),
      Effect.mapError((e) => toFailure(e, context)),
    ),
  )

const when = (ms: number | undefined): string => (ms === undefined ? "" : new Date(ms).toISOString())

/**
 * A cursor as one shell word that pastes back as it is: as it is when it holds only
 * characters no shell treats specially (a job cursor is digits, or a score and a job id of
 * `[A-Za-z0-9._:-]`), else single-quoted with each `'` written `'\''`.
 */
export const shellWord = (text: string): string =>
  /^[A-Za-z0-9._:+,/-]+$/.test(text) ? text : `'${escapeControl(text).replaceAll("'", "'\\''")}'`

/** A row's outcome: the last error (reason and message) of a job not completed, a completed job's result. */
const outcomeOf = (j: JobPage["jobs"][number]): string =>
  j.error !== undefined
    ? `${j.error.reason ?? "failed"}: ${j.error.tag ?? j.error.name ?? "Error"}${j.error.message ? `: ${j.error.message}` : ""}`
    : j.result !== undefined
      ? JSON.stringify(j.result)
      : j.resultBytes
        ? `(result of ${j.resultBytes} bytes)`
        : ""

/** The state `leaseq jobs` lists when `--state` is not given. */
export const DEFAULT_LIST_STATE = "waiting"

/**
 * The text form of a page: one row per job (every cell escaped by `table`), then the cursor.
 * `defaulted`: `--state` was not given, so the header says the state is the default.
 */
export const formatPage = (queue: string, state: string, page: JobPage, defaulted = false): string => {
  const rows = page.jobs.map((j) => [
    j.id,
    when(j.addedAt || undefined),
    when(j.dueAt ?? j.leaseDeadline ?? j.finishedAt),
    j.name ?? "",
    `${j.attempt}/${j.maxAttempts}`,
    clip(outcomeOf(j), 60),
    clip(j.payload ?? "", 80),
  ])
  const others = LIST_STATES.filter((s) => s !== state).join("|")
  const note = defaulted ? ` (the default state; --state ${others} for others)` : ""
  const head = `queue ${queue}: ${page.jobs.length} of ${page.total} ${state} jobs${note}\n`
  const next = page.cursor === undefined ? "" : `next page: --cursor ${shellWord(page.cursor)}\n`
  return (
    head +
    (rows.length > 0 ? table(["id", "added", "at", "name", "attempt", "error / result", "payload"], rows) : "") +
    next
  )
}

interface ListFlags extends JobFlags {
  /** Absent: {@link DEFAULT_LIST_STATE}. */
  readonly state?: string
  readonly count?: number
  readonly cursor?: string
  readonly order?: string
}

/** Run `leaseq jobs`. */
export const runJobs = (io: Io, url: string, flags: ListFlags): Run => {
  const state = flags.state ?? DEFAULT_LIST_STATE
  return onOps(url, flags, `listing ${state} jobs of queue ${flags.queue}`, (ops) =>
    ops.getJobs(state, { count: flags.count, cursor: flags.cursor, order: flags.order }),
  ).pipe(
    Effect.map((page) => {
      if (flags.json) writeJson(io, { queue: flags.queue, state, ...page })
      else writeText(io, formatPage(flags.queue, state, page, flags.state === undefined))
      return ExitCode.ok
    }),
  )
}

/** Run one of drain, clean, obliterate, promote, retry: `act` does it, `say` tells what it did. */
const runOp =
  <A>(context: string, act: (ops: QueueOps) => Effect.Effect<A, unknown>, say: (a: A) => string) =>
  (io: Io, url: string, flags: JobFlags): Run =>
    onOps(url, flags, context, act).pipe(
      Effect.map((a) => {
        if (flags.json) writeJson(io, { queue: flags.queue, ...(typeof a === "object" ? a : { was: a }) })
        else writeText(io, `queue ${flags.queue}: ${say(a)}\n`)
        return ExitCode.ok
      }),
    )

/** A command of one queue: `--queue` and the common flags. */
const queueCommand = (program: CommandGroup["program"]) => (name: string, description: string) =>
  withCommonFlags(program.command(name).description(description)).requiredOption(
    "--queue <name>",
    "the queue (required; a partitioned queue's name covers all its partitions)",
    queueName,
  )

/** `jobs`, `drain`, `clean`, `obliterate`, `promote`, `retry` of one queue. */
export const opsCommands = (group: CommandGroup): void => {
  const { program, io, url, setJob } = group
  const command = queueCommand(program)
  const jobs = command("jobs", "list one page of the jobs in a state, with their payloads")
    .addOption(
      new Option("--state <state>", `the state (default: ${DEFAULT_LIST_STATE}, said in the header)`).choices(
        LIST_STATES,
      ),
    )
    .option("--count <n>", "jobs in the page (default 100)", wholeNumber("--count", 1, 1000))
    .option("--cursor <cursor>", "the next page's cursor, as the previous page printed it")
    .addOption(
      new Option("--order <order>", "asc: the next to run (or oldest) first; desc: the reverse").choices([
        "asc",
        "desc",
      ]),
    )
    .addHelpText(
      "after",
      "\nExamples:\n  leaseq jobs --queue emails\n  leaseq jobs --queue emails --state dead --count 20 --json",
    )
  jobs.action(() => setJob(url(jobs.opts(), (u) => runJobs(io, u, jobs.opts()))))

  const drain = command("drain", "remove every waiting job (with --delayed, every delayed one too) for good").option(
    "--delayed",
    "delayed jobs too",
  )
  drain.action(() => {
    const o = drain.opts<JobFlags & { readonly delayed?: boolean }>()
    const run = runOp(
      `draining queue ${o.queue}`,
      (ops) => ops.drain({ delayed: o.delayed === true }),
      (r: { waiting: number; delayed: number; calls: number }) =>
        `removed ${r.waiting} waiting and ${r.delayed} delayed jobs in ${r.calls} calls`,
    )
    setJob(url(o, (u) => run(io, u, o)))
  })

  const clean = command("clean", "delete completed, cancelled or dead jobs that finished long enough ago")
    .addOption(new Option("--state <state>", "the state").choices(CLEAN_STATES).makeOptionMandatory())
    .option(
      "--older-than-ms <ms>",
      "only jobs finished at least this long ago (default 0)",
      wholeNumber("--older-than-ms", 0, 31_536_000_000),
    )
    .option("--limit <n>", "delete at most this many (default: all)", wholeNumber("--limit", 1, 1_000_000_000))
  clean.action(() => {
    const o = clean.opts<
      JobFlags & { readonly state: string; readonly olderThanMs?: number; readonly limit?: number }
    >()
    const run = runOp(
      `cleaning ${o.state} jobs of queue ${o.queue}`,
      (ops) => ops.clean(o.state, { olderThanMs: o.olderThanMs, limit: o.limit }),
      (r: { deleted: number; calls: number }) => `deleted ${r.deleted} ${o.state} jobs in ${r.calls} calls`,
    )
    setJob(url(o, (u) => run(io, u, o)))
  })

  destructiveCommands(group)
  upgradeCommands(group)

  for (const [name, what] of [
    ["promote", "make a delayed job ready now"],
    ["retry", "run a completed, cancelled or dead job again with fresh attempts"],
  ] as const) {
    const one = command(name, what).argument("<id>", "the job id")
    one.action((id: string) => {
      const o = one.opts<JobFlags>()
      const run = runOp(
        `${name} job ${id} of queue ${o.queue}`,
        (ops) => (name === "promote" ? ops.promote(id) : ops.retry(id)),
        (was) => `job ${id} ${name === "promote" ? "promoted" : "queued again"} (it was ${was})`,
      )
      setJob(url(o, (u) => run(io, u, o)))
    })
  }
}

/** `obliterate`, behind `--yes`. */
const destructiveCommands = ({ program, io, url, setJob }: CommandGroup): void => {
  const command = queueCommand(program)
  const obliterate = command(
    "obliterate",
    "delete the whole queue: every job, counter, event and schedule (asks --yes)",
  )
    .option("--force", "even while jobs are active: their leases are revoked")
    .option("--yes", "confirm: the queue is deleted for good")
  obliterate.action(() => {
    const o = obliterate.opts<JobFlags & { readonly force?: boolean; readonly yes?: boolean }>()
    if (o.yes !== true) {
      setJob(
        Effect.fail(usage(`obliterate deletes queue ${o.queue} for good: add --yes to confirm (nothing was deleted)`)),
      )
      return
    }
    const run = runOp(
      `obliterating queue ${o.queue}`,
      (ops) => ops.obliterate({ force: o.force === true }),
      (r: { active: number }) => `deleted (${r.active} active jobs had their leases revoked)`,
    )
    setJob(url(o, (u) => run(io, u, o)))
  })
}
