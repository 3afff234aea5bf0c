/**
 * A partitioned queue's producer and admin side: one logical queue stored as N
 * sub-queues `<queue>~0 … <queue>~N-1`, each with its own hash tag, so on a Redis
 * Cluster a hot queue spreads over several masters.
 *
 * - `add` picks a partition: by the job's dedupe key when it has one (so duplicates
 *   still meet in the same partition), else round robin.
 * - `addBulk` validates every job first, then sends one call per partition it touches
 *   (atomic per partition, not across partitions).
 * - stats, sweeps, dead-letter calls and verify cover every partition.
 *
 * FIFO holds within a partition, not across the queue.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { RedisClient } from "../../redis/Client.ts"
import { SWEEP_DEAD_LISTED, type SweepPassOptions, type SweepTotals } from "../admin/Sweeper.ts"
import type { DeadJob, QueueStats } from "../calls/Commands.ts"
import { partitionName } from "../model/Keys.ts"
import { checkJobOptions } from "../queue/Job.ts"
import {
  checkBulkSize,
  type EncodedJob,
  makeQueueCore,
  type QueueCore,
  type QueueSettings,
  readOnly,
} from "../queue/QueueCore.ts"

/** Stats of a partitioned queue: the sums, and each partition's own. */
export interface PartitionedStats extends QueueStats {
  /** One entry per partition, in index order (`queue` is the sub-queue name `<name>~<i>`). */
  readonly partitions: ReadonlyArray<QueueStats>
}

/** Two queues' stats added up (counts and counters summed; the oldest waiting age is the larger; paused if either is). */
export const addStats = (a: QueueStats, b: QueueStats): QueueStats => {
  const counters = { ...a.counters }
  for (const k of Object.keys(counters) as Array<keyof QueueStats["counters"]>) counters[k] += b.counters[k]
  return {
    queue: a.queue,
    waiting: a.waiting + b.waiting,
    active: a.active + b.active,
    expired: a.expired + b.expired,
    delayed: a.delayed + b.delayed,
    dead: a.dead + b.dead,
    retained: a.retained + b.retained,
    // a worker of a partitioned queue registers in every partition it serves
    workers: Math.max(a.workers, b.workers),
    oldestWaitingAgeMs: Math.max(a.oldestWaitingAgeMs, b.oldestWaitingAgeMs),
    layout: a.layout ?? b.layout,
    paused: a.paused || b.paused,
    counters,
  }
}

/** FNV-1a (32 bit) of a string's UTF-16 code units: stable across processes and versions. */
const fnv1a = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}

/** The partition a job with this dedupe key always goes to, out of `partitions`. */
export const partitionOfDedupeKey = (dedupeKey: string, partitions: number): number => fnv1a(dedupeKey) % partitions

/**
 * Add many jobs over the partitions: every job validated first (a bad one adds nothing
 * anywhere), then one addBulk per partition touched; ids come back in the list's order.
 */
const bulkAdd = (
  parts: ReadonlyArray<QueueCore>,
  settings: QueueSettings,
  pick: (options: EncodedJob["options"]) => number,
  jobs: ReadonlyArray<EncodedJob>,
) =>
  Effect.gen(function* () {
    yield* checkBulkSize(jobs.length)
    for (const [i, j] of jobs.entries()) {
      const options = checkJobOptions(`jobs[${i}].options`, j.options, settings.defaultJobOptions)
      if (Result.isFailure(options)) return yield* Effect.fail(options.failure)
    }
    const groups = new Map<number, Array<{ readonly at: number; readonly job: EncodedJob }>>()
    jobs.forEach((job, at) => {
      const p = pick(job.options)
      groups.set(p, [...(groups.get(p) ?? []), { at, job }])
    })
    const ids: string[] = new Array(jobs.length)
    yield* Effect.forEach(
      [...groups],
      ([p, group]) =>
        parts[p]!.addBulk(group.map((g) => g.job)).pipe(
          Effect.tap((got) =>
            Effect.sync(() => {
              group.forEach((g, k) => {
                ids[g.at] = got[k]!
              })
            }),
          ),
        ),
      { concurrency: "unbounded", discard: true },
    )
    return ids
  })

/** The partitions' sweep totals as one. */
const sumSweeps = (name: string, each: ReadonlyArray<SweepTotals>): SweepTotals => {
  const next = Math.min(...each.map((t) => (t.nextDeadlineMs < 0 ? Infinity : t.nextDeadlineMs)))
  return {
    queue: name,
    reclaimed: each.reduce((n, t) => n + t.reclaimed, 0),
    dead: each.reduce((n, t) => n + t.dead, 0),
    promoted: each.reduce((n, t) => n + t.promoted, 0),
    dedupeDropped: each.reduce((n, t) => n + t.dedupeDropped, 0),
    trimmed: each.reduce((n, t) => n + t.trimmed, 0),
    deadJobs: each.flatMap((t) => t.deadJobs).slice(0, SWEEP_DEAD_LISTED),
    calls: each.reduce((n, t) => n + t.calls, 0),
    incomplete: each.some((t) => t.incomplete),
    nextDeadlineMs: Number.isFinite(next) ? next : -1,
  }
}

/** Make the partitioned queue core for `name` with `partitions` sub-queues on `client`. */
export const makePartitionedCore = (client: RedisClient, name: string, settings: QueueSettings, partitions: number) => {
  const parts: ReadonlyArray<QueueCore> = Array.from({ length: partitions }, (_, i) =>
    makeQueueCore(client, partitionName(name, i), settings),
  )
  let next = Math.floor(Math.random() * partitions)
  /** Where a job goes: its dedupe key's partition, else the next one in turn. */
  const pick = (options: EncodedJob["options"]): number => {
    const key = (options as { dedupeKey?: unknown } | undefined)?.dedupeKey ?? settings.defaultJobOptions.dedupeKey
    if (typeof key === "string" && key.length > 0) return partitionOfDedupeKey(key, partitions)
    next = (next + 1) % partitions
    return next
  }
  const all = <A, E>(f: (p: QueueCore, i: number) => Effect.Effect<A, E>) =>
    Effect.forEach(parts, f, { concurrency: "unbounded" })

  return {
    name,
    partitions,
    parts,
    add: (job: EncodedJob) => Effect.suspend(() => parts[pick(job.options)]!.add(job)),
    addBulk: (jobs: ReadonlyArray<EncodedJob>) => bulkAdd(parts, settings, pick, jobs),
    stats: all((p) => p.stats).pipe(
      Effect.map((each): PartitionedStats => ({ ...each.reduce(addStats), queue: name, partitions: each })),
    ),
    sweep: (options: SweepPassOptions = {}) =>
      all((p) => p.sweep(options)).pipe(Effect.map((each) => sumSweeps(name, each))),
    /** The live workers of every partition (a worker of a partitioned queue registers once per partition). */
    workers: all((p) => p.workers).pipe(Effect.map((each) => each.flat())),
    /** Dead jobs of every partition, oldest death first: reads `offset + count` from each, then merges. */
    deadList: (offset: number, count: number) =>
      all((p) => p.calls.deadList(0, offset + count)).pipe(
        Effect.map((each) => {
          const jobs: DeadJob[] = each
            .flatMap((r) => r.jobs)
            .sort((a, b) => a.diedAt - b.diedAt || (a.id < b.id ? -1 : 1))
          return { total: each.reduce((n, r) => n + r.total, 0), jobs: jobs.slice(offset, offset + count) }
        }),
      ),
    /** Retry dead jobs by id, wherever they are: every partition is asked. */
    deadRetry: (ids: ReadonlyArray<string>) =>
      all((p) => p.calls.deadRetry({ ids })).pipe(Effect.map((each) => each.reduce((n, r) => n + r.count, 0))),
    /** Purge dead jobs by id, wherever they are. */
    deadPurge: (ids: ReadonlyArray<string>) =>
      all((p) => p.calls.deadPurge({ ids })).pipe(Effect.map((each) => each.reduce((n, r) => n + r.count, 0))),
    /** Every partition's invariants; lines are prefixed with the sub-queue name. */
    verify: (maxLines: number, pageSize?: number) =>
      all((p) => readOnly(p.calls.verify(maxLines, pageSize))).pipe(
        Effect.map((each) => ({
          violations: each.reduce((n, r) => n + r.violations, 0),
          jobs: each.reduce((n, r) => n + r.jobs, 0),
          lines: each.flatMap((r, i) => r.lines.map((l) => `[${partitionName(name, i)}] ${l}`)).slice(0, maxLines),
        })),
      ),
    markClosed: () => {
      for (const p of parts) p.markClosed()
    },
    isClosed: () => parts[0]!.isClosed(),
  }
}

/** The partitioned queue core. */
export type PartitionedCore = ReturnType<typeof makePartitionedCore>
