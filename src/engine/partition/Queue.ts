/**
 * The queue both faces adapt: one ordinary queue core, or a partitioned one
 * (`partitions` > 1), with the opt-in `durability` applied to adds. Each call picks
 * the right core, so a face never branches on partitions itself.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { RedisClient } from "../../redis/Client.ts"
import type { SweepPassOptions } from "../admin/Sweeper.ts"
import type { DeadJob, QueueStats, ScriptFailure } from "../calls/Commands.ts"
import type { QueueClosed, RedisError } from "../model/Errors.ts"
import { MAX_PARTITIONS } from "../model/Keys.ts"
import { type Checked, checkIntegerOr, orThrow } from "../model/Validate.ts"
import { type JobControl, makeJobControl, makePartitionedControl } from "../queue/JobControl.ts"
import { type EncodedJob, makeQueueCore, type QueueCore, type QueueSettings, readOnly } from "../queue/QueueCore.ts"
import {
  checkDurability,
  type Durability,
  type DurabilitySettings,
  surfaceNotReplicated,
  withDurability,
} from "./Durability.ts"
import { makePartitionedCore, type PartitionedCore, type PartitionedStats, partitionOfDedupeKey } from "./Producer.ts"

/** The options a queue of either face takes on top of {@link QueueSettings}. */
export interface LayoutInput {
  /**
   * Store the queue as this many partitions (sub-queues `<name>~0 … ~N-1`, each its own
   * hash slot) so one hot queue spreads over a cluster's masters. Jobs go round robin, or
   * by dedupe key. Workers must serve the same number. Default 1: an ordinary queue.
   */
  readonly partitions?: number | undefined
  /**
   * Succeed an add only once this many replicas have the jobs (Redis `WAIT` on the node
   * that took them); otherwise fail with `NotReplicated` (the jobs were written but are
   * not yet replicated). Default: off (acknowledged by the master alone).
   */
  readonly durability?: Durability | undefined
}

export type { DurabilitySettings }

/** Validated {@link LayoutInput}. */
export interface Layout {
  readonly partitions: number
  readonly durability: DurabilitySettings | undefined
}

/** The option names of {@link LayoutInput}, for a face's list of known keys. */
export const LAYOUT_KEYS = ["partitions", "durability"] as const

/** Check `partitions` (1 – {@link MAX_PARTITIONS}, default 1) and `durability` (default off), answering `InvalidOptions` naming the field. */
export const checkLayout = (options: LayoutInput): Checked<Layout> => {
  const partitions = checkIntegerOr("partitions", options.partitions, 1, { min: 1, max: MAX_PARTITIONS })
  if (Result.isFailure(partitions)) return Result.fail(partitions.failure)
  const durability = checkDurability(options.durability)
  if (Result.isFailure(durability)) return Result.fail(durability.failure)
  return Result.succeed({ partitions: partitions.success, durability: durability.success })
}

/** {@link checkLayout}, throwing its error: for the Promise face's constructors, whose contract is to throw. */
export const resolveLayout = (options: LayoutInput): Layout => orThrow(checkLayout(options))

/** Stats of a queue: for a partitioned one, the sums, with each partition's own in `partitions`. */
export type AnyQueueStats = QueueStats & { readonly partitions?: PartitionedStats["partitions"] }

/**
 * Make the queue `name` on `client`: an ordinary queue core, or a partitioned one when
 * `layout.partitions` > 1. With `layout.durability`, adds wait for replicas and fail with
 * `NotReplicated` (as itself, not wrapped) when too few acknowledged in time; the add and
 * its `WAIT` go on `durableVia` (default `client`): give a connection of its own when
 * workers share `client`, so their heartbeats never queue behind a `WAIT`.
 */
export const makeQueue = (
  client: RedisClient,
  name: string,
  settings: QueueSettings,
  layout: Layout,
  durableVia: RedisClient = client,
) => {
  const durable = layout.durability ? withDurability(client, layout.durability, ["add"], durableVia) : client
  const core: QueueCore = makeQueueCore(durable, name, settings)
  const partitioned: PartitionedCore | undefined =
    layout.partitions > 1 ? makePartitionedCore(durable, name, settings, layout.partitions) : undefined
  const stats: Effect.Effect<AnyQueueStats, QueueClosed | ScriptFailure> = partitioned?.stats ?? core.stats
  const control: JobControl = partitioned
    ? makePartitionedControl(partitioned.parts, (key) => partitionOfDedupeKey(key, layout.partitions))
    : makeJobControl(core)
  return {
    name,
    ...layout,
    /** The ordinary core (partition-less queue); its `calls` and `commands` address `name` itself. */
    core,
    partitioned,
    /** Check the queue's (or every partition's) layout and key types, once; fails with QueueClosed once closed. */
    ensureOpen: partitioned
      ? Effect.forEach(partitioned.parts, (p) => p.ensureOpen, { concurrency: "unbounded", discard: true })
      : core.ensureOpen,
    /** Add one job (see `QueueCore.add`; partitioned: by dedupe key, else round robin). */
    add: (job: EncodedJob) => surfaceNotReplicated(Effect.suspend(() => (partitioned ?? core).add(job))),
    /** Add many jobs, validated first (see `QueueCore.addBulk`; partitioned: one call per partition touched). */
    addBulk: (jobs: ReadonlyArray<EncodedJob>) =>
      surfaceNotReplicated(Effect.suspend(() => (partitioned ?? core).addBulk(jobs))),
    stats,
    /** Look up and cancel jobs, pause and resume, free dedupe keys (every partition; see `JobControl`). */
    control,
    /** The live workers (of every partition; see `QueueCore.workers`). */
    workers: partitioned?.workers ?? core.workers,
    /** One bounded sweep pass (of every partition). */
    sweep: (options: SweepPassOptions = {}) => Effect.suspend(() => (partitioned ?? core).sweep(options)),
    /** A page of dead jobs, oldest death first (merged over partitions). */
    deadList: (offset: number, count: number) =>
      Effect.suspend(() =>
        readOnly<{ total: number; jobs: DeadJob[] }, RedisError, never>(
          partitioned?.deadList(offset, count) ?? core.calls.deadList(offset, count),
        ),
      ),
    /** Retry dead jobs by id (wherever they are); succeeds with how many were retried. */
    deadRetry: (ids: ReadonlyArray<string>) =>
      partitioned ? partitioned.deadRetry(ids) : core.calls.deadRetry({ ids }).pipe(Effect.map((r) => r.count)),
    /** Purge dead jobs by id (wherever they are); succeeds with how many were purged. */
    deadPurge: (ids: ReadonlyArray<string>) =>
      partitioned ? partitioned.deadPurge(ids) : core.calls.deadPurge({ ids }).pipe(Effect.map((r) => r.count)),
    /** Every partition's invariants (see `Verify`). */
    verify: (maxLines: number, pageSize?: number) =>
      partitioned ? partitioned.verify(maxLines, pageSize) : readOnly(core.calls.verify(maxLines, pageSize)),
    markClosed: () => {
      core.markClosed()
      partitioned?.markClosed()
    },
    isClosed: core.isClosed,
  }
}

/** A queue of either layout. */
export type AnyQueue = ReturnType<typeof makeQueue>
