/**
 * `leaseq dead list | retry | purge`: the dead-letter set of one queue. `retry`
 * gives dead jobs a fresh set of attempts; `purge` deletes them for good and asks
 * for `--yes` first. Both take job ids, or `--all` (worked through in bounded batches).
 *
 * A partitioned queue (`--queue orders` standing for `orders~0`, `orders~1`, …) is
 * covered whole, through the library's queue (`QueueApi`): the list merges every
 * partition's dead jobs by time of death, and retry / purge look for each id in every
 * partition.
 */
import * as Effect from "effect/Effect"
import type { DeadJob } from "../engine/calls/Commands.ts"
import type { QueueApi } from "../engine/queue/QueueApi.ts"
import { openQueueApi, withRedis } from "./CliSession.ts"
import type { CommonFlags } from "./Flags.ts"
import {
  type CliFailure,
  clip,
  ExitCode,
  type ExitCodeValue,
  escapeControl,
  type Io,
  oneLine,
  plural,
  table,
  toFailure,
  usage,
  writeJson,
  writeText,
} from "./Output.ts"

/** Flags every `dead` command takes. */
export interface DeadFlags extends CommonFlags {
  readonly queue: string
}

/** Flags of `dead list`. */
export interface DeadListFlags extends DeadFlags {
  readonly offset: number
  readonly count: number
}

/** Flags of `dead retry` and `dead purge`. */
export interface DeadActFlags extends DeadFlags {
  /** `--all`: every dead job instead of the ids given. */
  readonly all?: boolean
  /** `dead purge` only: the confirmation. */
  readonly yes?: boolean
}

/** Dead jobs handled per script call with `--all`. */
export const DEAD_BATCH = 1_000

/** What `dead retry` / `dead purge` did (the JSON object printed with `--json`). */
export interface DeadActReport {
  readonly queue: string
  /** The partitions `queue` stands for, when it is a partitioned queue; else absent. */
  readonly partitions?: ReadonlyArray<string>
  readonly action: "retry" | "purge"
  /** Jobs put back on wait (retry) or deleted (purge). */
  readonly count: number
  /** Dead jobs left in the queue afterwards. */
  readonly remaining: number
  /** Ids given that were not dead (ignored). */
  readonly missing: ReadonlyArray<string>
}

const errorText = (error: unknown): string => {
  if (error === null || error === undefined) return ""
  if (typeof error === "object") {
    const e = error as { reason?: unknown; message?: unknown }
    if (typeof e.message === "string") return typeof e.reason === "string" ? `${e.reason}: ${e.message}` : e.message
  }
  return typeof error === "string" ? error : JSON.stringify(error)
}

/** The text form of a page of dead jobs (a QUEUE column when they come from several partitions). */
export const formatDeadList = (
  queue: string,
  offset: number,
  total: number,
  jobs: ReadonlyArray<DeadJob & { readonly queue?: string }>,
  partitions: ReadonlyArray<string> = [],
): string => {
  const label = partitions.length > 0 ? `${queue} (partitions ${partitions.join(", ")})` : queue
  if (total === 0) return `queue ${label}: no dead jobs\n`
  if (jobs.length === 0) return `queue ${label}: ${plural(total, "dead job")}, none at offset ${offset}\n`
  const head = `queue ${label}: ${plural(total, "dead job")}, showing ${offset + 1}-${offset + jobs.length} (oldest death first)`
  const rows = jobs.map((j) => [
    ...(partitions.length > 0 ? [j.queue ?? ""] : []),
    j.id,
    new Date(j.diedAt).toISOString(),
    j.failures,
    j.lostLeases,
    // cut after escaping: the columns keep their width whatever the text holds
    clip(escapeControl(errorText(j.error).replace(/\s+/g, " ")), 60),
    clip(escapeControl(j.payload ?? "(no payload)"), 40),
  ])
  const columns = ["ID", "DIED", "FAILURES", "LOST", "ERROR", "PAYLOAD"]
  return `${head}\n${table(partitions.length > 0 ? ["QUEUE", ...columns] : columns, rows)}`
}

/** Run `leaseq dead list`: one page of dead jobs, oldest death first (merged over partitions). */
export const runDeadList = (io: Io, url: string, flags: DeadListFlags): Effect.Effect<ExitCodeValue, CliFailure> =>
  withRedis(url, (client) =>
    openQueueApi(client, flags.prefix, flags.queue).pipe(
      Effect.flatMap(({ api, partitions }) =>
        api.deadList(flags.offset, flags.count).pipe(Effect.map((r) => ({ ...r, partitions }))),
      ),
      Effect.mapError((e) => toFailure(e, `reading dead jobs of queue ${flags.queue}`)),
    ),
  ).pipe(
    Effect.map(({ total, jobs, partitions }) => {
      if (flags.json) {
        writeJson(io, {
          queue: flags.queue,
          ...(partitions.length > 0 ? { partitions } : {}),
          total,
          offset: flags.offset,
          jobs,
        })
      } else writeText(io, formatDeadList(flags.queue, flags.offset, total, jobs, partitions))
      return ExitCode.ok
    }),
  )

/** Check ids / `--all` / `--yes` before connecting: a usage failure writes nothing. */
export const checkDeadTarget = (action: "retry" | "purge", ids: ReadonlyArray<string>, flags: DeadActFlags): void => {
  if (ids.length > 0 && flags.all === true) throw usage(`dead ${action}: give job ids or --all, not both`)
  if (ids.length === 0 && flags.all !== true)
    throw usage(`dead ${action}: give the ids of the jobs to ${action}, or --all`)
  if (ids.some((id) => id === "")) throw usage(`dead ${action}: a job id must not be empty`)
  if (action === "purge" && flags.yes !== true) {
    const what = flags.all === true ? "every dead job" : plural(ids.length, "dead job")
    throw usage(
      `dead purge deletes ${what} of queue ${flags.queue} for good: add --yes to confirm (nothing was deleted)`,
    )
  }
}

/**
 * Apply retry or purge: the given ids in one call (looked for in every partition), or
 * every dead job in rounds of {@link DEAD_BATCH} per partition.
 */
const act = (api: QueueApi, action: "retry" | "purge", ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const call = action === "retry" ? api.deadRetry : api.deadPurge
    if (ids.length > 0) return yield* call({ ids })
    // Bounded: as many rounds as there were dead jobs when we started, in batches, so jobs
    // dying meanwhile cannot keep the command running forever; a round that changed
    // nothing (dead jobs without a payload cannot be retried) would change nothing again.
    let r = yield* call({ all: DEAD_BATCH })
    let count = r.count
    const rounds = Math.ceil((r.count + r.remaining) / DEAD_BATCH)
    for (let round = 1; round < rounds && r.remaining > 0 && r.count > 0; round++) {
      r = yield* call({ all: DEAD_BATCH })
      count += r.count
    }
    return { count, remaining: r.remaining, missing: [] as ReadonlyArray<string> }
  })

/** The text form of a retry / purge report. */
export const formatDeadAct = (r: DeadActReport): string => {
  const verb = r.action === "retry" ? "put back on wait" : "deleted"
  const label = r.partitions ? `${r.queue} (partitions ${r.partitions.join(", ")})` : r.queue
  return `queue ${label}: ${plural(r.count, "dead job")} ${verb}; ${r.remaining} still dead\n`
}

/**
 * Run `leaseq dead retry` or `leaseq dead purge`. Ids that are not dead are listed on
 * stderr and ignored (exit 0).
 */
export const runDeadAct = (
  io: Io,
  url: string,
  action: "retry" | "purge",
  ids: ReadonlyArray<string>,
  flags: DeadActFlags,
): Effect.Effect<ExitCodeValue, CliFailure> =>
  Effect.try({ try: () => checkDeadTarget(action, ids, flags), catch: (e) => toFailure(e) }).pipe(
    Effect.flatMap(() =>
      withRedis(url, (client) =>
        openQueueApi(client, flags.prefix, flags.queue).pipe(
          Effect.flatMap(({ api, partitions }) =>
            act(api, action, [...new Set(ids)]).pipe(Effect.map((r) => ({ ...r, partitions }))),
          ),
          Effect.mapError((e) => toFailure(e, `dead ${action} in queue ${flags.queue}`)),
        ),
      ),
    ),
    Effect.map(({ partitions, ...r }) => {
      const report: DeadActReport = {
        queue: flags.queue,
        ...(partitions.length > 0 ? { partitions } : {}),
        action,
        ...r,
      }
      if (flags.json) writeJson(io, report)
      else writeText(io, formatDeadAct(report))
      if (r.missing.length > 0) {
        io.err(`leaseq: not dead in queue ${flags.queue}, ignored: ${oneLine(clip(r.missing.join(", "), 300))}\n`)
      }
      return ExitCode.ok
    }),
  )
