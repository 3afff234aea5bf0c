/**
 * Manual processing under a lost reply: the queue's reserve ran on Redis, its reply was
 * dropped and the connection cut, so ioredis re-sends the call on the new connection. The
 * re-send answers the same leases (none leased to nobody); a re-sent complete, fail or
 * release answers what its first run did (its ack lane's record), and changes nothing.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { partitionName } from "../../src/engine/model/QueueName.ts"
import { leaseToken } from "../support/lease.ts"
import { proxyToSuiteRedis } from "../support/proxy.ts"
import { queueNamer, rawClient } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("rel-manual-resend")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

/** One job leased and completed first, so the scripts are loaded (a NOSCRIPT reply would be dropped too). */
const warmUp = async (queue: ReturnType<typeof useQueue<number>>) => {
  await queue.add(-1)
  const [job] = await queue.reserve()
  await queue.complete(job!.id, job!.token)
}

describe("a manual reserve whose reply was lost", () => {
  it("is re-sent by the connection and answers the same leases: nothing is leased to nobody", async () => {
    const q = name()
    const keys = queueKeys(q)
    const proxy = await proxyToSuiteRedis()
    const queue = useQueue<number>(q, { connection: proxy.url })
    await warmUp(queue)
    for (let i = 0; i < 4; i++) await queue.add(i)
    proxy.dropReplies()
    const pending = queue.reserve({ count: 2, leaseMs: 60_000 })
    await until("the reserve ran on Redis", async () => (await raw.zcard(keys.active)) === 2)
    proxy.cut()
    proxy.heal()
    const jobs = await pending
    expect(jobs.map((j) => j.payload)).toEqual([0, 1])
    // the re-send leased nothing more: two active, both held under the tokens answered
    expect(await raw.zcard(keys.active)).toBe(2)
    for (const j of jobs) expect(await leaseToken(raw, keys, j.id)).toBe(String(j.token))
    for (const j of jobs) await queue.complete(j.id, j.token)
    const next = await queue.reserve({ count: 5 })
    expect(next.map((j) => [j.payload, j.attempt])).toEqual([
      [2, 1],
      [3, 1],
    ])
    for (const j of next) await queue.complete(j.id, j.token)
    const stats = await queue.stats()
    expect(stats.counters).toMatchObject({ added: 5, completed: 5, lostLeases: 0, refused: 0 })
    expect(await queue.verify()).toMatchObject({ violations: 0 })
  })

  it("a complete, a fail and a release whose replies were lost: each re-send answers what the first run did", async () => {
    const q = name()
    const keys = queueKeys(q)
    const proxy = await proxyToSuiteRedis()
    const queue = useQueue<number>(q, { connection: proxy.url })
    await warmUp(queue)
    // the fail and release scripts loaded too (a NOSCRIPT reply would be dropped)
    for (const settle of ["release", "fail"] as const) {
      await queue.add(0)
      const [w] = await queue.reserve()
      if (settle === "release") await queue.release(w!.id, w!.token)
      else await queue.fail(w!.id, w!.token, new Error("warm-up"), { retry: false })
    }
    await queue.complete(...(await queue.reserve().then(([w]) => [w!.id, w!.token] as const)))
    /** Run `call` with its reply dropped until `landed` sees it ran on Redis, then cut: ioredis re-sends it. */
    const resent = async <A>(call: () => Promise<A>, landed: () => Promise<boolean>) => {
      proxy.dropReplies()
      const pending = call().catch((e: unknown) => e)
      await until("the call ran on Redis", landed)
      proxy.cut()
      proxy.heal()
      return pending
    }
    const [a, b, c] = [await queue.add(1), await queue.add(2), await queue.add(3)]
    const jobs = await queue.reserve({ count: 3, leaseMs: 60_000 })
    const tok = (id: string) => jobs.find((j) => j.id === id)!.token
    const active = (id: string) => async () => (await raw.zscore(keys.active, id)) === null
    expect(await resent(() => queue.complete(a, tok(a)), active(a))).toBeUndefined()
    expect(await resent(() => queue.fail(b, tok(b), new Error("boom"), { delayMs: 60_000 }), active(b))).toBe("retry")
    expect(await resent(() => queue.release(c, tok(c)), active(c))).toBeUndefined()
    // each acted once: one completed, one failure (its retry delayed), one released to wait
    expect((await queue.stats()).counters).toMatchObject({ completed: 3, failed: 2, released: 2, refused: 0 })
    expect(await raw.zscore(keys.delayed, b)).not.toBeNull()
    expect(await queue.verify()).toMatchObject({ violations: 0 })
  })

  it("a complete of a partitioned queue whose reply was lost: the re-send answers it completed", async () => {
    const q = name()
    const proxy = await proxyToSuiteRedis()
    const queue = useQueue<number>(q, { connection: proxy.url, partitions: 2 })
    await warmUp(queue)
    const id = await queue.add(1)
    const [job] = await queue.reserve()
    expect(job!.id).toBe(id)
    const done = [0, 1].map((i) => queueKeys(partitionName(q, i)).done)
    // the look-ups that find the job's partition go through; the complete itself is held, then sent with its reply dropped
    proxy.hold()
    const pending = queue.complete(id, job!.token).catch((e: unknown) => e)
    await until("the partitions' look-ups were sent", () => /hget/i.test(proxy.heldText()))
    proxy.flush()
    proxy.hold()
    await until("the complete was sent", () => /evalsha/i.test(proxy.heldText()))
    proxy.dropReplies()
    proxy.flush()
    await until("the complete ran on Redis", async () =>
      (await Promise.all(done.map((k) => raw.zscore(k, id)))).some((at) => at !== null),
    )
    proxy.cut()
    proxy.heal()
    expect(await pending).toBeUndefined()
    expect((await queue.stats()).counters).toMatchObject({ completed: 2, refused: 0 })
  })
})
