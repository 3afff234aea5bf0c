/**
 * Flows on a real 3-master Redis Cluster: a parent and children in queues on different
 * masters (slots no script can span), released through the child queues' outboxes by the
 * workers that acked them; the fan-in latency (last child's ack → parent leased) measured.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { keySlot } from "../../src/redis/Slot.ts"
import { hasRedisCli, type LocalCluster, startCluster } from "../support/cluster.ts"
import { report } from "../support/figures.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

let cluster: LocalCluster
const conn = () => ({ cluster: cluster.startup })

beforeAll(async () => {
  cluster = await startCluster({ masters: 3 })
}, 60_000)
afterAll(async () => {
  await cluster?.stop()
})

describe.skipIf(!hasRedisCli())("flows on a 3-master Redis Cluster", () => {
  it("a parent on one master waits for children on the others, and runs once after the last", async () => {
    const prefix = "cflows"
    // three queues whose slots are on three different masters
    const byMaster = new Map<number, string>()
    for (let i = 0; byMaster.size < 3 && i < 200; i++) {
      const q = `fq${i}`
      const port = await cluster.masterOfSlot(keySlot(queueKeys(q, prefix).meta))
      if (!byMaster.has(port)) byMaster.set(port, q)
    }
    const [qa, qb, qc] = [...byMaster.values()] as [string, string, string]
    const a = useQueue<string>(qa, { connection: conn(), prefix })
    const tree = await a.addFlow({
      payload: "parent",
      children: [
        { queue: qb, payload: "b1" },
        { queue: qc, payload: "c1", children: [{ queue: qb, payload: "b2" }] },
      ],
    })
    const ran: Array<{ payload: string; at: number }> = []
    for (const q of [qa, qb, qc]) {
      useWorker<string>(q, async (job) => void ran.push({ payload: job.payload, at: performance.now() }), {
        connection: conn(),
        prefix,
        sweep: false,
      })
    }
    await until("the parent ran", () => ran.some((r) => r.payload === "parent"))
    const order = ran.map((r) => r.payload)
    expect(order.at(-1)).toBe("parent")
    expect(order.indexOf("b2")).toBeLessThan(order.indexOf("c1"))
    expect(order.filter((p) => p === "parent")).toHaveLength(1)
    expect((await a.getDependencies(tree.id)).pending).toBe(0)
    const lastChild = Math.max(...ran.filter((r) => r.payload !== "parent").map((r) => r.at))
    report("cluster-flow-fan-in", { msFromLastChildRunToParentRun: ran.at(-1)!.at - lastChild })
  })
})
