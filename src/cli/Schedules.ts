/**
 * `leaseq schedules --queue q` (the queue's schedules, soonest next run first),
 * `leaseq schedule <name> --queue q --every <ms> | --cron <expr> [--tz <zone>]` (create or
 * replace) and `leaseq unschedule <name> --queue q`. A partitioned queue's schedules are in partition 0
 * (`--queue orders` covers it).
 */
import * as Effect from "effect/Effect"
import type { ScheduleControl, ScheduleInfo } from "../engine/queue/Schedules.ts"
import { openQueueApi, withRedis } from "./CliSession.ts"
import type { JobFlags } from "./Jobs.ts"
import {
  CliFailure,
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

/** Flags of `leaseq schedule`. */
export interface ScheduleFlags extends JobFlags {
  readonly every?: number
  readonly cron?: string
  readonly tz?: string
  readonly catchUp?: number
  readonly payload?: string
  readonly maxAttempts?: number
}

/** The payload given as JSON text (default null), re-encoded; text that is not JSON is a usage failure (exit 2). */
const payloadOf = (text: string | undefined): Effect.Effect<string, CliFailure> =>
  Effect.try({
    try: () => JSON.stringify(text === undefined ? null : JSON.parse(text)),
    catch: (e) =>
      new CliFailure({ exitCode: ExitCode.usage, reason: `--payload must be JSON: ${(e as Error).message}` }),
  })

/** Run `leaseq schedule <name>`: create or replace it; prints what changed and the next run. */
export const runSchedule = (
  io: Io,
  url: string,
  name: string,
  flags: ScheduleFlags,
): Effect.Effect<ExitCodeValue, CliFailure> =>
  payloadOf(flags.payload).pipe(
    Effect.flatMap((payload) => {
      const when = { every: flags.every, cron: flags.cron, tz: flags.tz, catchUp: flags.catchUp }
      const options = flags.maxAttempts === undefined ? {} : { maxAttempts: flags.maxAttempts }
      return onSchedules(url, flags, `setting schedule ${name} of queue ${flags.queue}`, (s) =>
        s.schedule(name, when, { payload, options }),
      )
    }),
    Effect.map((set) => {
      if (flags.json) writeJson(io, { queue: flags.queue, ...set })
      else
        writeText(
          io,
          `queue ${flags.queue}: schedule ${set.name} ${set.change}, next run ${new Date(set.nextRunAt).toISOString()}\n`,
        )
      return ExitCode.ok
    }),
  )
