/**
 * The events stream at the script level: the scripts that change a job's state record it
 * in the queue's `events` STREAM in the same call, capped near the queue's retention.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeCommands } from "../src/engine/Commands.ts"
import { queueKeys } from "../src/engine/Keys.ts"
import { connect, type RedisClient } from "../src/redis/Client.ts"
import { newJob, run } from "./support/jobs.ts"
import { queueNamer, rawClient, redisUrl } from "./support/redis.ts"

const name = queueNamer("events-stream")
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

const setup = () => {
  const keys = queueKeys(name())
  return { keys, c: makeCommands(client, keys) }
}

/** Every entry of the stream as { field: value } objects, oldest first. */
const entries = async (key: string) =>
  (await raw.xrange(key, "-", "+")).map(([, fields]) => {
    const o: Record<string, string> = {}
    for (let i = 0; i < fields.length; i += 2) o[fields[i]!] = fields[i + 1]!
    return o
  })

describe("added", () => {
  it("add records one `added` entry per job it adds, in the same call, and none for a deduplicated job", async () => {
    const { keys, c } = setup()
    const a = newJob()
    const b = newJob({ delayMs: 60_000 })
    const d1 = newJob({ dedupeKey: "k", dedupeTtlMs: 60_000 })
    const d2 = newJob({ dedupeKey: "k", dedupeTtlMs: 60_000 })
    expect(await run(c.add([a, b, d1, d2]))).toEqual([a.id, b.id, d1.id, d1.id])
    expect(await entries(keys.events)).toEqual([
      { kind: "added", id: a.id },
      { kind: "added", id: b.id },
      { kind: "added", id: d1.id },
    ])
    // a re-send of the same call (same request id) finds its receipt and records nothing more
    await run(c.add([newJob()], "same-call"))
    await run(c.add([newJob()], "same-call"))
    expect(await raw.xlen(keys.events)).toBe(4)
  })

  it("the stream is capped near the queue's retention (meta eventsMaxLen), and 0 records nothing", async () => {
    const { keys, c } = setup()
    await raw.hset(keys.meta, "eventsMaxLen", "200")
    for (let i = 0; i < 10; i++) await run(c.add(Array.from({ length: 100 }, () => newJob())))
    const len = await raw.xlen(keys.events)
    // MAXLEN ~ trims whole stream nodes (100 entries each by default): about 200, never all 1,000
    expect(len).toBeGreaterThanOrEqual(200)
    expect(len).toBeLessThanOrEqual(300)
    await raw.hset(keys.meta, "eventsMaxLen", "0")
    await run(c.add([newJob()]))
    expect(await raw.xlen(keys.events)).toBe(len)
  })

  it("without a retention set, a queue keeps about 10,000 events", async () => {
    const { keys, c } = setup()
    for (let i = 0; i < 11; i++) await run(c.add(Array.from({ length: 1_000 }, () => newJob())))
    const len = await raw.xlen(keys.events)
    expect(len).toBeGreaterThanOrEqual(10_000)
    expect(len).toBeLessThan(11_000)
  })
})
