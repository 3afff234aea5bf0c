/**
 * The eviction-policy warning tells the policies apart. `allkeys-*` may evict any key,
 * leaseq's included: a loud warning. `volatile-*` evicts only keys with a TTL; leaseq sets
 * none, so for leaseq's keys the server behaves like `noeviction`: no warning.
 */
import { describe, expect, it } from "vitest"
import { EvictionPolicyWarning, evictsLeaseqKeys } from "../../src/engine/calls/EvictionPolicy.ts"
import { Queue } from "../../src/index.ts"
import { startRedisServer } from "../../src/testing/RedisServer.ts"
import { onCleanup } from "../support/cleanup.ts"
import { queueNamer, rawClient } from "../support/redis.ts"
import { until } from "../support/until.ts"

const q = queueNamer("rel-eviction")

describe("maxmemory-policy warning", () => {
  it("N6: volatile-* policies (they never evict leaseq's keys) get no warning; allkeys-* still does", async () => {
    const server = await startRedisServer({ args: ["--maxmemory", "64mb", "--maxmemory-policy", "volatile-lru"] })
    onCleanup(() => server.stop())
    const admin = rawClient(server.url)
    onCleanup(() => admin.disconnect())
    const warnings: Error[] = []
    const listen = (w: Error) => {
      if ((w as { code?: string }).code === EvictionPolicyWarning.code) warnings.push(w)
    }
    process.on("warning", listen)
    onCleanup(() => process.off("warning", listen))
    const addOnNewClient = async (policy: string) => {
      await admin.config("SET", "maxmemory-policy", policy)
      const queue = new Queue(q(policy), { connection: server.url })
      onCleanup(() => queue.close())
      await queue.add("x") // the first call runs the check
    }
    for (const policy of ["volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"]) {
      await addOnNewClient(policy)
    }
    await addOnNewClient("allkeys-lfu")
    // warnings are emitted in order: once the allkeys one is here, any earlier one would be too
    await until("the allkeys-lfu warning", () => warnings.length > 0)
    await new Promise((r) => setImmediate(r))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]!.message).toContain(`${server.url} has maxmemory-policy allkeys-lfu`)
  })

  it("evictsLeaseqKeys: only noeviction and volatile-* are safe for keys without a TTL", () => {
    const safe = ["noeviction", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"]
    const unsafe = ["allkeys-lru", "allkeys-lfu", "allkeys-random", "some-future-policy"]
    expect(safe.filter(evictsLeaseqKeys)).toEqual([])
    expect(unsafe.filter(evictsLeaseqKeys)).toEqual(unsafe)
  })
})
