/**
 * The flags of `leaseq job`, `cancel`, `pause`, `resume`, `groups`, `limits`, `retention`
 * and `flow` (one queue each), apart from what runs them: each action imports its module
 * (Jobs.ts, Groups.ts, Limits.ts, FlowTree.ts) only when its command is chosen.
 */
import { InvalidArgumentError, Option } from "commander"
import { MAX_GROUP_PAGE } from "../engine/model/CallDefaults.ts"
import type { CommandGroup } from "./CommandGroup.ts"
import { queueName, wholeNumber, withCommonFlags } from "./Flags.ts"
import type { RetentionFlags } from "./Jobs.ts"
import { escapeControl } from "./Output.ts"

/** Default of `--depth`: levels below the job shown. */
export const DEFAULT_FLOW_DEPTH = 3
/** Default of `--max`: nodes printed at most. */
export const DEFAULT_FLOW_MAX = 200

/**
 * The CLI's cursor: base64url of the engine's (a group name, which may hold any character
 * but NUL). Opaque on purpose: it is one shell word in every shell, pastes back exactly
 * (quoting could not carry a control character without printing it raw), and shows nothing
 * a tenant chose. `--json` gives the same cursor, so either output's cursor goes back in.
 */
export const cliCursor = (cursor: string): string => Buffer.from(cursor, "utf8").toString("base64url")

/** An argParser for `--cursor`: a cursor {@link cliCursor} printed, back to the engine's. */
export const groupCursor = (value: string): string => {
  const cursor = Buffer.from(value, "base64url").toString("utf8")
  if (!/^[A-Za-z0-9_-]+$/.test(value) || cliCursor(cursor) !== value)
    throw new InvalidArgumentError(
      `--cursor ${escapeControl(JSON.stringify(value))} is not a cursor leaseq groups printed: pass the one after "more: --cursor" (or the JSON "cursor"), as it is`,
    )
  return cursor
}

/** `job`, `cancel`, `pause`, `resume`, `groups`, `limits`, `retention` and `flow` of one queue. */
export const jobCommands = (group: CommandGroup): void => {
  const { program, io, url, setJob } = group
  const queueCommand = (name: string, description: string) =>
    withCommonFlags(program.command(name).description(description)).requiredOption(
      "--queue <name>",
      "the queue (required; a partitioned queue's name covers all its partitions)",
      queueName,
    )
  const job = queueCommand("job", "show one job: state, attempts, lease, last error, result, dedupe key, payload")
    .argument("<id>", "the job id (as add returned it)")
    .addHelpText(
      "after",
      "\nExamples:\n  leaseq job 01JD3K… --queue emails\n  leaseq job 01JD3K… --queue emails --json",
    )
  job.action((id: string) =>
    setJob(url(job.opts(), async (u) => (await import("./Jobs.ts")).runJob(io, u, id, job.opts()))),
  )

  const cancel = queueCommand(
    "cancel",
    "cancel a waiting, delayed or active job for good (an active job's lease is revoked at once)",
  ).argument("<id>", "the job id")
  cancel.action((id: string) =>
    setJob(url(cancel.opts(), async (u) => (await import("./Jobs.ts")).runCancel(io, u, id, cancel.opts()))),
  )

  const pause = queueCommand("pause", "stop handing out jobs (running jobs go on) until resume")
  pause.action(() =>
    setJob(url(pause.opts(), async (u) => (await import("./Jobs.ts")).runPause(io, u, "pause", pause.opts()))),
  )
  const resume = queueCommand("resume", "hand out jobs again after pause, waking idle workers")
  resume.action(() =>
    setJob(url(resume.opts(), async (u) => (await import("./Jobs.ts")).runPause(io, u, "resume", resume.opts()))),
  )
  groupCommands(group)
  limitCommands(group)
  retentionCommand(group)
  flowCommand(group)
}

/** `retention` of one queue. */
const retentionCommand = ({ program, io, url, setJob }: CommandGroup): void => {
  const cmd = withCommonFlags(
    program.command("retention").description("show (or --set) how many finished jobs the queue keeps, and how long"),
  )
    .requiredOption(
      "--queue <name>",
      "the queue (required; a partitioned queue's name covers all its partitions)",
      queueName,
    )
    .option("--set <json>", 'store this policy first, e.g. \'{"completed":{"count":100,"ageMs":600000}}\'')
    .addHelpText(
      "after",
      '\nExamples:\n  leaseq retention --queue emails\n  leaseq retention --queue emails --set \'{"completed":{"count":5000},"dead":{"ageMs":604800000}}\'',
    )
  cmd.action(() =>
    setJob(url(cmd.opts(), async (u) => (await import("./Jobs.ts")).runRetention(io, u, cmd.opts<RetentionFlags>()))),
  )
}

/** `groups` of one queue. */
const groupCommands = ({ program, io, url, setJob }: CommandGroup): void => {
  const groups = withCommonFlags(
    program
      .command("groups")
      .description("list a queue's groups (add's group option): waiting and active jobs, paused, limits"),
  )
    .requiredOption(
      "--queue <name>",
      "the queue (required; a partitioned queue's name covers all its partitions)",
      queueName,
    )
    .option("--cursor <cursor>", "go on from the page before (the cursor it printed, as it is)", groupCursor)
    .addOption(
      new Option("--count <n>", `groups per page (1 to ${MAX_GROUP_PAGE}, default 100)`).argParser(
        wholeNumber("--count", 1, MAX_GROUP_PAGE),
      ),
    )
    .addHelpText(
      "after",
      "\nExamples:\n  leaseq groups --queue emails\n  leaseq groups --queue emails --count 20 --json",
    )
  groups.action(() =>
    setJob(url(groups.opts(), async (u) => (await import("./Groups.ts")).runGroups(io, u, groups.opts()))),
  )
}

/** `limits` of one queue. */
const limitCommands = ({ program, io, url, setJob }: CommandGroup): void => {
  const limits = withCommonFlags(
    program
      .command("limits")
      .description("show or set a queue's flow limits: the rate limit across all workers and the concurrency cap"),
  )
    .requiredOption("--queue <name>", "the queue (a partitioned queue's name sets every partition's)", queueName)
    .option("--rate <max/perMs>", 'at most max jobs leased per perMs ms (e.g. 100/1000), or "off"')
    .option("--concurrency <n>", 'at most n jobs active at once across all workers, or "off"')
    .option("--hold <off>", 'lift a RateLimited hold ("off"; "--rate off" lifts it too)')
    .addHelpText(
      "after",
      "\nExamples:\n  leaseq limits --queue emails\n  leaseq limits --queue emails --rate 100/1000 --concurrency 5\n  leaseq limits --queue emails --rate off\n  leaseq limits --queue emails --hold off",
    )
  limits.action(() =>
    setJob(url(limits.opts(), async (u) => (await import("./Limits.ts")).runLimits(io, u, limits.opts()))),
  )
}

/** `leaseq flow`: a job and its children. */
const flowCommand = ({ program, io, url, setJob }: CommandGroup): void => {
  const cmd = withCommonFlags(program.command("flow").description("show a job and its children (a flow) as a tree"))
    .argument("<id>", "the job id")
    .requiredOption("--queue <name>", "the queue of the job (required)", queueName)
    .option("--depth <n>", `levels of children shown (default ${DEFAULT_FLOW_DEPTH})`, wholeNumber("--depth", 0, 100))
    .option("--max <n>", `nodes printed at most (default ${DEFAULT_FLOW_MAX})`, wholeNumber("--max", 1, 10_000))
    .addHelpText(
      "after",
      "\nExamples:\n  leaseq flow 01JD3K… --queue reports\n  leaseq flow 01JD3K… --queue reports --depth 1 --json",
    )
  cmd.action((id: string) =>
    setJob(url(cmd.opts(), async (u) => (await import("./FlowTree.ts")).runFlow(io, u, id, cmd.opts()))),
  )
}
