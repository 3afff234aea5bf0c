/**
 * `clean` of a flow's children (docs/flows.md, "Cancel, obliterate, clean"): a completed
 * child of its parent's queue leaves its result on the parent's edge as it completes, so
 * the parent reads it after `clean` or a retention of 0 deleted the child, and the parent
 * still runs (its count was taken at the child's end, nothing dangles). A dead child cleaned under
 * "wait" can never come back: its parent fails instead of waiting for ever. verify stays clean.
 */
import { describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("flows-clean")
const shared = sharedClients()

describe("clean a flow's children", () => {
  it("a completed child's result: read while retained, and still once cleaned; the parent still runs", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const tree = await queue.addFlow({ payload: "parent", children: [{ payload: "a" }, { payload: "b" }] })
    for (let i = 0; i < 2; i++) {
      const [c] = await queue.reserve()
      await queue.complete(c!.id, c!.token, `result-${c!.payload}`)
    }
    const before = (await queue.getDependencies(tree.id)).children
    expect(before.map((c) => c.result).sort()).toEqual(['"result-a"', '"result-b"']) // JSON text
    expect((await queue.clean("completed", { olderThanMs: 0 })).deleted).toBe(2)
    await queue.sweep()
    const after = (await queue.getDependencies(tree.id)).children
    expect(after.map((c) => [c.state, c.value]).sort()).toEqual([
      ["completed", "result-a"],
      ["completed", "result-b"],
    ])
    const [p] = await queue.reserve()
    expect(p!.id).toBe(tree.id)
    await queue.complete(p!.id, p!.token)
    expect(await shared.raw.hkeys(queueKeys(q).depCount)).toEqual([])
    expect((await queue.verify()).lines).toEqual([])
  })

  it("a child completed with a retention of 0 (not kept at all) leaves its result to its waiting parent", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    await queue.setRetention({ completed: { count: 0 } })
    const tree = await queue.addFlow({ payload: "parent", children: [{ payload: "a" }, { payload: "b" }] })
    const [a] = await queue.reserve()
    await queue.complete(a!.id, a!.token, { big: "x".repeat(70_000) })
    const [b] = await queue.reserve()
    await queue.complete(b!.id, b!.token, { n: 2 })
    expect(await queue.getJob(b!.id)).toBeUndefined()
    const deps = (await queue.getDependencies(tree.id)).children
    const byId = new Map(deps.map((c) => [c.id, c]))
    expect(byId.get(b!.id)?.value).toEqual({ n: 2 })
    // past 64 KiB the page gives the size, as for a retained child's result
    expect(byId.get(a!.id)).toMatchObject({ state: "completed", result: undefined, resultBytes: 70_010 })
    expect((await queue.verify()).lines).toEqual([])
  })

  it('a dead child cleaned under "wait" fails its parent, naming the child', async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const tree = await queue.addFlow({ payload: "parent", children: [{ payload: "bad", options: { maxAttempts: 1 } }] })
    const [c] = await queue.reserve()
    await queue.fail(c!.id, c!.token, new Error("boom"))
    await queue.sweep()
    expect((await queue.getJob(tree.id))?.state).toBe("waiting-children") // "wait": an operator may retry it
    await queue.clean("dead", { olderThanMs: 0 })
    await queue.sweep()
    const parent = await queue.getJob(tree.id)
    expect(parent?.state).toBe("dead")
    expect(parent?.error).toMatchObject({ reason: "child-failed", child: { id: c!.id, outcome: "removed" } })
    expect((await queue.verify()).lines).toEqual([])
  })
})
