/**
 * `leaseq dead list | retry | purge`: the dead-letter set of one queue. `retry`
 * gives dead jobs a fresh set of attempts; `purge` deletes them for good and asks
 * for `--yes` first. Both take job ids, or `--all` (worked through in bounded batches).
 *
 * A partitioned queue (`--queue orders` standing for `orders~0`, `orders~1`, …) is
 * covered whole: the list merges every partition's dead jobs by time of death, and
 * retry / purge look for each id in every partition.
 */
import * as Effect from "effect/Effect"
import type { Commands, DeadJob } from "../engine/calls/Commands.ts"
import { redisError } from "../engine/calls/Replies.ts"
import type { RedisClient } from "../redis/Client.ts"
import { openQueue, targetQueues, withRedis } from "./Connection.ts"
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

/** A dead job and the queue (or partition) it is in. */
export interface DeadJobIn extends DeadJob {
  readonly queue: string
}

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

/**
 * The queues `--queue` stands for, each opened: the queue itself, or, when no queue
 * has that name, the partitions `<name>~0`, `<name>~1`, … of a partitioned queue
 * (found as `stats` and `sweep` find them). `partitions` is empty for a plain queue.
 */
const openTargets = (client: RedisClient, flags: DeadFlags) =>
  Effect.gen(function* () {
    const names = yield* targetQueues(client, flags.prefix, [flags.queue])
    const queues = yield* Effect.forEach(names, (q) => openQueue(client, flags.prefix, q))
    return { queues, partitions: names.length === 1 && names[0] === flags.queue ? [] : names }
  })

const byDeath = (
  a: { readonly diedAt: number; readonly id: string },
  b: { readonly diedAt: number; readonly id: string },
) => a.diedAt - b.diedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** A Redis command of the CLI, its failure a RedisError. */
const command = (c: Commands, name: string, args: ReadonlyArray<string | number>) =>
  Effect.tryPromise({ try: () => c.client.command(name, args), catch: (e) => redisError(name, e) })

/**
 * One page of dead jobs, oldest death first. For several partitions: merged by time
 * of death (then id, the order within each partition's ZSET). The page is placed from
 * ids and times of death only (ZRANGE … WITHSCORES, no payloads), then each partition's
 * share of it is read with dead-list; the total is each partition's ZCARD.
 */
const listMerged = (queues: ReadonlyArray<Commands>, offset: number, count: number) =>
  Effect.gen(function* () {
    if (queues.length === 1) return yield* queues[0]!.deadList(offset, count)
    const heads = yield* Effect.forEach(queues, (c) =>
      command(c, "ZRANGE", [c.keys.dead, 0, offset + count - 1, "WITHSCORES"]),
    )
    const placed = heads.flatMap((reply, p) => {
      // [id, score, …], or [[id, score], …] when the connection speaks RESP3
      const flat = (reply as unknown[]).flat() as Array<string | number>
      const out: Array<{ p: number; rank: number; id: string; diedAt: number }> = []
      for (let i = 0; i + 1 < flat.length; i += 2)
        out.push({ p, rank: i / 2, id: String(flat[i]), diedAt: Number(flat[i + 1]) })
      return out
    })
    const page = placed.sort(byDeath).slice(offset, offset + count)
    let total = 0
    const jobs: DeadJobIn[] = []
    for (const [p, c] of queues.entries()) {
      const ranks = page.filter((j) => j.p === p).map((j) => j.rank)
      if (ranks.length === 0) {
        total += Number(yield* command(c, "ZCARD", [c.keys.dead]))
        continue
      }
      const r = yield* c.deadList(Math.min(...ranks), ranks.length)
      total += r.total
      jobs.push(...r.jobs.map((j) => ({ ...j, queue: c.keys.queue })))
    }
    return { total, jobs: jobs.sort(byDeath).slice(0, count) }
  })

/** Run `leaseq dead list`: one page of dead jobs, oldest death first (merged over partitions). */
export const runDeadList = (io: Io, url: string, flags: DeadListFlags): Effect.Effect<ExitCodeValue, CliFailure> =>
  withRedis(url, (client) =>
    openTargets(client, flags).pipe(
      Effect.flatMap(({ queues, partitions }) =>
        listMerged(queues, flags.offset, flags.count).pipe(Effect.map((r) => ({ ...r, partitions }))),
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

/** Apply retry or purge to one queue: the given ids in one call, or every dead job in batches of {@link DEAD_BATCH}. */
const act = (c: Commands, action: "retry" | "purge", ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const call = action === "retry" ? c.deadRetry : c.deadPurge
    if (ids.length > 0) {
      const r = yield* call({ ids })
      return { count: r.count, remaining: r.remaining, missing: r.missing }
    }
    // Bounded: as many batches as there were dead jobs when we started, so jobs
    // dying meanwhile cannot keep the command running forever.
    const total = Number(yield* command(c, "ZCARD", [c.keys.dead]))
    let count = 0
    let remaining = total
    for (let done = 0; done < total && remaining > 0; done += DEAD_BATCH) {
      const r = yield* call({ all: Math.min(DEAD_BATCH, total - done) })
      count += r.count
      remaining = r.remaining
    }
    return { count, remaining, missing: [] as ReadonlyArray<string> }
  })

/** Apply retry or purge to every queue in turn; an id is missing when no queue had it dead. */
const actOnAll = (queues: ReadonlyArray<Commands>, action: "retry" | "purge", ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    let count = 0
    let remaining = 0
    let missing: ReadonlyArray<string> = ids
    for (const c of queues) {
      const r = yield* act(c, action, ids)
      count += r.count
      remaining += r.remaining
      missing = missing.filter((id) => r.missing.includes(id))
    }
    return { count, remaining, missing }
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
        openTargets(client, flags).pipe(
          Effect.flatMap(({ queues, partitions }) =>
            actOnAll(queues, action, [...new Set(ids)]).pipe(Effect.map((r) => ({ ...r, partitions }))),
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
