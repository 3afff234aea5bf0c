/**
 * A dropped parent's edges (docs/flows.md): once retention or clean drops a finished parent's
 * job data, the sweep deletes its children's `depChildren` members and `depState` fields, a
 * bounded page a call, so memory does not grow per edge.
 */
import { describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("flows-edges")
const shared = sharedClients()

/** The parent's edges still stored: its depChildren members and depState fields. */
const edgesOf = async (q: string, parent: string) => {
  const k = queueKeys(q)
  const members = await shared.raw.zrangebylex(k.depChildren, `[${parent}|`, `[${parent}|\xff`)
  const fields = (await shared.raw.hkeys(k.depState)).filter((f) => f.startsWith(`${parent}|`))
  return { members: members.length, fields: fields.length }
}

describe("a dropped parent's edges", () => {
  it("retention drops a completed parent of 3 children: a sweep deletes its depChildren and depState entries", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const tree = await queue.addFlow({
      payload: "parent",
      children: [{ payload: "a" }, { payload: "b" }, { payload: "c" }],
    })
    useWorker<string>(q, async () => undefined, { sweep: false })
    await until("the parent completed", async () => (await queue.stats()).counters.completed === 4)
    expect(await edgesOf(q, tree.id)).toEqual({ members: 3, fields: 3 })
    await queue.setRetention({ completed: { count: 0 } })
    await queue.sweep()
    expect(await queue.getJob(tree.id)).toBeUndefined()
    expect(await edgesOf(q, tree.id)).toEqual({ members: 0, fields: 0 })
    expect(await shared.raw.exists(queueKeys(q).depGone)).toBe(0)
    expect((await queue.verify()).lines).toEqual([])
  })

  it('a "remove" child that died leaves the listing, and its edge goes with the dropped parent', async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const tree = await queue.addFlow({
      payload: "parent",
      onChildFailure: "remove",
      children: [{ payload: "child", options: { maxAttempts: 1 } }],
    })
    const [c] = await queue.reserve()
    expect(await queue.fail(tree.children[0]!.id, c!.token, new Error("boom"))).toBe("dead")
    await queue.sweep()
    expect((await queue.getDependencies(tree.id)).children).toEqual([])
    const [p] = await queue.reserve()
    expect(p!.id).toBe(tree.id)
    await queue.complete(tree.id, p!.token)
    expect(await edgesOf(q, tree.id)).toEqual({ members: 1, fields: 1 })
    await queue.setRetention({ completed: { count: 0 } })
    await queue.sweep()
    expect(await edgesOf(q, tree.id)).toEqual({ members: 0, fields: 0 })
  })

  it("verify reports the edges of a parent that is gone and not left to the sweep; not those of one waiting for the sweep", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    await queue.addFlow({ payload: "parent", children: [{ payload: "a" }] })
    useWorker<string>(q, async () => undefined, { sweep: false })
    await until("the parent completed", async () => (await queue.stats()).counters.completed === 2)
    expect((await queue.verify()).lines).toEqual([])
    await queue.setRetention({ completed: { count: 0 } })
    await queue.sweep()
    // edges written by hand for a parent that never existed: nothing will delete them
    const k = queueKeys(q)
    await shared.raw.zadd(k.depChildren, 0, "ghost||x")
    await shared.raw.hset(k.depState, "ghost||x", "wait|completed")
    await shared.raw.zadd(k.depGone, 0, "dropped")
    await shared.raw.zadd(k.depChildren, 0, "dropped||y")
    expect((await queue.verify()).lines).toEqual(["deps-orphan ghost is gone but its children edges remain"])
    await queue.sweep()
    expect(await edgesOf(q, "dropped")).toEqual({ members: 0, fields: 0 })
  })

  it("a parent of 2,500 children is cleaned over several bounded sweep calls", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const children = Array.from({ length: 2500 }, (_, i) => ({ payload: `c${i}` }))
    const tree = await queue.addFlow({ payload: "parent", children })
    useWorker<string>(q, async () => undefined, { sweep: false, concurrency: 50 })
    await until("the parent completed", async () => (await queue.stats()).counters.completed === 2501)
    expect(await edgesOf(q, tree.id)).toEqual({ members: 2500, fields: 2500 })
    await queue.setRetention({ completed: { count: 0 } })
    const mores: boolean[] = []
    const totals = await queue.sweep({ limit: 1000, onBatch: (_, last) => void mores.push(last.more) })
    // at most 1000 edges a call: 2,500 take three calls, the first two saying "more"
    expect(totals.calls).toBeGreaterThanOrEqual(3)
    expect(mores.slice(0, 2)).toEqual([true, true])
    expect(await edgesOf(q, tree.id)).toEqual({ members: 0, fields: 0 })
    expect(await shared.raw.exists(queueKeys(q).depGone)).toBe(0)
  })
})
