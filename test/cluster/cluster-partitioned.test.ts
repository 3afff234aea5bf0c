/**
 * Partitioned queues on a real 3-master Redis Cluster: one logical queue as N
 * sub-queues with their own hash tags, spread over every master; workers serve every
 * partition (FIFO within each); stats, sweeps, dead letters and the CLI cover them all.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { partitionKeys, queueKeys } from "../../src/engine/model/Keys.ts"
import { partitionOfDedupeKey } from "../../src/engine/partition/Producer.ts"
import { InvalidQueueName, Queue, Worker } from "../../src/index.ts"
import { connect, liveConnections, type RedisClient } from "../../src/redis/Client.ts"
import { keySlot } from "../../src/redis/Slot.ts"
import { runCli } from "../support/child.ts"
import { hasRedisCli, type LocalCluster, startCluster } from "../support/cluster.ts"
import { useQueue, useWorker } from "../support/use.ts"

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)
let cluster: LocalCluster
let client: RedisClient
const conn = () => ({ cluster: cluster.startup })
const N = 8

beforeAll(async () => {
  cluster = await startCluster({ masters: 3 })
  client = connect(conn())
}, 60_000)
afterAll(async () => {
  await client?.close()
  await cluster?.stop()
})

/** The master port holding each partition of `name`. */
const homes = (name: string, prefix: string) =>
  Promise.all(Array.from({ length: N }, (_, i) => cluster.masterOfSlot(keySlot(partitionKeys(name, i, prefix).meta))))

/** Lease every waiting job of every partition for 20 ms, and wait (on the Redis clock) until all leases expired. */
const expireAll = async (name: string, prefix: string) => {
  let last = 0
  for (let i = 0; i < N; i++) {
    const { jobs } = await run(makeCommands(client, partitionKeys(name, i, prefix)).reserve(100, 20, 100))
    last = Math.max(last, ...jobs.map((j) => j.deadline))
  }
  const raw = cluster.raw(cluster.nodes[0]!.port)
  const now = async () => {
    const [s, us] = await raw.time()
    return Number(s) * 1000 + Math.floor(Number(us) / 1000)
  }
  while ((await now()) <= last) await new Promise((r) => setTimeout(r, 5))
}

describe.skipIf(!hasRedisCli())("partitioned queues on a 3-master cluster", () => {
  it("spread jobs over all 3 masters; a worker serves every partition, FIFO within each, each job once", async () => {
    const prefix = "pt"
    const queue = useQueue<{ n: number }>("hot", { connection: conn(), prefix, partitions: N })
    const ids = await queue.addBulk(Array.from({ length: 400 }, (_, n) => ({ payload: { n } })))
    ids.push(...(await Promise.all(Array.from({ length: 200 }, (_, k) => queue.add({ n: 400 + k })))))
    const where = await homes("hot", prefix)
    expect(new Set(where).size).toBe(3)
    const before = await queue.stats()
    expect(before.partitions!.map((p) => p.queue)).toEqual(Array.from({ length: N }, (_, i) => `hot~${i}`))
    expect(before.partitions!.map((p) => p.counters.added)).toEqual(Array(N).fill(600 / N)) // round robin
    expect(before.waiting).toBe(600)
    const opened = liveConnections()
    const order: string[] = []
    const seen = new Map<number, number>()
    let completed = 0
    const worker = useWorker<{ n: number }>(
      "hot",
      async (job) => {
        order.push(job.id)
        seen.set(job.payload.n, (seen.get(job.payload.n) ?? 0) + 1)
      },
      // one slot per partition: strict FIFO in each; completed jobs kept, to tell which partition ran which
      { connection: conn(), prefix, partitions: N, concurrency: N },
    )
    expect(liveConnections() - opened).toBe(N + 1) // N blocking + 1 for commands
    const all = new Promise<void>((done) =>
      worker.on("completed", () => {
        if (++completed === 600) done()
      }),
    )
    await all
    expect(worker.running).toBe(0)
    await worker.close()
    expect(worker.state).toBe("closed")
    expect(seen.size).toBe(600)
    expect([...seen.values()].every((c) => c === 1)).toBe(true)
    for (let i = 0; i < N; i++) {
      const kept = new Set(await cluster.raw(where[i]!).zrange(partitionKeys("hot", i, prefix).done, "0", "-1"))
      expect(kept.size).toBe(600 / N)
      const ran = order.filter((id) => kept.has(id))
      expect(ran).toEqual([...ran].sort()) // in add order (ULIDs grow with it): FIFO within the partition
    }
    const after = await queue.stats()
    expect(after).toMatchObject({ waiting: 0, active: 0, dead: 0 })
    expect(after.counters.completed).toBe(600)
    expect(after.partitions!.map((p) => p.counters.completed)).toEqual(Array(N).fill(600 / N))
  })

  it("sub-queue names cannot collide with queue names; duplicates meet in one partition", async () => {
    expect(() => new Queue("hot~1")).toThrow(InvalidQueueName)
    expect(partitionKeys("hot", 1, "dd").meta).toBe("dd:{hot~1}:meta")
    expect(queueKeys("hot", "dd").meta).toBe("dd:{hot}:meta")
    const queue = useQueue("dup", { connection: conn(), prefix: "dd", partitions: N })
    const first = await queue.add({ a: 1 }, { dedupeKey: "order-17" })
    expect(await queue.add({ a: 2 }, { dedupeKey: "order-17" })).toBe(first)
    const [again, other] = await queue.addBulk([
      { payload: 3, options: { dedupeKey: "order-17" } },
      { payload: 4, options: { dedupeKey: "order-18" } },
    ])
    expect(again).toBe(first)
    expect(other).not.toBe(first)
    const stats = await queue.stats()
    expect(stats.counters.added).toBe(2)
    const home = partitionOfDedupeKey("order-17", N)
    expect(stats.partitions![home]!.counters.added).toBeGreaterThanOrEqual(1)
  })

  it("refuses bad partitions and durability options, naming the field, before connecting", () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ partitions: 0 }, "partitions"],
      [{ partitions: 1025 }, "partitions"],
      [{ partitions: 2.5 }, "partitions"],
      [{ durability: { replicas: 0 } }, "durability.replicas"],
      [{ durability: { timeoutMs: 0 } }, "durability.timeoutMs"],
      [{ durability: { replica: 1 } }, "durability.replica"],
      [{ durability: "yes" }, "durability"],
    ]
    for (const [options, field] of cases) {
      expect(() => new Queue("bad", options), field).toThrow(expect.objectContaining({ _tag: "InvalidOptions", field }))
      expect(() => new Worker("bad", async () => {}, options), field).toThrow(
        expect.objectContaining({ _tag: "InvalidOptions", field }),
      )
    }
  })

  it("sweeps, dead letters and verify cover every partition", async () => {
    const prefix = "adm"
    const queue = useQueue<number>("adm", { connection: conn(), prefix, partitions: N })
    const ids = await queue.addBulk(
      Array.from({ length: 2 * N }, (_, n) => ({ payload: n, options: { maxAttempts: 1 } })),
    )
    await expireAll("adm", prefix)
    expect((await queue.stats()).expired).toBe(2 * N)
    expect(await queue.sweep()).toMatchObject({ queue: "adm", reclaimed: 2 * N, dead: 2 * N, incomplete: false })
    const page = await queue.deadJobs({ count: 5 })
    expect(page.total).toBe(2 * N)
    expect(page.jobs).toHaveLength(5)
    const all = await queue.deadJobs({ count: 100 })
    expect(all.jobs.map((j) => j.id).sort()).toEqual([...ids].sort())
    expect(all.jobs.map((j) => j.diedAt)).toEqual(all.jobs.map((j) => j.diedAt).sort((a, b) => a - b))
    expect(await queue.retryDead(ids.slice(0, 5))).toBe(5)
    expect(await queue.purgeDead(ids.slice(5))).toBe(2 * N - 5)
    expect(await queue.verify()).toMatchObject({ violations: 0, jobs: 5 })
    expect(await queue.stats()).toMatchObject({ waiting: 5, dead: 0, active: 0 })
  })

  it("end-to-end throughput and master CPU: one queue (one master) vs partitions over all masters (printed)", async () => {
    const cpu = async () => {
      const out = new Map<number, number>()
      for (const m of await cluster.masters()) {
        const info = String(await cluster.raw(m.port).call("INFO", "cpu"))
        const field = (k: string) => Number(new RegExp(`${k}:([0-9.]+)`).exec(info)?.[1] ?? 0)
        out.set(m.port, field("used_cpu_user") + field("used_cpu_sys"))
      }
      return out
    }
    const lines: string[] = []
    for (const partitions of [1, 3, 6]) {
      const prefix = `tp${partitions}`
      const total = 6000
      const queue = useQueue<number>("tp", { connection: conn(), prefix, partitions })
      try {
        const t0 = performance.now()
        for (let b = 0; b < total / 500; b++) {
          await queue.addBulk(Array.from({ length: 500 }, (_, i) => ({ payload: b * 500 + i })))
        }
        const added = performance.now() - t0
        const before = await cpu()
        const t1 = performance.now()
        let completed = 0
        const worker = useWorker<number>("tp", async () => {}, {
          connection: conn(),
          prefix,
          partitions,
          concurrency: 64,
        })
        await new Promise<void>((done) => worker.on("completed", () => ++completed === total && done()))
        const ran = performance.now() - t1
        await worker.close()
        const after = await cpu()
        const used = [...after].map(([port, s]) => s - before.get(port)!)
        expect((await queue.stats()).counters.completed).toBe(total)
        lines.push(
          `partitions ${partitions}: addBulk ${Math.round((total * 1000) / added)} jobs/s; ` +
            `processed ${Math.round((total * 1000) / ran)} jobs/s; master CPU s ${used.map((u) => u.toFixed(2)).join(" / ")} ` +
            `(busiest ${Math.round((total / Math.max(...used)) * 1)} jobs per master CPU-second)`,
        )
      } finally {
        await queue.close()
      }
    }
    console.log(
      `[cluster-partitioned] one worker process, concurrency 64, 3 masters on one 2-core machine:\n  ${lines.join("\n  ")}`,
    )
  })

  it("the leaseq CLI (run from source) finds every partition on every master and sweeps it", async () => {
    const queue = useQueue("cli", { connection: conn(), prefix: "pcli", partitions: N })
    await queue.addBulk(Array.from({ length: 3 * N }, (_, n) => ({ payload: n })))
    await expireAll("cli", "pcli")
    const url = `redis://127.0.0.1:${cluster.nodes[1]!.port}`
    const swept = await runCli(["sweep", "--url", url, "--prefix", "pcli", "--json"])
    expect(swept.code, swept.err).toBe(0)
    const out = JSON.parse(swept.out)
    expect(out.queues.map((q: { queue: string }) => q.queue)).toEqual(Array.from({ length: N }, (_, i) => `cli~${i}`))
    expect(out.totals.reclaimed).toBe(3 * N)
    const stats = await runCli(["stats", "--url", url, "--prefix", "pcli", "--json"])
    expect(stats.code, stats.err).toBe(0)
    expect(JSON.parse(stats.out).totals).toMatchObject({ queues: N, waiting: 3 * N, active: 0 })
    // --queue with the logical name stands for all its partitions
    const named = await runCli(["stats", "--url", url, "--prefix", "pcli", "--queue", "cli", "--json"])
    expect(named.code, named.err).toBe(0)
    expect(JSON.parse(named.out).totals).toMatchObject({ queues: N, waiting: 3 * N })
  })
})
