import * as Effect from "effect/Effect"
import type { AttemptError, CancelledFrom, JobInfo } from "../engine/queue/JobCommands.ts"
import { validateJobId } from "../engine/queue/JobControl.ts"
import type { JobControl } from "../engine/queue/QueueApi.ts"
import { type Retention, resolveRetention } from "../engine/queue/Retention.ts"
import { openQueueApi, withRedis } from "./CliSession.ts"
import type { CommonFlags } from "./Flags.ts"
import {
  type CliFailure,
  clip,
  ExitCode,
  type ExitCodeValue,
  escapeControl,
  type Io,
  toFailure,
  usage,
  writeJson,
  writeText,
} from "./Output.ts"

/** Flags of the job commands. */
export interface JobFlags extends CommonFlags {
  readonly queue: string
}

/** Run `use` with the job control of the queue `--queue` stands for (every partition of a partitioned one). */
const onQueue = <A>(
  url: string,
  flags: JobFlags,
  context: string,
  use: (control: JobControl) => Effect.Effect<A, unknown>,
): Effect.Effect<A, CliFailure> =>
  withRedis(url, (client) =>
    openQueueApi(client, flags.prefix, flags.queue).pipe(
      Effect.flatMap(({ api }) => use(api.control)),
      Effect.mapError((e) => toFailure(e, context)),
    ),
  )

/** Check the id before connecting: a bad one is a usage failure (exit 2), nothing sent. */
const checkedId = (id: string): Effect.Effect<string, CliFailure> =>
  Effect.try({ try: () => validateJobId(id), catch: (e) => toFailure(e) })

const jsonPayload = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const when = (ms: number | undefined): string => (ms === undefined ? "" : new Date(ms).toISOString())

/** One failed attempt's error as a line: when, why, and the message. */
const attemptLine = (e: AttemptError): string =>
  `${when(e.at)} ${e.reason ?? "failed"}: ${e.tag ?? e.name ?? "Error"}${e.message ? `: ${e.message}` : ""}${e.fields ? ` ${JSON.stringify(e.fields)}` : ""}`

/** The text form of `leaseq job`. */
export const formatJob = (queue: string, info: JobInfo<string>): string => {
  const rows: Array<[string, string]> = [
    ["id", info.id],
    ...(info.name === undefined ? [] : [["name", info.name] as [string, string]]),
    ["queue", queue],
    ["state", info.state],
    ["priority", String(info.priority)],
    ["attempt", `${info.attempt} of ${info.maxAttempts}`],
    ["failures", String(info.failures)],
    ["lost leases", String(info.lostLeases)],
    ["added", when(info.addedAt || undefined)],
  ]
  if (info.dueAt !== undefined) rows.push(["due", when(info.dueAt)])
  if (info.lease) rows.push(["lease", `token ${info.lease.token}, deadline ${when(info.lease.deadline)}`])
  if (info.finishedAt !== undefined) rows.push(["finished", when(info.finishedAt)])
  if (info.dedupeKey !== undefined) rows.push(["dedupe key", info.dedupeKey])
  if (info.error !== undefined) rows.push(["last error", clip(JSON.stringify(info.error), 200)])
  if (info.result !== undefined) rows.push(["result", clip(JSON.stringify(info.result), 200)])
  rows.push(["payload", clip(info.payload, 200)])
  for (const e of info.errors ?? []) rows.push([`attempt ${e.attempt}`, clip(attemptLine(e), 200)])
  for (const line of info.logs ?? []) rows.push(["log", clip(line, 200)])
  // each value escaped whole (a newline in a dedupe key is shown as \x0a, not as a line of its own)
  return rows.map(([k, v]) => `${`${k}:`.padEnd(13)}${escapeControl(v)}\n`).join("")
}

/** Run `leaseq job <id>`: what the queue knows about one job. */
export const runJob = (io: Io, url: string, id: string, flags: JobFlags): Effect.Effect<ExitCodeValue, CliFailure> =>
  checkedId(id).pipe(
    Effect.flatMap((jobId) =>
      onQueue(url, flags, `looking up job ${jobId} in queue ${flags.queue}`, (control) => control.getJob(jobId)).pipe(
        Effect.map((info) => {
          if (flags.json) {
            writeJson(
              io,
              info
                ? { queue: flags.queue, found: true, ...info, payload: jsonPayload(info.payload) }
                : {
                    queue: flags.queue,
                    found: false,
                    id: jobId,
                  },
            )
          } else if (info) writeText(io, formatJob(flags.queue, info))
          else writeText(io, `queue ${flags.queue}: no job ${jobId} (never added, or finished and not retained)\n`)
          return ExitCode.ok
        }),
      ),
    ),
  )

/** Run `leaseq cancel <id>`. */
export const runCancel = (io: Io, url: string, id: string, flags: JobFlags): Effect.Effect<ExitCodeValue, CliFailure> =>
  checkedId(id).pipe(
    Effect.flatMap((jobId) =>
      onQueue(url, flags, `cancelling job ${jobId} in queue ${flags.queue}`, (control) => control.cancel(jobId)).pipe(
        Effect.map((was: CancelledFrom | undefined) => {
          if (flags.json)
            writeJson(io, { queue: flags.queue, id: jobId, cancelled: was !== undefined, ...(was ? { was } : {}) })
          else if (was) writeText(io, `queue ${flags.queue}: job ${jobId} cancelled (it was ${was})\n`)
          else writeText(io, `queue ${flags.queue}: job ${jobId} not cancelled: unknown or already finished\n`)
          return ExitCode.ok
        }),
      ),
    ),
  )

/** Run `leaseq pause` or `leaseq resume`. */
export const runPause = (
  io: Io,
  url: string,
  action: "pause" | "resume",
  flags: JobFlags,
): Effect.Effect<ExitCodeValue, CliFailure> =>
  onQueue(url, flags, `${action} queue ${flags.queue}`, (control) =>
    action === "pause" ? control.pause : control.resume,
  ).pipe(
    Effect.map((changed) => {
      const state = action === "pause" ? "paused" : "resumed"
      if (flags.json) writeJson(io, { queue: flags.queue, action, changed })
      else if (changed) writeText(io, `queue ${flags.queue}: ${state}\n`)
      else writeText(io, `queue ${flags.queue}: already ${action === "pause" ? "paused" : "running (not paused)"}\n`)
      return ExitCode.ok
    }),
  )

/** `job`, `cancel`, `pause`, `resume`, `limits` (Limits.ts) and `groups` (Groups.ts) of one queue. */
/** Flags of `leaseq retention`. */
export interface RetentionFlags extends JobFlags {
  /** The policy to store, as JSON. */
  readonly set?: string | undefined
}

const bound = (b: Partial<{ count: number; ageMs: number }>): string =>
  b.count === undefined && b.ageMs === undefined
    ? "no bound (kept until retried or purged)"
    : [b.count !== undefined ? `at most ${b.count}` : "", b.ageMs !== undefined ? `for ${b.ageMs} ms` : ""]
        .filter((s) => s !== "")
        .join(", ")

/** The text form of a policy. */
export const retentionText = (queue: string, r: Retention): string =>
  `queue ${queue} keeps finished jobs:\n  completed  ${bound(r.completed)}\n  cancelled  ${bound(r.cancelled)}\n  dead       ${bound(r.dead)}\n`

/** The policy of `--set`, checked (JSON, then as setRetention checks it) before anything is sent. */
const parsedPolicy = (text: string): Effect.Effect<Retention, CliFailure> =>
  Effect.try({
    try: () => resolveRetention(JSON.parse(text)),
    catch: (e) => usage(`--set ${text}: ${e instanceof Error ? e.message : String(e)}`),
  })

/** Run `leaseq retention`. */
export const runRetention = (io: Io, url: string, flags: RetentionFlags): Effect.Effect<ExitCodeValue, CliFailure> =>
  Effect.gen(function* () {
    const policy = flags.set === undefined ? undefined : yield* parsedPolicy(flags.set)
    const r = yield* onQueue(url, flags, `retention of queue ${flags.queue}`, (control) =>
      policy === undefined ? control.retention : control.setRetention(policy).pipe(Effect.andThen(control.retention)),
    )
    if (flags.json) writeJson(io, { queue: flags.queue, ...(policy ? { set: true } : {}), retention: r })
    else writeText(io, retentionText(flags.queue, r))
    return ExitCode.ok
  })
