/**
 * The queue both faces adapt: one ordinary queue core, or a partitioned one
 * (`partitions` > 1), with the opt-in `durability` applied to adds. Both implement
 * {@link QueueApi}, so a face never branches on partitions itself.
 */
import * as Result from "effect/Result"
import type { RedisClient } from "../../redis/Client.ts"
import { MAX_PARTITIONS } from "../model/QueueName.ts"
import { type Checked, checkIntegerOr, orThrow } from "../model/Validate.ts"
import type { QueueApi } from "../queue/QueueApi.ts"
import { makeQueueCore, type QueueSettings } from "../queue/QueueCore.ts"
import {
  checkDurability,
  type Durability,
  type DurabilitySettings,
  surfaceNotReplicated,
  withDurability,
} from "./Durability.ts"
import { makePartitionedCore } from "./Producer.ts"

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
export type { AnyQueueStats } from "../queue/QueueApi.ts"

/** A queue of either layout, as both faces use it: the {@link QueueApi}, with its validated layout. */
export interface AnyQueue extends QueueApi {
  /** Adds wait for this many replicas (undefined: off). */
  readonly durability: DurabilitySettings | undefined
}

/** Surface `NotReplicated` as itself from an add (see `Durability.ts`). */
const durableAdds = (api: QueueApi): Pick<QueueApi, "add" | "addBulk"> => ({
  add: (job) => surfaceNotReplicated(api.add(job)),
  addBulk: (jobs) => surfaceNotReplicated(api.addBulk(jobs)),
})

/**
 * Make the queue `name` on `client`: an ordinary queue core, or a partitioned one when
 * `layout.partitions` > 1; each implements {@link QueueApi}, so this only picks one.
 * With `layout.durability`, adds wait for replicas and fail with `NotReplicated` (as
 * itself, not wrapped) when too few acknowledged in time; the add and its `WAIT` go on
 * `durableVia` (default `client`): give a connection of its own when workers share
 * `client`, so their heartbeats never queue behind a `WAIT`.
 */
export const makeQueue = (
  client: RedisClient,
  name: string,
  settings: QueueSettings,
  layout: Layout,
  durableVia: RedisClient = client,
): AnyQueue => {
  const durable = layout.durability ? withDurability(client, layout.durability, ["add"], durableVia) : client
  const api: QueueApi =
    layout.partitions > 1
      ? makePartitionedCore(durable, name, settings, layout.partitions)
      : makeQueueCore(durable, name, settings)
  return { ...api, ...(layout.durability ? durableAdds(api) : {}), durability: layout.durability }
}
