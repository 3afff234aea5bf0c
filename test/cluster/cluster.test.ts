/**
 * leaseq on a real 3-master Redis Cluster: queues spread over the masters by their
 * hash tags, the whole lifecycle runs unchanged (same scripts, no key built in Lua),
 * workers block on a duplicated Cluster connection, NOSCRIPT falls back to EVAL per node.
 */
import { once } from "node:events"
import { Effect } from "effect"
import { Cluster } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeCommands, type NewJob } from "../../src/engine/calls/Commands.ts"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { connect, type RedisClient } from "../../src/redis/Client.ts"
import { keySlot } from "../../src/redis/Slot.ts"
import { hasRedisCli, type LocalCluster, startCluster } from "../support/cluster.ts"
import { untilRedisClock } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)
let cluster: LocalCluster
let client: RedisClient
const conn = () => ({ cluster: cluster.startup })

beforeAll(async () => {
  cluster = await startCluster({ masters: 3 })
  client = connect(conn())
}, 60_000)
afterAll(async () => {
  await client?.close()
  await cluster?.stop()
})

let seq = 0
const job = (over: Partial<NewJob> = {}): NewJob => ({
  id: `job-${++seq}`,
  payload: JSON.stringify({ n: seq }),
  delayMs: 0,
  maxAttempts: 3,
  dedupeKey: "",
  dedupeTtlMs: 0,
  ...over,
})
/** The port of the master holding `key`, and a raw client to it. */
const home = async (key: string) => {
  const port = await cluster.masterOfSlot(keySlot(key))
  return { port, raw: cluster.raw(port) }
}

describe.skipIf(!hasRedisCli())("on a 3-master Redis Cluster", () => {
  it("computes the slot of a key as CLUSTER KEYSLOT does, and masters() lists every master", async () => {
    const raw = cluster.raw(cluster.nodes[0]!.port)
    for (const key of ["leaseq:{emails}:wait", "x", "a{b}c", "{}{z}", "p:{hot~7}:meta", "ünï{cödé}"]) {
      expect(keySlot(key), key).toBe(Number(await raw.call("CLUSTER", "KEYSLOT", key)))
    }
    await client.command("PING", [])
    const masters = await client.masters()
    expect(masters.map((m) => Number(m.describe.split(":")[1])).sort()).toEqual(
      (await cluster.masters()).map((m) => m.port).sort(),
    )
    expect(client.isCluster).toBe(true)
  })

  it("many queues spread over all 3 masters: each queue's keys live on the master of its slot", async () => {
    const prefix = "spread"
    const names = Array.from({ length: 12 }, (_, i) => `q${i}`)
    const queues = names.map((n) => useQueue(n, { connection: conn(), prefix }))
    await Promise.all(queues.map((q, i) => q.add({ i })))
    const homes = new Set<number>()
    for (const n of names) {
      const keys = queueKeys(n, prefix)
      const slots = new Set([keys.meta, keys.wait, keys.data].map(keySlot))
      expect(slots.size, "one queue, one slot").toBe(1)
      const { port } = await home(keys.meta)
      homes.add(port)
      const slot = keySlot(keys.meta)
      for (const m of await cluster.masters()) {
        const here = (await cluster.raw(m.port).call("CLUSTER", "GETKEYSINSLOT", slot, 100)) as string[]
        expect(here.includes(keys.wait), `${keys.wait} on ${m.port}`).toBe(m.port === port)
      }
    }
    expect(homes.size).toBe(3)
    for (const q of queues) expect((await q.stats()).waiting).toBe(1)
  })

  it("the lifecycle runs unchanged: add, reserve, extend, complete, fail, sweep, dead", async () => {
    const keys = queueKeys("life", "lc")
    const c = makeCommands(client, keys)
    await run(c.open)
    const [a, b, d] = [job(), job(), job({ maxAttempts: 1 })]
    expect(await run(c.add([a, b, d]))).toEqual([a.id, b.id, d.id])
    const { jobs } = await run(c.reserve(2, 5_000, 100))
    expect(jobs.map((j) => j.id)).toEqual([a.id, b.id])
    const extended = await run(c.extend(jobs, 10_000))
    expect(extended.every((deadline, i) => deadline > jobs[i]!.deadline)).toBe(true)
    expect(await run(c.complete([jobs[0]!]))).toEqual([true])
    expect(await run(c.fail(jobs[1]!, { delayMs: 0, error: '{"message":"x"}', mode: "retry" }))).toBe("retry")
    // the retried job is due at once; the next reserve promotes it behind d
    const second = await run(c.reserve(10, 20, 100))
    expect(second.jobs.map((j) => [j.id, j.attempt])).toEqual([
      [d.id, 1],
      [b.id, 2],
    ])
    await untilRedisClock((await home(keys.meta)).raw, Math.max(...second.jobs.map((j) => j.deadline)))
    const swept = await run(c.sweep(100))
    expect(swept).toMatchObject({ reclaimed: 2, dead: 1 }) // d had 1 attempt: dead; b goes back to wait
    const stats = await run(c.stats)
    expect(stats).toMatchObject({ waiting: 1, active: 0, dead: 1 })
    expect(stats.counters).toMatchObject({ added: 3, completed: 1, failed: 1, lostLeases: 2 })
    expect((await run(c.deadList(0, 10))).jobs.map((j) => j.id)).toEqual([d.id])
    expect(await run(c.verify(10))).toMatchObject({ violations: 0 })
  })

  it("a worker on a borrowed ioredis Cluster blocks on its duplicate() connection and wakes on add", async () => {
    const borrowed = new Cluster([...cluster.startup], { enableAutoPipelining: true })
    borrowed.on("error", () => {})
    const name = "wake"
    const queue = useQueue<{ n: number }>(name, { connection: borrowed, prefix: "bw" })
    const worker = useWorker<{ n: number }>(name, async (job) => job.payload.n + 1, {
      connection: borrowed,
      prefix: "bw",
      blockTimeoutMs: 300_000,
    })
    await worker.ready
    // the worker is idle: its BZPOPMIN waits on the queue's master (no timeout will end it soon)
    const { raw } = await home(queueKeys(name, "bw").marker)
    while (!/blocked_clients:[1-9]/.test(String(await raw.call("INFO", "clients")))) {
      await new Promise((r) => setTimeout(r, 10))
    }
    const completed = once(worker, "completed")
    await queue.add({ n: 41 })
    expect((await completed)[1]).toBe(42)
    await worker.close()
    await queue.close()
    expect(borrowed.status).toBe("ready") // borrowed: leaseq never closes it
    await borrowed.quit()
  })

  it("after SCRIPT FLUSH on every master, each call reloads its script on its node (NOSCRIPT → EVAL)", async () => {
    const queue = useQueue("flushed", { connection: conn(), prefix: "fl" })
    const { raw } = await home(queueKeys("flushed", "fl").meta)
    const loaded = async () => (await raw.call("SCRIPT", "EXISTS", Scripts.add.sha, Scripts.reserve.sha)) as number[]
    await queue.add(1)
    expect((await loaded())[0]).toBe(1)
    for (const m of await cluster.masters()) await cluster.raw(m.port).call("SCRIPT", "FLUSH")
    expect(await loaded()).toEqual([0, 0])
    await queue.addBulk([{ payload: 2 }, { payload: 3 }])
    const done: unknown[] = []
    const worker = useWorker("flushed", async (job) => void done.push(job.payload), {
      connection: conn(),
      prefix: "fl",
      concurrency: 3,
    })
    while (done.length < 3) await once(worker, "completed")
    await worker.close()
    expect(done.sort()).toEqual([1, 2, 3])
    expect(await queue.stats()).toMatchObject({ waiting: 0, active: 0 })
    expect(await loaded()).toEqual([1, 1]) // EVAL loaded them again on that node
  })
})
