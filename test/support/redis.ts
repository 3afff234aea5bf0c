/**
 * Helpers for tests: the suite's Redis URL, unique queue names per file, a raw
 * client for assertions, and a DUMP of a queue's keys to prove "nothing changed".
 */
import { randomBytes } from "node:crypto"
import { Redis } from "ioredis"
import { afterAll, beforeAll, inject } from "vitest"
import { KEY_NAMES, queueKeys } from "../../src/engine/model/Keys.ts"
import { connect, type RedisClient } from "../../src/redis/Client.ts"

/**
 * The Redis this test file runs against: its worker's own (one redis-server per test
 * worker, picked by VITEST_POOL_ID), so files running side by side never share a server.
 */
export const redisUrl = (): string => {
  const urls = inject("redisUrls")
  const pool = Number(process.env.VITEST_POOL_ID ?? "1")
  return urls[(Number.isInteger(pool) && pool > 0 ? pool - 1 : 0) % urls.length] as string
}

/** A queue name no other test file uses: `<tag>-<random>-<n>`. */
export const queueNamer = (tag: string) => {
  const run = randomBytes(3).toString("hex")
  let n = 0
  return (label = "q"): string => `${tag}-${label}-${run}-${++n}`
}

/** A raw ioredis client for assertions (not counted by the leak check). Close it in afterAll. */
export const rawClient = (url = redisUrl()): Redis => {
  const c = new Redis(url, { maxRetriesPerRequest: 1 })
  c.on("error", () => {})
  return c
}

/**
 * The two clients a test file shares, opened before its tests and closed after them:
 * `raw` (ioredis, for assertions) and `client` (leaseq's own, for script commands).
 * Read them inside tests (they are set by beforeAll).
 */
export const sharedClients = (): { readonly raw: Redis; readonly client: RedisClient } => {
  const shared = {} as { raw: Redis; client: RedisClient }
  beforeAll(() => {
    shared.raw = rawClient()
    shared.client = connect(redisUrl())
  })
  afterAll(async () => {
    shared.raw.disconnect()
    await shared.client.close()
  })
  return shared
}

/** Every key of the queue with a DUMP of its value, to compare byte for byte. */
export const dumpQueue = async (raw: Redis, queue: string, prefix?: string): Promise<Record<string, string | null>> => {
  const keys = queueKeys(queue, prefix)
  const out: Record<string, string | null> = {}
  for (const name of KEY_NAMES) {
    const dump = await raw.dumpBuffer(keys[name])
    out[name] = dump ? dump.toString("base64") : null
  }
  return out
}
