/**
 * The flags of `leaseq jobs`, `drain`, `clean`, `obliterate`, `promote`, `retry` and
 * `upgrade` (one queue each), apart from what runs them: each action imports Ops.ts or
 * Upgrade.ts only when its command is chosen. `obliterate` without `--yes` is refused
 * here, before anything is loaded or sent.
 */
import { Option } from "commander"
import { CLEAN_STATES, LIST_STATES } from "../engine/model/CallDefaults.ts"
import type { CommandGroup } from "./CommandGroup.ts"
import { queueName, wholeNumber, withCommonFlags } from "./Flags.ts"
import type { JobFlags } from "./Jobs.ts"
import { usage } from "./Output.ts"
import type { UpgradeFlags } from "./Upgrade.ts"

/** The state `leaseq jobs` lists when `--state` is not given. */
export const DEFAULT_LIST_STATE = "waiting"

/** A command of one queue: `--queue` and the common flags. */
const queueCommand = (program: CommandGroup["program"]) => (name: string, description: string) =>
  withCommonFlags(program.command(name).description(description)).requiredOption(
    "--queue <name>",
    "the queue (required; a partitioned queue's name covers all its partitions)",
    queueName,
  )

/** What runs the commands: imported when one is chosen. */
const ops = () => import("./Ops.ts")

/** `jobs`, `drain`, `clean`, `obliterate`, `promote`, `retry` and `upgrade` of one queue. */
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
  jobs.action(() => setJob(url(jobs.opts(), async (u) => (await ops()).runJobs(io, u, jobs.opts()))))

  const drain = command("drain", "remove every waiting job (with --delayed, every delayed one too) for good").option(
    "--delayed",
    "delayed jobs too",
  )
  drain.action(() => {
    const o = drain.opts<JobFlags & { readonly delayed?: boolean }>()
    setJob(url(o, async (u) => (await ops()).runDrain(io, u, o)))
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
    setJob(url(o, async (u) => (await ops()).runClean(io, u, o)))
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
      setJob(url(o, async (u) => (await ops()).runMove(io, u, name, id, o)))
    })
  }
}

/** `obliterate`, behind `--yes`. */
const destructiveCommands = ({ program, io, url, refuse, setJob }: CommandGroup): void => {
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
      setJob(refuse(usage(`obliterate deletes queue ${o.queue} for good: add --yes to confirm (nothing was deleted)`)))
      return
    }
    setJob(url(o, async (u) => (await ops()).runObliterate(io, u, o)))
  })
}

/** `upgrade` of one queue. */
const upgradeCommands = ({ program, io, url, setJob }: CommandGroup): void => {
  const upgrade = withCommonFlags(
    program
      .command("upgrade")
      .description("move a queue to this leaseq's key layout while old and new clients run (resumable)"),
  )
    .requiredOption("--queue <name>", "the queue (a partitioned queue's name covers all its partitions)", queueName)
    .option("--force", "do not wait for workers of the old layout (their held jobs are retried)")
    .option("--page-size <n>", "entries per call (default 500)", wholeNumber("--page-size", 1, 1000))
    .option(
      "--wait-ms <ms>",
      "how long to wait for workers of the old layout to stop (default 60000)",
      wholeNumber("--wait-ms", 0, 3_600_000),
    )
    .addHelpText("after", "\nExamples:\n  leaseq upgrade --queue emails\n  leaseq upgrade --queue emails --json")
  upgrade.action(() => {
    const o = upgrade.opts<UpgradeFlags>()
    setJob(url(o, async (u) => (await import("./Upgrade.ts")).runUpgrade(io, u, o)))
  })
}
