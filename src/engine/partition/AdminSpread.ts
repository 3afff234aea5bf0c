/**
 * How a partitioned queue's stats, sweeps, dead letters and verify spread over its partitions
 * ({@link ADMIN_SPREAD}, applied by `FanOut.ts` as the capabilities' tables are): the merges
 * of their answers. Its adds are `Producer.ts`'s own (the hot path, routed by a pick).
 */
import * as Effect from "effect/Effect"
import { SWEEP_DEAD_LISTED, type SweepTotals } from "../admin/Sweeper.ts"
import type { DeadJob, QueueStats } from "../calls/Commands.ts"
import { type DeadHead, lookups } from "../calls/Lookups.ts"
import { partitionName } from "../model/QueueName.ts"
import type { DeadChange, DeadTarget, ListedDeadJob, QueueApi } from "../queue/QueueApi.ts"
import { readOnly } from "../queue/QueueCore.ts"
import { none, type Partitions, type SpreadTable } from "../queue/Spread.ts"
import { rebalance } from "./FlowSplit.ts"

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
const mergedDeadList = (parts: Partitions["cores"], offset: number, count: number) =>
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

/** Dead jobs retried or purged in every partition: counts summed; an id is missing when no partition had it dead. */
const mergeDeadChanges = (each: ReadonlyArray<DeadChange>, target: DeadTarget): DeadChange => {
  const missing = each.map((r) => new Set(r.missing))
  return {
    count: each.reduce((n, r) => n + r.count, 0),
    remaining: each.reduce((n, r) => n + r.remaining, 0),
    missing: "ids" in target ? [...new Set(target.ids)].filter((id) => missing.every((m) => m.has(id))) : [],
  }
}

/** The calls of a queue beside its capabilities and adds, which the partitioned core spreads by {@link ADMIN_SPREAD}. */
export type AdminCalls = Pick<
  QueueApi,
  "ensureOpen" | "stats" | "workers" | "sweep" | "deadList" | "deadRetry" | "deadPurge" | "verify"
>

/**
 * How stats, sweeps, the dead letters and verify spread over the partitions: every partition,
 * merged (stats summed with each partition's own, sweeps summed then the split limits
 * rebalanced to where jobs wait, a dead job missing when no partition had it dead, verify's
 * lines named by partition); the dead list merged by time of death ({@link mergedDeadList}).
 */
export const ADMIN_SPREAD: SpreadTable<AdminCalls> = {
  ensureOpen: { over: "every", merge: none },
  stats: {
    over: "every",
    merge: (each, _, at): PartitionedStats => ({ ...each.reduce(addStats), queue: at.name, partitions: each }),
  },
  workers: { over: "every", merge: (each) => each.flat() },
  sweep: {
    over: "custom",
    run: (each, at) => (options) =>
      Effect.forEach(each, (p) => p.sweep(options), { concurrency: "unbounded" }).pipe(
        Effect.map((all) => sumSweeps(at.name, all)),
        // the split limits follow where jobs wait (one small call when none is set)
        Effect.tap(() =>
          rebalance(
            at.client,
            at.cores.map((p) => p.keys),
          ),
        ),
      ),
  },
  deadList: {
    over: "custom",
    run: (_, at) => (offset, count) => at.open(readOnly(mergedDeadList(at.cores, offset, count))),
  },
  deadRetry: { over: "every", merge: (each, [target]) => mergeDeadChanges(each, target) },
  deadPurge: { over: "every", merge: (each, [target]) => mergeDeadChanges(each, target) },
  verify: {
    over: "every",
    merge: (each, [maxLines], at) => ({
      violations: each.reduce((n, r) => n + r.violations, 0),
      jobs: each.reduce((n, r) => n + r.jobs, 0),
      lines: each.flatMap((r, i) => r.lines.map((l) => `[${partitionName(at.name, i)}] ${l}`)).slice(0, maxLines),
    }),
  },
}
