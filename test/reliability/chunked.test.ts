/**
 * Scripts that take a caller-sized list are called in chunks: Lua 5.1 `unpack` stops near
 * 8,000 values, so one call over a longer list would fail as a whole. A worker with
 * `concurrency` up to 10,000 releases every lease it holds on close in one Commands call.
 */
import { Effect } from "effect"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeCommands, type NewJob, type Reservation } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { connect, type RedisClient } from "../../src/redis/Client.ts"
import { leaseCount } from "../support/lease.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"

const name = queueNamer("rel-chunked")
const LEASES = 9_000
let client: RedisClient
let raw: Redis
beforeAll(() => {
  client = connect(redisUrl())
  raw = rawClient()
})
afterAll(async () => {
  await client.close()
  raw.disconnect()
})

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)
const jobs = (n: number): NewJob[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `job-${i}-${Math.random().toString(36).slice(2, 8)}`,
    payload: JSON.stringify({ i }),
    delayMs: 0,
    maxAttempts: 3,
    dedupeKey: "",
    dedupeTtlMs: 0,
  }))

/** Lease `n` jobs of a fresh queue (reserve takes at most 500 per call). */
const leased = async (n: number) => {
  const keys = queueKeys(name())
  const c = makeCommands(client, keys)
  await run(c.add(jobs(n)))
  const held: Reservation[] = []
  while (held.length < n) held.push(...(await run(c.reserve(500, 60_000, 100))).jobs)
  expect(await raw.zcard(keys.active)).toBe(n)
  return { keys, c, held }
}

describe(`N10: ${LEASES} leases in one Commands call`, () => {
  it(`release gives back all ${LEASES} leases, attempts unchanged`, async () => {
    const { keys, c, held } = await leased(LEASES)
    const released = await run(c.release(held))
    expect(released).toHaveLength(LEASES)
    expect(released.every((x) => x)).toBe(true)
    expect(await raw.zcard(keys.active)).toBe(0)
    expect(await leaseCount(raw, keys)).toBe(0)
    expect(await raw.llen(keys.wait)).toBe(LEASES)
    expect(await raw.hget(keys.meta, "released")).toBe(String(LEASES))
    expect(await raw.hlen(keys.lost)).toBe(0)
  })

  it(`extend and complete take ${LEASES} leases too, one answer per lease in order`, async () => {
    const { keys, c, held } = await leased(LEASES)
    const deadlines = await run(c.extend(held, 120_000))
    expect(deadlines).toHaveLength(LEASES)
    expect(deadlines.every((d, i) => d > held[i]!.deadline)).toBe(true)
    // one lease given up first: its answer is false, in its place
    await run(c.release([held[7_777]!]))
    const completed = await run(c.complete(held))
    expect(completed.filter((x) => !x)).toHaveLength(1)
    expect(completed[7_777]).toBe(false)
    expect(await raw.zcard(keys.active)).toBe(0)
    expect(await raw.hget(keys.meta, "completed")).toBe(String(LEASES - 1))
  })
})
