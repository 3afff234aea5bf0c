/**
 * Lease times of a partitioned queue from Redis (for the limit tests): every `active`
 * event of every partition's stream, at its entry id's time (the Redis clock, ms), one
 * time per job leased.
 */
import type { Redis } from "ioredis"
import type { QueueKeys } from "../../src/engine/model/Keys.ts"

/** The lease times (ms, sorted) of the jobs leased in the partitions of `keys`. */
export const leaseTimes = async (
  raw: (k: QueueKeys) => Pick<Redis, "xrange"> | Promise<Pick<Redis, "xrange">>,
  keys: ReadonlyArray<QueueKeys>,
): Promise<number[]> => {
  const times: number[] = []
  for (const k of keys) {
    for (const [id, f] of await (await raw(k)).xrange(k.events, "-", "+")) {
      if (f[f.indexOf("kind") + 1] !== "active") continue
      const n = f[f.indexOf("id") + 1]!.split(",").length
      for (let i = 0; i < n; i++) times.push(Number(id.split("-")[0]))
    }
  }
  return times.sort((a, b) => a - b)
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
