/**
 * A partitioned queue's producer and admin side: one logical queue stored as N
 * sub-queues `<queue>~0 … <queue>~N-1`, each with its own hash tag, so on a Redis
 * Cluster a hot queue spreads over several masters.
 *
 * - `add` picks a partition: by the job's custom id, else its dedupe key, when it has
 *   one (so duplicates still meet in the same partition), else its group's (so a group's
 *   limits hold across the queue), else round robin.
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
import type { DeadJob, QueueStats, ScriptFailure } from "../calls/Commands.ts"
import { type DeadHead, lookups } from "../calls/Lookups.ts"
import type { QueueClosed } from "../model/Errors.ts"
import { partitionName } from "../model/QueueName.ts"
import { CAPABILITIES, type CapabilityName } from "../queue/Capabilities.ts"
import { partitionedDependencies } from "../queue/Dependencies.ts"
import { checkJobOptions } from "../queue/Job.ts"
import type { DeadChange, DeadTarget, ListedDeadJob, QueueApi } from "../queue/QueueApi.ts"
import {
  checkBulkSize,
  type EncodedJob,
  makeQueueCore,
  type QueueCore,
  type QueueSettings,
  readOnly,
  unlessClosed,
} from "../queue/QueueCore.ts"
import type { Partitions } from "../queue/Spread.ts"
import { fanOut } from "./FanOut.ts"
import { rebalance, setSplitLimit } from "./FlowSplit.ts"

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
    waitingChildren: a.waitingChildren + b.waitingChildren,
    dead: a.dead + b.dead,
    retained: a.retained + b.retained,
    // a worker of a partitioned queue registers in every partition it serves
    workers: Math.max(a.workers, b.workers),
    oldestWaitingAgeMs: Math.max(a.oldestWaitingAgeMs, b.oldestWaitingAgeMs),
    layout: a.layout ?? b.layout,
    paused: a.paused || b.paused,
    // a group lives in one partition (see pick)
    groups: a.groups + b.groups,
    busiestGroups: [...a.busiestGroups, ...b.busiestGroups].sort((x, y) => y.waiting - x.waiting).slice(0, 5),
    // every partition has its own limits (set on each alike); the longest hold shows
    limits: { ...a.limits, heldMs: Math.max(a.limits.heldMs, b.limits.heldMs) },
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
  const soonest = (ms: (t: SweepTotals) => number) => {
    const m = Math.min(...each.map((t) => (ms(t) < 0 ? Infinity : ms(t))))
    return Number.isFinite(m) ? m : -1
  }
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
    nextDeadlineMs: soonest((t) => t.nextDeadlineMs),
    scheduled: each.reduce((n, t) => n + t.scheduled, 0),
    nextTickMs: soonest((t) => t.nextTickMs),
  }
}

const byDeath = (a: DeadHead, b: DeadHead) => a.diedAt - b.diedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/**
 * One page of dead jobs over the partitions, oldest death first (then by id, the order
 * within each partition's ZSET). The page is placed from ids and times of death only
 * (`offset + count` of each partition, no payloads); then each partition's share of it,
 * a run of consecutive ranks, is read with dead-list; the total is every partition's
 * count. Not atomic across partitions: a job dying or retried meanwhile may shift it.
 */
const mergedDeadList = (parts: ReadonlyArray<QueueCore>, offset: number, count: number) =>
  Effect.gen(function* () {
    const look = parts.map((p) => lookups(p.calls.client, p.keys))
    const heads = yield* Effect.forEach(look, (l) => l.deadHeads(0, offset + count), { concurrency: "unbounded" })
    const placed = heads.flatMap((each, p) => each.map((h, rank) => ({ ...h, p, rank })))
    const page = placed.sort(byDeath).slice(offset, offset + count)
    const shares = yield* Effect.forEach(
      parts,
      (part, p) => {
        const ranks = page.filter((j) => j.p === p).map((j) => j.rank)
        if (ranks.length === 0) return Effect.map(look[p]!.deadCount, (total) => ({ total, jobs: [] as DeadJob[] }))
        return readOnly(part.calls.deadList(Math.min(...ranks), ranks.length))
      },
      { concurrency: "unbounded" },
    )
    const jobs = shares.flatMap((r, p) => r.jobs.map((j): ListedDeadJob => ({ ...j, queue: parts[p]!.keys.queue })))
    return { total: shares.reduce((n, r) => n + r.total, 0), jobs: jobs.sort(byDeath).slice(0, count) }
  })

/** Retry or purge dead jobs in every partition: counts summed; an id is missing when no partition had it dead. */
const overParts =
  (parts: ReadonlyArray<QueueCore>, call: (p: QueueCore) => QueueApi["deadRetry"]) =>
  (target: DeadTarget): Effect.Effect<DeadChange, ScriptFailure | QueueClosed> =>
    Effect.forEach(parts, (p) => call(p)(target), { concurrency: "unbounded" }).pipe(
      Effect.map((each) => {
        const missing = each.map((r) => new Set(r.missing))
        return {
          count: each.reduce((n, r) => n + r.count, 0),
          remaining: each.reduce((n, r) => n + r.remaining, 0),
          missing: "ids" in target ? [...new Set(target.ids)].filter((id) => missing.every((m) => m.has(id))) : [],
        }
      }),
    )

/** Every capability of the table over the partitions' own, as each one's spread table says. */
const fanOutCapabilities = (parts: ReadonlyArray<QueueCore>, at: Partitions): Pick<QueueApi, CapabilityName> => ({
  control: fanOut(
    CAPABILITIES.control.spread,
    parts.map((p) => p.control),
    at,
  ),
  ops: fanOut(
    CAPABILITIES.ops.spread,
    parts.map((p) => p.ops),
    at,
  ),
  groupControl: fanOut(
    CAPABILITIES.groupControl.spread,
    parts.map((p) => p.groupControl),
    at,
  ),
  manual: fanOut(
    CAPABILITIES.manual.spread,
    parts.map((p) => p.manual),
    at,
  ),
})

/** A partitioned queue core: the {@link QueueApi} over N sub-queues, with each one's core. */
export interface PartitionedCore extends QueueApi {
  readonly stats: Effect.Effect<PartitionedStats, QueueClosed | ScriptFailure>
  /** The partitions' cores, in index order. */
  readonly parts: ReadonlyArray<QueueCore>
}

/** Make the partitioned queue core for `name` with `partitions` sub-queues on `client`. */
export const makePartitionedCore = (
  client: RedisClient,
  name: string,
  settings: QueueSettings,
  partitions: number,
): PartitionedCore => {
  const parts: ReadonlyArray<QueueCore> = Array.from({ length: partitions }, (_, i) =>
    makeQueueCore(client, partitionName(name, i), settings),
  )
  let next = Math.floor(Math.random() * partitions)
  /** Where a job goes: its custom id's partition, else its dedupe key's, else the next one in turn. */
  const pick = (options: EncodedJob["options"]): number => {
    const id = (options as { id?: unknown } | undefined)?.id
    if (typeof id === "string" && id.length > 0) return partitionOfDedupeKey(id, partitions)
    const key = (options as { dedupeKey?: unknown } | undefined)?.dedupeKey ?? settings.defaultJobOptions.dedupeKey
    if (typeof key === "string" && key.length > 0) return partitionOfDedupeKey(key, partitions)
    // a group's jobs meet in one partition, so its limits hold across the queue
    const group = (options as { group?: unknown } | undefined)?.group ?? settings.defaultJobOptions.group
    if (typeof group === "string" && group.length > 0) return partitionOfDedupeKey(group, partitions)
    next = (next + 1) % partitions
    return next
  }
  const all = <A, E>(f: (p: QueueCore, i: number) => Effect.Effect<A, E>) =>
    Effect.forEach(parts, f, { concurrency: "unbounded" })
  const keys = parts.map((p) => p.keys)
  const open = unlessClosed(name, () => parts[0]!.isClosed())
  const at: Partitions = {
    name,
    cores: parts,
    partitionOf: (key) => partitionOfDedupeKey(key, partitions),
    setLimit: (change) => open(setSplitLimit(client, keys, change)),
    open,
  }

  return {
    name,
    partitions,
    parts,
    keysByPartition: keys,
    ensureOpen: all((p) => p.ensureOpen).pipe(Effect.asVoid),
    add: (job: EncodedJob) => Effect.suspend(() => parts[pick(job.options)]!.add(job)),
    addBulk: (jobs: ReadonlyArray<EncodedJob>) => bulkAdd(parts, settings, pick, jobs),
    stats: all((p) => p.stats).pipe(
      Effect.map((each): PartitionedStats => ({ ...each.reduce(addStats), queue: name, partitions: each })),
    ),
    sweep: (options: SweepPassOptions = {}) =>
      all((p) => p.sweep(options)).pipe(
        Effect.map((each) => sumSweeps(name, each)),
        // the split limits follow where jobs wait (one small call when none is set)
        Effect.tap(() => rebalance(client, keys)),
      ),
    workers: all((p) => p.workers).pipe(Effect.map((each) => each.flat())),
    deadList: (offset: number, count: number) => open(readOnly(mergedDeadList(parts, offset, count))),
    deadRetry: overParts(parts, (p) => p.deadRetry),
    deadPurge: overParts(parts, (p) => p.deadPurge),
    verify: (maxLines: number, pageSize?: number) =>
      all((p) => p.verify(maxLines, pageSize)).pipe(
        Effect.map((each) => ({
          violations: each.reduce((n, r) => n + r.violations, 0),
          jobs: each.reduce((n, r) => n + r.jobs, 0),
          lines: each.flatMap((r, i) => r.lines.map((l) => `[${partitionName(name, i)}] ${l}`)).slice(0, maxLines),
        })),
      ),
    ...fanOutCapabilities(parts, at),
    // one place for a queue's schedules: partition 0 holds them and gets their jobs
    schedules: parts[0]!.schedules,
    dependencies: partitionedDependencies(name),
    markClosed: () => {
      for (const p of parts) p.markClosed()
    },
    isClosed: () => parts[0]!.isClosed(),
  }
}
