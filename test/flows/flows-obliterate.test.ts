/**
 * Obliterating a child's queue (docs/flows.md, "Cancel, obliterate"): a parent in another
 * queue is told each of its children there is removed, by the child's policy, before the
 * keys go, so it never waits for ever on a queue that is gone; a child's end still in the
 * outbox counts first. Refused (active jobs, no force): nothing is told.
 */
import { describe, expect, it } from "vitest"
import { QueueHasActiveJobs } from "../../src/index.ts"
import { queueNamer } from "../support/redis.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("flows-obliterate")

describe("obliterate a child's queue", () => {
  it('a "wait" parent in another queue is failed, naming the removed child; verify stays clean', async () => {
    const q = name()
    const q2 = name()
    const queue = useQueue<string>(q)
    const other = useQueue<string>(q2)
    const tree = await queue.addFlow({ payload: "parent", children: [{ payload: "child", queue: q2 }] })
    await other.obliterate()
    const parent = await queue.getJob(tree.id)
    expect(parent?.state).toBe("dead")
    expect(parent?.error).toMatchObject({ reason: "child-failed", child: { queue: q2, outcome: "removed" } })
    expect((await queue.verify()).lines).toEqual([])
  })

  it('an "ignore" parent counts the removed child and runs', async () => {
    const q = name()
    const q2 = name()
    const queue = useQueue<string>(q)
    const other = useQueue<string>(q2)
    const tree = await queue.addFlow({
      payload: "parent",
      onChildFailure: "ignore",
      children: [{ payload: "child", queue: q2 }, { payload: "here" }],
    })
    const [here] = await queue.reserve()
    await queue.complete(here!.id, here!.token)
    await other.obliterate()
    expect((await queue.getJob(tree.id))?.state).toBe("waiting")
    expect((await queue.verify()).lines).toEqual([])
  })

  it("a child's completion still in the outbox counts first: the parent runs, not failed", async () => {
    const q = name()
    const q2 = name()
    const queue = useQueue<string>(q)
    const other = useQueue<string>(q2)
    const tree = await queue.addFlow({ payload: "parent", children: [{ payload: "child", queue: q2 }] })
    const [c] = await other.reserve()
    await other.complete(c!.id, c!.token) // its note waits in q2's outbox (no worker drains it)
    expect((await queue.getJob(tree.id))?.state).toBe("waiting-children")
    await other.obliterate()
    expect((await queue.getJob(tree.id))?.state).toBe("waiting")
  })

  it("refused while jobs are active: the parent is not told", async () => {
    const q = name()
    const q2 = name()
    const queue = useQueue<string>(q)
    const other = useQueue<string>(q2)
    const tree = await queue.addFlow({
      payload: "parent",
      children: [
        { payload: "child", queue: q2 },
        { payload: "busy", queue: q2 },
      ],
    })
    await other.reserve()
    await expect(other.obliterate()).rejects.toBeInstanceOf(QueueHasActiveJobs)
    expect((await queue.getJob(tree.id))?.state).toBe("waiting-children")
    await other.obliterate({ force: true })
    expect((await queue.getJob(tree.id))?.state).toBe("dead")
  })
})
