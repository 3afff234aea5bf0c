/**
 * Flows on a real 3-master, 3-replica Redis Cluster when the master of the children's queue
 * is killed (SIGKILL) mid-flow and its replica takes over: parents on another master, their
 * children's notes in the killed master's outbox. Afterwards 0 parents are stuck, and a parent
 * runs twice only if the worker that ran it died (none dies here: so none runs twice). The
 * fan-in latency (a flow's last child returned → its parent started) is measured. Under load
 * a heartbeat unanswered for `leaseMs` replaces a worker's connection mid-failover: the calls
 * stranded on the old one fail and are sent again (test/cluster/cluster-connection-replaced.test.ts),
 * else the worker's sweep or acks stall and parents stay stuck (what this test saw before).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { keySlot } from "../../src/redis/Slot.ts"
import { hasRedisCli, type LocalCluster, startCluster } from "../support/cluster.ts"
import { report, summary } from "../support/figures.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

let cluster: LocalCluster
const conn = () => ({ cluster: cluster.startup })
const FLOWS = 60
const CHILDREN = 4

beforeAll(async () => {
  cluster = await startCluster({ masters: 3, replicas: 1 })
}, 60_000)
afterAll(async () => {
  await cluster?.stop()
})

describe.skipIf(!hasRedisCli())("flows across a master killed mid-flow", () => {
  it("the children's master SIGKILLed: after failover 0 parents stuck, none run twice (no worker died)", async () => {
    const prefix = "cff"
    const slotOf = (q: string) => keySlot(queueKeys(q, prefix).meta)
    const masters = await cluster.masters()
    // the parents' queue and the children's queue on two different masters
    const first = (await cluster.masterOfSlot(slotOf("pq0"))) as number
    let childQueue = ""
    for (let i = 0; i < 200 && childQueue === ""; i++) {
      if ((await cluster.masterOfSlot(slotOf(`cq${i}`))) !== first) childQueue = `cq${i}`
    }
    const victim = await cluster.masterOfSlot(slotOf(childQueue))
    const witness = masters.find((m) => m.port !== victim)!.port
    const parents = useQueue<number>("pq0", { connection: conn(), prefix })
    await parents.setRetention({ completed: { count: 10_000 } })
    const flows: Array<{ parent: string; children: string[] }> = []
    for (let i = 0; i < FLOWS; i++) {
      const children = Array.from({ length: CHILDREN }, () => ({ queue: childQueue, payload: i }))
      const tree = await parents.addFlow({ payload: i, children })
      flows.push({ parent: tree.id, children: tree.children.map((c) => c.id) })
    }
    const parentRuns = new Map<string, number[]>()
    const childReturned = new Map<string, number>()
    let gate: Promise<void> | undefined
    const options = { connection: conn(), prefix, concurrency: 8, leaseMs: 2_000, sweep: { intervalMs: 500 } }
    // the workers' errors, for a failure's message (a stalled loop shows as errors that stop)
    const errors: string[] = []
    const onError = (who: string) => (e: unknown) => {
      if (errors.length < 20) errors.push(`${who}: ${String(e).slice(0, 160)}`)
    }
    const parentWorker = useWorker<number>(
      "pq0",
      async (job) => void parentRuns.set(job.id, [...(parentRuns.get(job.id) ?? []), performance.now()]),
      options,
    )
    parentWorker.on("error", onError("pq0"))
    let childRuns = 0
    const childWorker = useWorker<number>(
      childQueue,
      async (job) => {
        childRuns++
        if (childRuns > (FLOWS * CHILDREN) / 3 && gate) await gate
        childReturned.set(job.id, performance.now())
      },
      options,
    )
    childWorker.on("error", onError(childQueue))
    await until("a third of the children ran", () => childRuns >= (FLOWS * CHILDREN) / 3)
    // hold the rest briefly so the kill lands mid-flow, then kill the children's master
    let open = () => {}
    gate = new Promise((r) => {
      open = r
    })
    cluster.nodes.find((n) => n.port === victim)!.process.kill("SIGKILL")
    await until(
      "the replica took over the children's slot",
      async () => {
        const now = await cluster.masters(witness).catch(() => [])
        return now.some(
          (m) => m.port !== victim && m.slots.some(([a, b]) => slotOf(childQueue) >= a && slotOf(childQueue) <= b),
        )
      },
      { timeoutMs: 60_000, everyMs: 200 },
    )
    open()
    gate = undefined
    const children = useQueue<number>(childQueue, { connection: conn(), prefix })
    await until("every parent ran", () => flows.every((f) => parentRuns.has(f.parent)), {
      timeoutMs: 60_000,
      everyMs: 100,
    }).catch(async (e: unknown) => {
      // what was left, for the failure's message
      const [c, p] = await Promise.all([children.stats(), parents.stats()])
      const states = { parents: parentWorker.state, children: childWorker.state }
      const left = { parentsRan: parentRuns.size, childRuns, children: c, parents: p, states, errors }
      throw new Error(`${String(e)}: ${JSON.stringify(left)}`)
    })
    const stuck = flows.filter((f) => !parentRuns.has(f.parent))
    // the rule: a parent runs twice only if the worker that ran it died; none died here
    const twice = flows.filter((f) => (parentRuns.get(f.parent)?.length ?? 0) > 1)
    expect(stuck).toEqual([])
    expect(twice.map((f) => f.parent)).toEqual([])
    const stats = await parents.stats()
    expect(stats.waitingChildren).toBe(0)
    expect(await parents.verify()).toMatchObject({ violations: 0 })
    // fan-in: a flow's last child returned → its parent started (failover included for some)
    const fanIn = flows.flatMap((f) => {
      const last = Math.max(...f.children.map((c) => childReturned.get(c) ?? Number.NaN))
      return Number.isFinite(last) ? [parentRuns.get(f.parent)![0]! - last] : []
    })
    const sorted = [...fanIn].sort((a, b) => a - b)
    const p99 = Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0)
    const { median, max } = summary(fanIn)
    report("cluster-flow-failover", {
      flows: FLOWS,
      children: FLOWS * CHILDREN,
      childRuns,
      fanInMedianMs: Math.round(median),
      fanInP99Ms: p99,
      fanInMaxMs: Math.round(max),
    })
  }, 240_000)
})
