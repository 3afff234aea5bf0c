/**
 * A lease as stored, for tests that read or tamper with one: in key layout 2 a lease is
 * its holder entry `<workerId>|<token>|<startedAt>|<until>` (lua/include/active.lua); the
 * `lease` hash of layout 1 is gone.
 */
import type { Redis } from "ioredis"
import type { QueueKeys } from "../../src/engine/model/Keys.ts"

const ENTRY = /^([^|]*)\|(\d+)\|(\d+)\|(\d+)$/

/** The token job `id` is leased under, as text, or null when it holds no lease. */
export const leaseToken = async (raw: Redis, keys: QueueKeys, id: string): Promise<string | null> => {
  const entry = await raw.hget(keys.holder, id)
  const m = entry === null ? null : ENTRY.exec(entry)
  return m ? m[2]! : await raw.hget(keys.lease, id)
}

/** Give job `id`'s lease the token `token`, as if another holder now had it. */
export const setLeaseToken = async (raw: Redis, keys: QueueKeys, id: string, token: string): Promise<void> => {
  const entry = await raw.hget(keys.holder, id)
  const m = entry === null ? null : ENTRY.exec(entry)
  await raw.hset(keys.holder, id, m ? `${m[1]}|${token}|${m[3]}|${m[4]}` : `test|${token}|0|0`)
}

/** Delete job `id`'s lease entry (the job stays in active: its holder's next call finds no lease). */
export const dropLease = async (raw: Redis, keys: QueueKeys, id: string): Promise<void> => {
  await raw.hdel(keys.holder, id)
  await raw.hdel(keys.lease, id)
}

/**
 * Leave what a cancel of active job `id` leaves (its lease revoked, the job out of active and
 * marked cancelled at `at`), in one MULTI: a holder's heartbeat landing between separate
 * edits would find the lease gone but the job not cancelled, and answer "lost".
 */
export const cancelActive = async (raw: Redis, keys: QueueKeys, id: string, at: number): Promise<void> => {
  await raw.multi().zrem(keys.active, id).hdel(keys.holder, id).hdel(keys.lease, id).zadd(keys.cancelled, at, id).exec()
}

/**
 * How many leases are stored: holder entries that carry a token (a retained completed job
 * keeps its run's entry without one, `<workerId>|<startedAt>|<until>`).
 */
export const leaseCount = async (raw: Redis, keys: QueueKeys): Promise<number> =>
  (await raw.hvals(keys.holder)).filter((entry) => ENTRY.test(entry)).length

/** When the run of a holder entry started (ms, Redis clock): its second to last field, in either layout's form. */
export const entryStartedAt = (entry: string): number => {
  const parts = entry.split("|")
  return Number(parts[parts.length - 2])
}

/**
 * End job `id`'s lease as a sweep finds one that ran out: its deadline in the past, and, in
 * the same MULTI, its token no longer the holder's (0, which no reserve hands out), so a
 * heartbeat landing before the test's sweep cannot push the deadline back (extend moves only
 * a lease whose token is the caller's, and then answers "lost"). A deadline edited alone
 * races the holder's heartbeat: one that lands between the edit and the sweep revives it.
 */
export const expireLease = async (raw: Redis, keys: QueueKeys, id: string): Promise<void> => {
  const entry = await raw.hget(keys.holder, id)
  const m = entry === null ? null : ENTRY.exec(entry)
  if (!m) throw new Error(`expireLease: job ${id} holds no lease (holder entry ${entry})`)
  await raw.multi().zadd(keys.active, "XX", 0, id).hset(keys.holder, id, `${m[1]}|0|${m[3]}|${m[4]}`).exec()
}
