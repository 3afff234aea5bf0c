/**
 * `leaseq dead list | retry | purge`: the dead-letter set of one queue. `retry`
 * gives dead jobs a fresh set of attempts; `purge` deletes them for good and asks
 * for `--yes` first. Both take job ids, or `--all` (worked through in bounded batches).
 */
import * as Effect from "effect/Effect"
import type { Commands, DeadJob } from "../Commands.ts"
import { redisError } from "../Outcomes.ts"
import { openQueue, withRedis } from "./Connection.ts"
import type { CommonFlags } from "./Flags.ts"
import {
  type CliFailure,
  clip,
  ExitCode,
  type ExitCodeValue,
  type Io,
  table,
  toFailure,
  usage,
  writeJson,
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

/** The text form of a page of dead jobs. */
export const formatDeadList = (queue: string, offset: number, total: number, jobs: ReadonlyArray<DeadJob>): string => {
  if (total === 0) return `queue ${queue}: no dead jobs\n`
  if (jobs.length === 0) return `queue ${queue}: ${total} dead jobs, none at offset ${offset}\n`
  const head = `queue ${queue}: ${total} dead job${total === 1 ? "" : "s"}, showing ${offset + 1}-${offset + jobs.length} (oldest death first)`
  const rows = jobs.map((j) => [
    j.id,
    new Date(j.diedAt).toISOString(),
    j.failures,
    j.lostLeases,
    clip(errorText(j.error).replace(/\s+/g, " "), 60),
    clip(j.payload ?? "(no payload)", 40),
  ])
  return `${head}\n${table(["ID", "DIED", "FAILURES", "LOST", "ERROR", "PAYLOAD"], rows)}`
}

/** Run `leaseq dead list`: one page of dead jobs, oldest death first. */
export const runDeadList = (io: Io, url: string, flags: DeadListFlags): Effect.Effect<ExitCodeValue, CliFailure> =>
  withRedis(url, (client) =>
    openQueue(client, flags.prefix, flags.queue).pipe(
      Effect.flatMap((c) => c.deadList(flags.offset, flags.count)),
      Effect.mapError((e) => toFailure(e, `reading dead jobs of queue ${flags.queue}`)),
    ),
  ).pipe(
    Effect.map(({ total, jobs }) => {
      if (flags.json) writeJson(io, { queue: flags.queue, total, offset: flags.offset, jobs })
      else io.out(formatDeadList(flags.queue, flags.offset, total, jobs))
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
    const what = flags.all === true ? "every dead job" : `${ids.length} dead job${ids.length === 1 ? "" : "s"}`
    throw usage(
      `dead purge deletes ${what} of queue ${flags.queue} for good: add --yes to confirm (nothing was deleted)`,
    )
  }
}

/** Apply retry or purge: the given ids in one call, or every dead job in batches of {@link DEAD_BATCH}. */
const act = (c: Commands, action: "retry" | "purge", ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const call = action === "retry" ? c.deadRetry : c.deadPurge
    if (ids.length > 0) {
      const r = yield* call({ ids })
      return { count: r.count, remaining: r.remaining, missing: r.missing }
    }
    // Bounded: as many batches as there were dead jobs when we started, so jobs
    // dying meanwhile cannot keep the command running forever.
    const total = Number(
      yield* Effect.tryPromise({
        try: () => c.client.command("ZCARD", [c.keys.dead]),
        catch: (e) => redisError("ZCARD", e),
      }),
    )
    let count = 0
    let remaining = total
    for (let done = 0; done < total && remaining > 0; done += DEAD_BATCH) {
      const r = yield* call({ all: Math.min(DEAD_BATCH, total - done) })
      count += r.count
      remaining = r.remaining
    }
    return { count, remaining, missing: [] as ReadonlyArray<string> }
  })

/** The text form of a retry / purge report. */
export const formatDeadAct = (r: DeadActReport): string => {
  const verb = r.action === "retry" ? "put back on wait" : "deleted"
  return `queue ${r.queue}: ${r.count} dead job${r.count === 1 ? "" : "s"} ${verb}; ${r.remaining} still dead\n`
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
        openQueue(client, flags.prefix, flags.queue).pipe(
          Effect.flatMap((c) => act(c, action, [...new Set(ids)])),
          Effect.mapError((e) => toFailure(e, `dead ${action} in queue ${flags.queue}`)),
        ),
      ),
    ),
    Effect.map((r) => {
      const report: DeadActReport = { queue: flags.queue, action, ...r }
      if (flags.json) writeJson(io, report)
      else io.out(formatDeadAct(report))
      if (r.missing.length > 0) {
        io.err(`leaseq: not dead in queue ${flags.queue}, ignored: ${clip(r.missing.join(", "), 300)}\n`)
      }
      return ExitCode.ok
    }),
  )
