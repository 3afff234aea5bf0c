/**
 * Failover on a real 3-master, 3-replica Redis Cluster while producers and workers run,
 * and the opt-in `durability` option (Redis WAIT on the node that took the write).
 * Counts of lost and redone jobs and throughput figures are printed, not asserted,
 * except the one guarantee: with durability on, no acknowledged add is lost.
 */
import { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { NotReplicated } from "../../src/index.ts"
import { keySlot } from "../../src/redis/Slot.ts"
import { startRedisServer } from "../../src/testing/RedisServer.ts"
import { onCleanup } from "../support/cleanup.ts"
import { hasRedisCli, type LocalCluster, startCluster } from "../support/cluster.ts"
import { rawClient } from "../support/redis.ts"
import { useQueue, useWorker } from "../support/use.ts"

let cluster: LocalCluster
const conn = () => ({ cluster: cluster.startup })
const durable = { replicas: 1, timeoutMs: 2_000 }

beforeAll(async () => {
  cluster = await startCluster({ masters: 3, replicas: 1 })
}, 60_000)
afterAll(async () => {
  await cluster?.stop()
})

/** The master holding queue `name` now, and a read-only client to its first replica. */
const placement = async (name: string, prefix: string) => {
  const key = queueKeys(name, prefix).meta
  const port = await cluster.masterOfSlot(keySlot(key))
  const master = (await cluster.masters()).find((m) => m.port === port)!
  const replica = new Redis(master.replicas[0]!, "127.0.0.1", { readOnly: true, maxRetriesPerRequest: 1 })
  replica.on("error", () => {})
  await replica.call("READONLY")
  return { port, replica }
}
const poll = async (check: () => Promise<boolean>) => {
  while (!(await check())) await new Promise((r) => setTimeout(r, 20))
}
const rate = (n: number, ms: number) => Math.round((n * 1000) / ms)

describe.skipIf(!hasRedisCli())("durability: WAIT for replicas on the node that took the write", () => {
  it("an add resolves once its replica has it; asking for more replicas than exist rejects, job kept", async () => {
    const keys = queueKeys("dur", "d1")
    const { replica } = await placement("dur", "d1")
    onCleanup(() => replica.disconnect())
    const queue = useQueue("dur", { connection: conn(), prefix: "d1", durability: durable })
    const greedy = useQueue("dur", { connection: conn(), prefix: "d1", durability: { replicas: 2, timeoutMs: 50 } })
    const id = await queue.add({ a: 1 })
    const onReplica = await replica.lrange(keys.wait, 0, -1) // read at once, no polling: WAIT said it is there
    expect(onReplica.filter((entry) => entry.includes(id))).toHaveLength(1)
    const err = await greedy.add({ a: 2 }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(NotReplicated)
    const e = err as NotReplicated
    expect(e).toMatchObject({ operation: "add", replicas: 2, acknowledged: 1, timeoutMs: 50 })
    expect(e.message).toContain("not yet replicated")
    expect((await queue.stats()).waiting).toBe(2) // written all the same
    expect(await queue.verify()).toMatchObject({ violations: 0 })
  })

  it("on a standalone server with one replica, WAIT goes on the same connection", async () => {
    // the primary starts a replica's sync at once (diskless, it waits 5 s by default for more)
    const primary = await startRedisServer({ args: ["--repl-diskless-sync-delay", "0"] })
    onCleanup(() => primary.stop())
    const secondary = await startRedisServer({ args: ["--replicaof", "127.0.0.1", String(primary.port)] })
    onCleanup(() => secondary.stop())
    const raw = rawClient(primary.url)
    onCleanup(() => raw.disconnect())
    const queue = useQueue("solo", { connection: primary.url, durability: durable })
    const greedy = useQueue("solo", { connection: primary.url, durability: { replicas: 2, timeoutMs: 50 } })
    await poll(async () => /slave0:.*state=online/.test(String(await raw.call("INFO", "replication"))))
    await queue.add(1)
    await expect(greedy.add(2)).rejects.toMatchObject({ _tag: "NotReplicated", acknowledged: 1, replicas: 2 })
    expect((await queue.stats()).waiting).toBe(2)
  })

  it("a worker's complete waits too; one not confirmed is an error event, and the job stays completed", async () => {
    const queue = useQueue("durw", { connection: conn(), prefix: "d2" })
    const options = { connection: conn(), prefix: "d2" }
    const [first] = await queue.addBulk([{ payload: 1 }])
    const worker = useWorker("durw", async () => "ok", { ...options, durability: durable })
    const done = await new Promise<string>((resolve) => worker.on("completed", (job) => resolve(job.id)))
    await worker.close()
    expect(done).toBe(first)
    const [second] = await queue.addBulk([{ payload: 2 }])
    const greedy = useWorker("durw", async () => "ok", { ...options, durability: { replicas: 2, timeoutMs: 50 } })
    let completed = 0
    greedy.on("completed", () => completed++)
    const error = await new Promise<unknown>((resolve) => greedy.on("error", resolve))
    await greedy.close()
    expect(error).toBeInstanceOf(NotReplicated)
    expect(error).toMatchObject({ operation: "complete", replicas: 2, acknowledged: 1 })
    expect(completed).toBe(0) // not reported as completed…
    const stats = await queue.stats() // …yet written on the master: it does not run again
    expect(stats).toMatchObject({ waiting: 0, active: 0 })
    expect(stats.counters.completed).toBe(2)
    expect(second).toBeDefined()
  })

  it("what durability costs: add throughput with and without (printed)", async () => {
    const lines: string[] = []
    for (const mode of ["off", "on"] as const) {
      const queue = useQueue(`cost-${mode}`, {
        connection: conn(),
        prefix: "cost",
        ...(mode === "on" ? { durability: durable } : {}),
      })
      try {
        for (let i = 0; i < 100; i++) await queue.add(i) // warm up: connections, slot map, scripts
        let t = performance.now()
        for (let i = 0; i < 500; i++) await queue.add(i)
        const one = rate(500, performance.now() - t)
        t = performance.now()
        let next = 0
        const lane = async () => {
          while (next < 4000) await queue.add(next++)
        }
        await Promise.all(Array.from({ length: 32 }, lane))
        const many = rate(4000, performance.now() - t)
        t = performance.now()
        for (let b = 0; b < 40; b++) await queue.addBulk(Array.from({ length: 100 }, (_, i) => ({ payload: i })))
        const bulk = rate(4000, performance.now() - t)
        expect((await queue.stats()).waiting).toBe(8600)
        lines.push(`durability ${mode}: add 1 at a time ${one}/s, 32 in flight ${many}/s, addBulk(100) ${bulk} jobs/s`)
      } finally {
        await queue.close()
      }
    }
    console.log(`[cluster-failover] add throughput, 3 masters + 3 replicas on one machine:\n  ${lines.join("\n  ")}`)
  })
})

/** Producers and workers run on queue `fo`; a third of the way in its master loses its replica link and the replica takes over. */
const scenario = async (prefix: string, withDurability: boolean) => {
  const name = "fo"
  const total = 1200
  const extra = withDurability ? { durability: durable } : {}
  const queue = useQueue<{ n: number }>(name, { connection: conn(), prefix, ...extra })
  // completed jobs are kept in the queue's done set: the final master says which completed
  await queue.setRetention({ completed: { count: 10_000 } })
  const runs = new Map<number, number>()
  // while the master is cut off, handlers hold their jobs: only what Redis keeps decides
  let gate: Promise<void> | undefined
  let openGate = () => {}
  const worker = useWorker<{ n: number }>(
    name,
    async (job) => {
      runs.set(job.payload.n, (runs.get(job.payload.n) ?? 0) + 1)
      if (gate) await gate
    },
    { connection: conn(), prefix, concurrency: 16, leaseMs: 1_000, ...extra },
  )
  const errors = { worker: 0, notReplicated: 0, producerRetries: 0 }
  worker.on("error", (e) => {
    errors.worker++
    if (e instanceof NotReplicated) errors.notReplicated++
  })
  const confirmed = new Map<number, string>()
  const { port: master, replica } = await placement(name, prefix)
  replica.disconnect()
  let next = 0
  /** Add job `n` until Redis acknowledges it; the same dedupe key each time, so an add that did land is not stored twice. */
  const addAcknowledged = async (n: number): Promise<string> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await queue.add({ n }, { dedupeKey: `n${n}` })
      } catch (e) {
        if (e instanceof NotReplicated) errors.notReplicated++
        errors.producerRetries++
        if (attempt > 300) throw e
        await new Promise((r) => setTimeout(r, 20)) // back off, then add again (same dedupe key)
      }
    }
  }
  const lane = async () => {
    for (let n = next++; n < total; n = next++) confirmed.set(n, await addAcknowledged(n))
  }
  const producing = Promise.all(Array.from({ length: 4 }, lane))
  await poll(async () => confirmed.size >= total / 3)
  // cut the replication link and keep it cut (the replica's PSYNC is refused), let writes
  // pile up on the master alone, then the replica takes over: a master lost with its last writes
  const raw = cluster.raw(master)
  gate = new Promise((open) => {
    openGate = open
  })
  await raw.call("ACL", "SETUSER", "default", "-psync", "-sync")
  await raw.call("CLIENT", "KILL", "TYPE", "replica")
  const cutAt = confirmed.size
  await poll(async () => {
    if (confirmed.size >= cutAt + 50) return true
    const clients = String(await raw.call("CLIENT", "LIST")).split("\n")
    return clients.some((c) => /flags=\w*b/.test(c) && / cmd=wait /.test(c)) // a durable write waits for the replica
  })
  const promoted = await cluster.failover(master, "TAKEOVER")
  await raw.call("ACL", "SETUSER", "default", "+psync", "+sync")
  gate = undefined
  openGate()
  await producing
  // settle: nothing waiting, leased or delayed (leases whose complete was lost expire and run again)
  await poll(async () => {
    const s = await queue.stats()
    return s.waiting + s.active + s.delayed === 0 && worker.running === 0
  })
  await worker.close()
  const stats = await queue.stats()
  const verify = await queue.verify()
  await queue.close()
  // lost: an acknowledged add whose job is not among the completed ones (and nothing is left waiting)
  const done = queueKeys(name, prefix).done
  const completed = new Set(await cluster.raw(await cluster.masterOfSlot(keySlot(done))).zrange(done, "0", "-1"))
  const lost = [...confirmed.values()].filter((id) => !completed.has(id)).length
  // redone: a job whose handler ran more than once
  const redone = [...runs.values()].filter((c) => c > 1).length
  const report = { durability: withDurability, total, confirmed: confirmed.size, lost, redone, ...errors }
  console.log(`[cluster-failover] TAKEOVER of ${master} by ${promoted}: ${JSON.stringify(report)}`)
  return { master, promoted, lost, redone, confirmed, stats, verify }
}

describe.skipIf(!hasRedisCli())("failover while producers and workers run", () => {
  it("without durability: the queue stays consistent; lost and redone jobs are counted (printed)", async () => {
    const r = await scenario("fo-off", false)
    expect(r.promoted).not.toBe(r.master)
    expect(r.confirmed.size).toBe(1200) // every add eventually acknowledged
    expect(r.verify.violations).toBe(0)
    expect(r.stats.dead).toBe(0)
  })

  it("with durability: no acknowledged add is lost", async () => {
    const r = await scenario("fo-on", true)
    expect(r.promoted).not.toBe(r.master)
    expect(r.confirmed.size).toBe(1200)
    expect(r.lost).toBe(0)
    expect(r.verify.violations).toBe(0)
    expect(r.stats.dead).toBe(0)
  })
})
