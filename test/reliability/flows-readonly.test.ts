/**
 * Flows while their Redis answers READONLY (issue 31, "What must hold"; the fault a
 * failover leaves: a master demoted to a replica, its clients still connected). A dedicated
 * redis-server is made the replica of a master that does not answer (`REPLICAOF` an unused
 * port: it keeps its data and refuses every write), then made a master again.
 *
 * - Every call of the flows' own scripts (addFlow, dependsOn, addChildren, seal) and of the
 *   partitioned limits' (flow-epoch, flow-share) is refused as RedisUnavailable and leaves
 *   the data as it was.
 * - Workers that were running children through the window go on once it ends: every parent
 *   runs exactly once (and every child), none before its last child returned, none is left waiting, and verify
 *   is clean.
 */
import { describe, expect, it } from "vitest"
import { demote, ownRedis, rawOf } from "../support/own-redis.ts"
import { dumpQueue, queueNamer } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("rel-flows-ro")
const FLOWS = 40

const own = ownRedis("flows-readonly")

describe("flows while Redis answers READONLY", () => {
  it("the flows' and partitioned limits' calls are refused as RedisUnavailable, writing nothing", async () => {
    const raw = rawOf(own.server)
    const [q, q2, qp] = [name(), name(), name()]
    const queue = useQueue<string>(q, { connection: own.server.url })
    const parted = useQueue<string>(qp, { connection: own.server.url, partitions: 2 })
    const open = await queue.add("end", { open: true })
    const done = await queue.add("done")
    const before = { ...(await dumpQueue(raw, q)), ...(await dumpQueue(raw, q2)), ...(await dumpQueue(raw, qp)) }
    await demote(raw, "rel-flows-ro:probe")

    const refused = async (what: string, call: () => Promise<unknown>) => {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      )
      expect({ what, tag: (error as { _tag?: string } | undefined)?._tag }).toEqual({ what, tag: "RedisUnavailable" })
    }
    await refused("addFlow", () => queue.addFlow({ payload: "p", children: [{ payload: "c", queue: q2 }] }))
    await refused("dependsOn", () => queue.add("after", { dependsOn: [done] }))
    await refused("addChildren", () => queue.addChildren(open, [{ payload: "late", queue: q2 }]))
    await refused("seal", () => queue.seal(open))
    await refused("setRateLimit", () => parted.setRateLimit({ max: 10, perMs: 1000 }))
    await refused("setConcurrency", () => parted.setConcurrency(4))

    await raw.call("REPLICAOF", "NO", "ONE")
    const after = { ...(await dumpQueue(raw, q)), ...(await dumpQueue(raw, q2)), ...(await dumpQueue(raw, qp)) }
    expect(after).toEqual(before)
    // and the same calls work on the master it is again
    await queue.seal(open)
    expect((await queue.getJob(open))?.state).toBe("waiting")
  })

  it("workers running children through the window: every parent runs once, none early, none stuck", async () => {
    const raw = rawOf(own.server)
    const [q, q2] = [name(), name()]
    const queue = useQueue<string>(q, { connection: own.server.url })
    const other = useQueue<string>(q2, { connection: own.server.url })
    const flows: Array<{ parent: string; children: string[] }> = []
    for (let i = 0; i < FLOWS; i++) {
      const tree = await queue.addFlow({
        payload: "parent",
        children: [{ payload: "a" }, { payload: "b", queue: q2 }, { payload: "c", queue: q2 }],
      })
      flows.push({ parent: tree.id, children: tree.children.map((c) => c.id) })
    }
    const started = new Map<string, number[]>()
    const returned = new Map<string, number>()
    let seq = 0
    const holding: string[] = []
    let gate: (() => void) | undefined
    const held = new Promise<void>((resolve) => {
      gate = resolve
    })
    const handler = async (job: { readonly id: string; readonly payload: string }) => {
      started.set(job.id, [...(started.get(job.id) ?? []), ++seq])
      // the first children run into the window: their completes meet READONLY
      if (job.payload !== "parent" && returned.size === 0 && holding.length < 8) {
        holding.push(job.id)
        await held
      }
      returned.set(job.id, ++seq)
      return job.payload
    }
    const options = { connection: own.server.url, concurrency: 4, leaseMs: 60_000, heartbeatMs: 1_000 }
    useWorker(q, handler, options)
    useWorker(q2, handler, options)
    await until("children hold their leases", () => started.size >= 4)
    await demote(raw, "rel-flows-ro:probe")
    gate!()
    await until("the held children returned", () => holding.every((id) => returned.has(id)))
    // a write refused after they returned: their completes (sent again with backoff)
    const refusals = async () =>
      Number(/errorstat_READONLY:count=(\d+)/.exec(String(await raw.info("errorstats")))?.[1] ?? 0)
    const seen = await refusals()
    await until("a write refused after the held children returned", async () => (await refusals()) > seen)
    // reads still work on a replica: none of them counts as completed yet
    for (const id of holding)
      expect((await other.getJob(id)) ?? (await queue.getJob(id))).toMatchObject({ state: "active" })
    await raw.call("REPLICAOF", "NO", "ONE")

    await until(
      "every parent completed",
      async () => {
        const [a, b] = await Promise.all([queue.stats(), other.stats()])
        return a.counters.completed === FLOWS * 2 && b.counters.completed === FLOWS * 2 && a
      },
      { timeoutMs: 120_000, everyMs: 100 },
    )
    expect((await queue.stats()).waitingChildren).toBe(0)
    // no worker died and no lease ran out: every job, parent or child, started once
    const twice = flows.flatMap((f) => [f.parent, ...f.children]).filter((id) => started.get(id)?.length !== 1)
    const early = flows
      .filter((f) => f.children.some((c) => (returned.get(c) ?? Number.POSITIVE_INFINITY) > started.get(f.parent)![0]!))
      .map((f) => f.parent)
    expect({ twice, early }).toEqual({ twice: [], early: [] })
    const results = await queue.getDependencies(flows[0]!.parent)
    expect(results.children.map((d) => d.state)).toEqual(["completed", "completed", "completed"])
    expect(results.children.find((d) => d.queue === q)?.value).toBe("a")
    expect(await queue.verify()).toMatchObject({ violations: 0 })
    expect(await other.verify()).toMatchObject({ violations: 0 })
  }, 180_000)
})
