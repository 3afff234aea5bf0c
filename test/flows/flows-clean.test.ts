/**
 * `clean` of a flow's children (docs/flows.md, "Cancel, obliterate, clean"): a completed
 * child's result is read from its queue while retained; `clean` deletes it, after which the
 * parent's `getDependencies` shows the child completed without a result, and the parent still
 * runs (its count was taken at the child's end, nothing dangles). A dead child cleaned under
 * "wait" can never come back: its parent fails instead of waiting for ever. verify stays clean.
 */
import { describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("flows-clean")
const shared = sharedClients()

describe("clean a flow's children", () => {
  it("a completed child's result: read while retained, gone once cleaned; the parent still runs", async () => {
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
    expect(after.map((c) => [c.state, c.result])).toEqual([
      ["completed", undefined],
      ["completed", undefined],
    ])
    const [p] = await queue.reserve()
    expect(p!.id).toBe(tree.id)
    await queue.complete(p!.id, p!.token)
    expect(await shared.raw.hkeys(queueKeys(q).depCount)).toEqual([])
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
