/**
 * Lease start times of a partitioned queue from Redis (for the limit tests): the start a
 * reserve stored in the job's holder entry ("<workerId>|<startedAt>|<until>", the reserve's
 * own Redis clock, the time its rate window counts), read while the handler runs.
 */

import type { Redis } from "ioredis"
import type { QueueKeys } from "../../src/engine/model/Keys.ts"
import { entryStartedAt } from "./lease.ts"

/** The start (ms, Redis clock) of the lease job `id` holds now, from whichever partition of `keys` holds it. */
export const leaseStart = async (
  raw: (k: QueueKeys) => Pick<Redis, "hget"> | Promise<Pick<Redis, "hget">>,
  keys: ReadonlyArray<QueueKeys>,
  id: string,
): Promise<number> => {
  const held = await Promise.all(keys.map(async (k) => (await raw(k)).hget(k.holder, id)))
  const entry = held.find((h) => h !== null)
  if (entry === undefined || entry === null) throw new Error(`no partition holds a lease of ${id}`)
  return entryStartedAt(entry)
}

/** The most times of the sorted `ts` that fall in any window (t - perMs, t]: what the rate limit bounds. */
export const busiestWindow = (ts: ReadonlyArray<number>, perMs: number): number => {
  let most = 0
  for (let i = 0, j = 0; i < ts.length; i++) {
    while (ts[i]! - ts[j]! >= perMs) j++
    most = Math.max(most, i - j + 1)
  }
  return most
}
