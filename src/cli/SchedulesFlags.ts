/**
 * The flags of `leaseq schedules`, `schedule` and `unschedule`, apart from what runs them:
 * each action imports Schedules.ts only when its command is chosen.
 */
import type { CommandGroup } from "./CommandGroup.ts"
import { queueName, wholeNumber, withCommonFlags } from "./Flags.ts"

/** `schedules`, `schedule` and `unschedule` of one queue. */
export const scheduleCommands = ({ program, io, url, setJob }: CommandGroup): void => {
  const queueOption = "the queue (required; a partitioned queue's schedules are in its partition 0)"
  const list = withCommonFlags(
    program.command("schedules").description("the schedules (recurring jobs) of a queue, soonest next run first"),
  ).requiredOption("--queue <name>", queueOption, queueName)
  list.action(() =>
    setJob(url(list.opts(), async (u) => (await import("./Schedules.ts")).runSchedules(io, u, list.opts()))),
  )
  const set = withCommonFlags(
    program.command("schedule").description("create or replace a schedule: a job at each tick (see docs/schedules.md)"),
  )
    .requiredOption("--queue <name>", queueOption, queueName)
    .argument("<name>", "the schedule's name")
    .option("--every <ms>", "ms between ticks (on multiples of it)", wholeNumber("--every", 1, 31_622_400_000))
    .option("--cron <expression>", "a cron expression (5 fields, or 6 with seconds)")
    .option("--tz <zone>", "the IANA time zone of --cron (default UTC)")
    .option(
      "--catch-up <n>",
      "jobs for the latest n ticks missed while down (default 1)",
      wholeNumber("--catch-up", 1, 100),
    )
    .option("--max-attempts <n>", "maxAttempts of each job (default 3)", wholeNumber("--max-attempts", 1, 1000))
    .option("--payload <json>", "each job's payload, as JSON (default null)")
    .addHelpText(
      "after",
      '\nExamples:\n  leaseq schedule nightly --queue reports --cron "30 3 * * *" --tz America/New_York --payload \'{"kind":"daily"}\'\n  leaseq schedule beat --queue pings --every 60000',
    )
  set.action((n: string) =>
    setJob(url(set.opts(), async (u) => (await import("./Schedules.ts")).runSchedule(io, u, n, set.opts()))),
  )
  const remove = withCommonFlags(
    program.command("unschedule").description("remove a schedule: no later tick makes a job (jobs made stay)"),
  )
    .requiredOption("--queue <name>", queueOption, queueName)
    .argument("<name>", "the schedule's name")
  remove.action((name: string) =>
    setJob(url(remove.opts(), async (u) => (await import("./Schedules.ts")).runUnschedule(io, u, name, remove.opts()))),
  )
}
