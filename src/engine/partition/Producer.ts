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
import type { ScriptFailure } from "../calls/Commands.ts"
import type { QueueClosed } from "../model/Errors.ts"
import { partitionName } from "../model/QueueName.ts"
import { type CapabilityName, perCapability } from "../queue/Capabilities.ts"
import { partitionedDependencies } from "../queue/Dependencies.ts"
import { checkJobOptions } from "../queue/Job.ts"
import type { QueueApi } from "../queue/QueueApi.ts"
import {
  checkBulkSize,
  type EncodedJob,
  makeQueueCore,
  type QueueCore,
  type QueueSettings,
  unlessClosed,
} from "../queue/QueueCore.ts"
import type { Partitions } from "../queue/Spread.ts"
import { ADMIN_SPREAD, type AdminCalls, type PartitionedStats } from "./AdminSpread.ts"
import { fanOut } from "./FanOut.ts"
import { setSplitLimit } from "./FlowSplit.ts"

export { addStats, type PartitionedStats } from "./AdminSpread.ts"

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

/** Every capability of the table over the partitions' own, as each one's spread table says. */
const fanOutCapabilities = (parts: ReadonlyArray<QueueCore>, at: Partitions): Pick<QueueApi, CapabilityName> =>
  perCapability((name, row) =>
    fanOut(
      row.spread,
      parts.map((p) => p[name]),
      at,
    ),
  )

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
  const keys = parts.map((p) => p.keys)
  const open = unlessClosed(name, () => parts[0]!.isClosed())
  const at: Partitions = {
    name,
    client,
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
    add: (job: EncodedJob) => Effect.suspend(() => parts[pick(job.options)]!.add(job)),
    addBulk: (jobs: ReadonlyArray<EncodedJob>) => bulkAdd(parts, settings, pick, jobs),
    ...(fanOut(ADMIN_SPREAD, parts, at) as AdminCalls & Pick<PartitionedCore, "stats">),
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
