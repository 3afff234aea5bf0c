/**
 * The capability table: every group of queue calls a {@link QueueApi} holds besides adds,
 * stats, sweeps and the dead letters, each with the one maker of its calls on one queue and
 * its spread table (how each call spreads over a partitioned queue's partitions, see
 * `Spread.ts`). The ordinary core (`QueueCore.ts`) makes each from here; the partitioned one
 * (`partition/Producer.ts`) makes each partition's and fans them out (`partition/FanOut.ts`);
 * a test checks that both faces offer every call named here. A new call is a member of one
 * capability: its interface entry (`QueueApi.ts`, `OpsApi.ts`, `Manual.ts`), its one-queue
 * implementation and its spread; a new capability is a row of this table.
 */
import { GROUP_SPREAD, makeGroupControl } from "./Groups.ts"
import { CONTROL_SPREAD, type ControlledQueue, makeJobControl } from "./JobControl.ts"
import { makeManual } from "./Manual.ts"
import { MANUAL_SPREAD } from "./ManualSpread.ts"
import { makeQueueOps, OPS_SPREAD } from "./Operations.ts"
import type { QueueApi } from "./QueueApi.ts"
import type { SpreadTable } from "./Spread.ts"

/** The capabilities of a {@link QueueApi}: the members the table makes. */
export type CapabilityName = "control" | "ops" | "groupControl" | "manual"

/** One row of the table: how capability `T` is made on one queue, and how it spreads. */
export interface Capability<T> {
  readonly make: (core: ControlledQueue) => T
  readonly spread: SpreadTable<T>
}

/** The capability table (see the top of this file). */
export const CAPABILITIES: { readonly [K in CapabilityName]: Capability<QueueApi[K]> } = {
  control: { make: makeJobControl, spread: CONTROL_SPREAD },
  ops: { make: (core) => makeQueueOps(core), spread: OPS_SPREAD },
  groupControl: { make: makeGroupControl, spread: GROUP_SPREAD },
  manual: { make: makeManual, spread: MANUAL_SPREAD },
}

/** The calls of the table that neither face offers: the engine's own (`refuse`: a face's undecodable payload to dead). */
export const ENGINE_ONLY_CALLS = ["refuse"] as const

/** The names of the table's rows, in the table's order. */
export const CAPABILITY_NAMES = Object.keys(CAPABILITIES) as ReadonlyArray<CapabilityName>

/**
 * One value per row of the table, each made by `each` from its row: the one loop both the
 * ordinary core and the partitioned one build their capabilities with.
 */
export const perCapability = (
  each: <K extends CapabilityName>(name: K, row: Capability<QueueApi[K]>) => QueueApi[K],
): Pick<QueueApi, CapabilityName> => {
  const out: Partial<Record<CapabilityName, unknown>> = {}
  for (const name of CAPABILITY_NAMES) out[name] = each(name, CAPABILITIES[name] as never)
  return out as Pick<QueueApi, CapabilityName>
}

/** Every capability made for one queue, on its bounded calls. */
export const makeCapabilities = (core: ControlledQueue): Pick<QueueApi, CapabilityName> =>
  perCapability((_, row) => row.make(core))
