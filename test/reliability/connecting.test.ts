/**
 * Calls made before a queue's connection is up (src/redis/Connection.ts, `whenWritable`):
 * however many wait, they share one watch of the connection, so Node never warns of a
 * listener leak, and a refused handshake ends every one of them at once with the refusal.
 */
import { afterEach, describe, expect, it } from "vitest"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("connecting")

/** The process warnings emitted from now on (a MaxListenersExceededWarning among them). */
const warnings = () => {
  const seen: string[] = []
  const listener = (w: Error) => seen.push(`${w.name}: ${w.message}`)
  process.on("warning", listener)
  afterEach(() => {
    process.off("warning", listener)
  })
  return seen
}

describe("calls made before the connection is up", () => {
  const seen = warnings()

  it("32 adds sent at once on a new queue: all added, no listener-leak warning", async () => {
    const q = name()
    const queue = useQueue<{ n: number }>(q)
    const ids = await Promise.all(Array.from({ length: 32 }, (_, n) => queue.add({ n })))
    expect(new Set(ids).size).toBe(32)
    expect((await queue.stats()).waiting).toBe(32)
    // a warning is emitted on the next tick at most: let it come
    await new Promise((r) => setImmediate(r))
    expect(seen.filter((w) => w.startsWith("MaxListenersExceededWarning"))).toEqual([])
  })

  it("a refused handshake ends all 16 waiting calls with the refusal (not their 60 s deadline)", async () => {
    const admin = rawClient()
    const user = `${name()}-user`
    await admin.call("ACL", "SETUSER", user, "on", ">right-password", "~*", "+@all")
    try {
      const { host } = new URL(redisUrl())
      const wrong = `redis://${user}:wrong-password@${host}`
      const queue = useQueue(name(), { connection: wrong, callTimeoutMs: 60_000 })
      const errors = await Promise.all(Array.from({ length: 16 }, (_, n) => queue.add({ n }).catch((e: Error) => e)))
      // each the server's refusal: a call ended by its deadline would be RedisUnavailable
      expect(errors.map((e) => (e as Error).message).filter((m) => !/WRONGPASS/.test(m))).toEqual([])
      expect(seen.filter((w) => w.startsWith("MaxListenersExceededWarning"))).toEqual([])
    } finally {
      await admin.call("ACL", "DELUSER", user)
      admin.disconnect()
    }
  })
})
