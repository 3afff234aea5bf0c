/**
 * Flows on a real 3-master Redis Cluster: a parent and children in queues on different
 * masters (slots no script can span), released through the child queues' outboxes by the
 * workers that acked them; the fan-in latency (last child's ack → parent leased) measured.
 * Queues whose names share a slot: the children's complete releases the parent in its script
 * (fan-in, calls/FanIn.ts), and a parent on another slot still gets its note (no CROSSSLOT),
 * which carries the child's result to the parent's edge (read after the child is gone).
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

  it("a parent in its children's slot is released in their complete; one on another slot through the outbox", async () => {
    const prefix = "cfanin"
    const slot = (q: string) => keySlot(queueKeys(q, prefix).meta)
    // two queue names in one slot (a Lua script may touch both), and one elsewhere
    const seen = new Map<number, string>()
    let pair: [string, string] | undefined
    for (let i = 0; pair === undefined && i < 5000; i++) {
      const q = `fi${i}`
      const other = seen.get(slot(q))
      if (other !== undefined) pair = [other, q]
      else seen.set(slot(q), q)
    }
    const [qa, qb] = pair!
    const qc = [...seen.values()].find((q) => slot(q) !== slot(qa))!
    const a = useQueue<string>(qa, { connection: conn(), prefix })
    const c = useQueue<string>(qc, { connection: conn(), prefix })
    // the children are not kept once completed: each parent reads its child's result on its edge
    const b = useQueue<string>(qb, { connection: conn(), prefix })
    await b.setRetention({ completed: { count: 0 } })
    const ran: string[] = []
    const errors: unknown[] = []
    for (const q of [qa, qc]) {
      useWorker<string>(q, async (job) => void ran.push(job.payload), { connection: conn(), prefix, sweep: false }).on(
        "error",
        (e) => errors.push(e),
      )
    }
    useWorker<string>(qb, async (job) => ({ from: job.payload }), { connection: conn(), prefix, sweep: false }).on(
      "error",
      (e) => errors.push(e),
    )
    // the other slot's note first: never learnt (its keys in a complete would be CROSSSLOT)
    const far = await c.addFlow({ payload: "c1", children: [{ queue: qb, payload: "b3" }] })
    await until("the other slot's parent ran", () => ran.includes("c1"))
    const first = await a.addFlow({ payload: "a1", children: [{ queue: qb, payload: "b1" }] })
    await until("the first parent ran", () => ran.includes("a1"))
    const near = await a.addFlow({ payload: "a2", children: [{ queue: qb, payload: "b2" }] })
    const far2 = await c.addFlow({ payload: "c2", children: [{ queue: qb, payload: "b4" }] })
    await until("both parents ran", () => ran.includes("a2") && ran.includes("c2"))
    // the result on the edge, whichever way the child's end came: the in-script release
    // (near) or the note, in the same slot (first) or another (far, far2)
    expect((await a.getDependencies(first.id)).children.map((d) => d.value)).toEqual([{ from: "b1" }])
    expect((await a.getDependencies(near.id)).children.map((d) => d.value)).toEqual([{ from: "b2" }])
    expect((await c.getDependencies(far.id)).children.map((d) => d.value)).toEqual([{ from: "b3" }])
    expect((await c.getDependencies(far2.id)).children.map((d) => d.value)).toEqual([{ from: "b4" }])
    for (const f of [first, near, far, far2]) expect(await b.getJob(f.children[0]!.id)).toBeUndefined()
    expect([...ran].sort()).toEqual(["a1", "a2", "c1", "c2"])
    expect(errors).toEqual([])
  })
})
