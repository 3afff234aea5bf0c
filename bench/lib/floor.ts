/**
 * The Redis floor: the fewest raw commands for the same job lifecycle, pipelined
 * 100 deep with ioredis, no scripts, no atomicity, no leases worth the name:
 *   add   = LPUSH wait id + HSET data id payload
 *   claim = RPOP wait + ZADD active deadline id
 *   ack   = ZREM active id + HDEL data id
 * What a queue on this Redis, from one Node process, cannot beat.
 */
import type { Redis } from "ioredis"
import { payload } from "../adapters/types.ts"

const WAIT = "floor:wait"
const ACTIVE = "floor:active"
const DATA = "floor:data"
const BATCH = 100

/** Add n jobs with `loops` pipelines in flight at once; returns jobs/s. */
export const floorAdd = async (clients: ReadonlyArray<Redis>, n: number): Promise<number> => {
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    clients.map(async (r) => {
      while (next < n) {
        const from = next
        const to = Math.min(n, from + BATCH)
        next = to
        const p = r.pipeline()
        for (let i = from; i < to; i++) {
          const id = `j${i}`
          p.lpush(WAIT, id)
          p.hset(DATA, id, JSON.stringify(payload(i)))
        }
        await p.exec()
      }
    }),
  )
  return n / ((performance.now() - t0) / 1000)
}

/** Pops up to BATCH waiting ids in one pipeline. */
const claimBatch = async (r: Redis): Promise<string[]> => {
  const claim = r.pipeline()
  for (let i = 0; i < BATCH; i++) claim.rpop(WAIT)
  const popped = (await claim.exec()) ?? []
  return popped.map(([, v]) => v).filter((v): v is string => typeof v === "string")
}

/** Leases the claimed ids (ZADD active), then acks them (ZREM active, HDEL data), one pipeline each. */
const leaseAndAck = async (r: Redis, ids: ReadonlyArray<string>): Promise<void> => {
  const deadline = Date.now() + 30_000
  const lease = r.pipeline()
  for (const id of ids) lease.zadd(ACTIVE, deadline, id)
  await lease.exec()
  const ack = r.pipeline()
  for (const id of ids) {
    ack.zrem(ACTIVE, id)
    ack.hdel(DATA, id)
  }
  await ack.exec()
}

/** Claim and ack every waiting job (n of them); returns jobs/s. */
export const floorProcess = async (clients: ReadonlyArray<Redis>, n: number): Promise<number> => {
  let done = 0
  const t0 = performance.now()
  await Promise.all(
    clients.map(async (r) => {
      for (let guard = 0; guard < n && done < n; guard++) {
        const ids = await claimBatch(r)
        if (ids.length === 0) return
        await leaseAndAck(r, ids)
        done += ids.length
      }
    }),
  )
  return n / ((performance.now() - t0) / 1000)
}

/**
 * The batched floor: the same commands, but each one variadic over 100 jobs
 * (LPUSH wait id…, HSET data id p…; RPOP wait 100, ZADD active d id…; ZREM
 * active id…, HDEL data id…) — what a queue that batches everything could reach.
 */
export const floorAddBatched = async (clients: ReadonlyArray<Redis>, n: number): Promise<number> => {
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    clients.map(async (r) => {
      while (next < n) {
        const from = next
        const to = Math.min(n, from + BATCH)
        next = to
        const ids: string[] = []
        const pairs: string[] = []
        for (let i = from; i < to; i++) {
          ids.push(`j${i}`)
          pairs.push(`j${i}`, JSON.stringify(payload(i)))
        }
        await r
          .pipeline()
          .lpush(WAIT, ...ids)
          .hset(DATA, ...pairs)
          .exec()
      }
    }),
  )
  return n / ((performance.now() - t0) / 1000)
}

export const floorProcessBatched = async (clients: ReadonlyArray<Redis>, n: number): Promise<number> => {
  let done = 0
  const t0 = performance.now()
  await Promise.all(
    clients.map(async (r) => {
      for (let guard = 0; guard < n; guard++) {
        if (done >= n) return
        const ids = await r.rpop(WAIT, BATCH)
        if (!ids || ids.length === 0) return
        const deadline = Date.now() + 30_000
        const scored: (string | number)[] = []
        for (const id of ids) scored.push(deadline, id)
        await r.zadd(ACTIVE, ...scored)
        await r
          .pipeline()
          .zrem(ACTIVE, ...ids)
          .hdel(DATA, ...ids)
          .exec()
        done += ids.length
      }
    }),
  )
  return n / ((performance.now() - t0) / 1000)
}
