/**
 * `leaseq schedules --queue q` (the queue's schedules, soonest next run first) and
 * `leaseq unschedule <name> --queue q`. A partitioned queue's schedules are in partition 0
 * (`--queue orders` covers it).
 */
import * as Effect from "effect/Effect"
import type { ScheduleControl, ScheduleInfo } from "../engine/queue/Schedules.ts"
import { openQueueApi, withRedis } from "./Connection.ts"
import { queueName, withCommonFlags } from "./Flags.ts"
import type { CommandGroup, JobFlags } from "./Jobs.ts"
import {
  type CliFailure,
  clip,
  ExitCode,
  type ExitCodeValue,
  type Io,
  table,
  toFailure,
  writeJson,
  writeText,
} from "./Output.ts"

/** Run `use` with the schedules of the queue `--queue` names. */
const onSchedules = <A>(
  url: string,
  flags: JobFlags,
  context: string,
  use: (schedules: ScheduleControl) => Effect.Effect<A, unknown>,
): Effect.Effect<A, CliFailure> =>
  withRedis(url, (client) =>
    openQueueApi(client, flags.prefix, flags.queue).pipe(
      Effect.flatMap(({ api }) => use(api.schedules)),
      Effect.mapError((e) => toFailure(e, context)),
    ),
  )

/** How a schedule ticks, in one cell: `every 60000ms` or `cron "0 3 * * *" Europe/Paris`. */
const timing = (s: ScheduleInfo): string => (s.every !== undefined ? `every ${s.every}ms` : `cron "${s.cron}" ${s.tz}`)

/** The text form of `leaseq schedules`. */
export const formatSchedules = (queue: string, list: ReadonlyArray<ScheduleInfo>): string =>
  list.length === 0
    ? `queue ${queue}: no schedules\n`
    : table(
        ["NAME", "TIMING", "NEXT RUN", "CATCH-UP", "PAYLOAD"],
        list.map((s) => [s.name, timing(s), new Date(s.nextRunAt).toISOString(), s.catchUp, clip(s.payload, 60)]),
      )

/** Run `leaseq schedules`: the list (JSON: `{ queue, schedules: [...] }`, payloads parsed). */
export const runSchedules = (io: Io, url: string, flags: JobFlags): Effect.Effect<ExitCodeValue, CliFailure> =>
  onSchedules(url, flags, `listing the schedules of queue ${flags.queue}`, (s) => s.list).pipe(
    Effect.map((list) => {
      if (flags.json) {
        writeJson(io, { queue: flags.queue, schedules: list.map((s) => ({ ...s, payload: JSON.parse(s.payload) })) })
      } else writeText(io, formatSchedules(flags.queue, list))
      return ExitCode.ok
    }),
  )

/** Run `leaseq unschedule <name>`: removed, or not there (exit 0 either way). */
export const runUnschedule = (
  io: Io,
  url: string,
  name: string,
  flags: JobFlags,
): Effect.Effect<ExitCodeValue, CliFailure> =>
  onSchedules(url, flags, `removing schedule ${name} of queue ${flags.queue}`, (s) => s.unschedule(name)).pipe(
    Effect.map((removed) => {
      if (flags.json) writeJson(io, { queue: flags.queue, name, removed })
      else writeText(io, `queue ${flags.queue}: schedule ${name} ${removed ? "removed" : "not found"}\n`)
      return ExitCode.ok
    }),
  )

/** `schedules` and `unschedule` of one queue. */
export const scheduleCommands = ({ program, io, url, setJob }: CommandGroup): void => {
  const queueOption = "the queue (required; a partitioned queue's schedules are in its partition 0)"
  const list = withCommonFlags(
    program.command("schedules").description("the schedules (recurring jobs) of a queue, soonest next run first"),
  ).requiredOption("--queue <name>", queueOption, queueName)
  list.action(() => setJob(url(list.opts(), (u) => runSchedules(io, u, list.opts()))))
  const remove = withCommonFlags(
    program.command("unschedule").description("remove a schedule: no later tick makes a job (jobs made stay)"),
  )
    .requiredOption("--queue <name>", queueOption, queueName)
    .argument("<name>", "the schedule's name")
  remove.action((name: string) => setJob(url(remove.opts(), (u) => runUnschedule(io, u, name, remove.opts()))))
}
