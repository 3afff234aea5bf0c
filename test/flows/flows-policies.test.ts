/**
 * What a parent does when a child dies, is cancelled or removed (docs/flows.md): "wait"
 * (the default: a dead child retried and completed releases it), "fail" (the parent dies,
 * its error naming the child, a `dead` event), "ignore" and "remove" (the child counts
 * done); a cancelled parent, a purged child; verify() on a queue with parents waiting.
 */
import { describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { renderExposition } from "../../src/metrics/Exposition.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("flows-policy")
const shared = sharedClients()

/** A parent with one child in the same queue, and the child leased and failed for good. */
const deadChild = async (policy?: "wait" | "fail" | "ignore" | "remove") => {
  const q = name()
  const queue = useQueue<string>(q)
  const tree = await queue.addFlow({
    payload: "parent",
    ...(policy ? { onChildFailure: policy } : {}),
    children: [{ payload: "child", options: { maxAttempts: 1 } }],
  })
  const child = tree.children[0]!.id
  const [c] = await queue.reserve()
  expect(await queue.fail(child, c!.token, new Error("boom"))).toBe("dead")
  await queue.sweep()
  return { queue, parent: tree.id, child }
}

describe("onChildFailure", () => {
  it('"wait" (the default): the parent keeps waiting; the dead child retried and completed releases it', async () => {
    const { queue, parent, child } = await deadChild()
    expect((await queue.getJob(parent))?.state).toBe("waiting-children")
    expect((await queue.getDependencies(parent)).pending).toBe(1)
    await queue.retryDead([child])
    const [c] = await queue.reserve()
    await queue.complete(child, c!.token)
    expect((await queue.getJob(parent))?.state).toBe("waiting")
  })

  it('"fail": the parent dies, its error names the child', async () => {
    const { queue, parent, child } = await deadChild("fail")
    const info = await queue.getJob(parent)
    expect(info?.state).toBe("dead")
    expect(info?.error).toMatchObject({ reason: "child-failed", child: { id: child, outcome: "dead" } })
    expect((await queue.stats()).waitingChildren).toBe(0)
  })

  it('"ignore": the child counts done, its outcome readable; "remove": it leaves the children', async () => {
    const ignored = await deadChild("ignore")
    expect((await ignored.queue.getJob(ignored.parent))?.state).toBe("waiting")
    expect((await ignored.queue.getDependencies(ignored.parent)).children).toMatchObject([{ state: "dead" }])
    const removed = await deadChild("remove")
    expect((await removed.queue.getJob(removed.parent))?.state).toBe("waiting")
    expect((await removed.queue.getDependencies(removed.parent)).children).toEqual([])
  })

  it('a purged dead child can never complete: under "wait" its parent dies rather than wait for ever', async () => {
    const { queue, parent, child } = await deadChild()
    await queue.purgeDead([child])
    await queue.sweep()
    expect((await queue.getJob(parent))?.state).toBe("dead")
  })
})

describe("with workers and no sweep", () => {
  it('a child\'s worker that moved it to dead drains the note: a "fail" parent dies at once', async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const tree = await queue.addFlow({
      payload: "p",
      onChildFailure: "fail",
      children: [{ payload: "bad", options: { maxAttempts: 1 } }],
    })
    useWorker<string>(
      q,
      async (job) => {
        if (job.payload === "bad") throw new Error("boom")
      },
      { sweep: false },
    )
    await until("the parent died", async () => (await queue.getJob(tree.id))?.state === "dead")
    expect((await queue.getJob(tree.id))?.error).toMatchObject({ reason: "child-failed" })
  })
})

describe("removed children", () => {
  it("a child drained from wait, or a dead child cleaned, tells its parent (no parent left waiting for ever)", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const drained = await queue.addFlow({ payload: "p", children: [{ payload: "c" }] })
    await queue.drain()
    await queue.sweep()
    expect((await queue.getJob(drained.id))?.error).toMatchObject({ child: { outcome: "removed" } })
    const { queue: other, parent } = await deadChild()
    await other.clean("dead")
    await other.sweep()
    expect((await other.getJob(parent))?.state).toBe("dead")
  })
})

describe("cancel", () => {
  it('a parent waiting for children can be cancelled; a cancelled child fails its parent under "fail"', async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const waiting = await queue.addFlow({ payload: "p", children: [{ payload: "c" }] })
    expect(await queue.cancel(waiting.id)).toBe("waiting-children")
    expect((await queue.stats()).waitingChildren).toBe(0)
    const failing = await queue.addFlow({ payload: "p2", onChildFailure: "fail", children: [{ payload: "c2" }] })
    expect(await queue.cancel(failing.children[0]!.id)).toBe("waiting")
    await queue.sweep()
    expect((await queue.getJob(failing.id))?.error).toMatchObject({ child: { outcome: "cancelled" } })
  })
})

describe("open, addChildren, seal", () => {
  it("an open parent never runs; children added while it waits; it runs once sealed and they completed", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const parent = await queue.add("end", { open: true })
    const [a] = await queue.addChildren(parent, [{ payload: "a" }])
    const [ja] = await queue.reserve()
    await queue.complete(a!.id, ja!.token)
    expect((await queue.getJob(parent))?.state).toBe("waiting-children")
    await queue.addChildren(parent, [{ payload: "b" }])
    await queue.seal(parent)
    await expect(queue.addChildren(parent, [{ payload: "late" }])).rejects.toMatchObject({ field: "parentId" })
    const [jb] = await queue.reserve()
    await queue.complete(jb!.id, jb!.token)
    expect((await queue.getJob(parent))?.state).toBe("waiting")
  })

  it("the parent's dependencies-done event is in the stream", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const tree = await queue.addFlow({ payload: "p", children: [{ payload: "c" }] })
    const [c] = await queue.reserve()
    await queue.complete(c!.id, c!.token)
    const kinds: string[] = []
    for await (const e of queue.events({ from: "0" })) {
      if (e.jobId === tree.id) kinds.push(e.kind)
      if (e.kind === "dependencies-done") break
    }
    expect(kinds).toContain("dependencies-done")
  })
})

describe("verify", () => {
  it("finds no violation in a queue with parents waiting for children", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const tree = await queue.addFlow({ payload: "p", children: [{ payload: "c" }, { payload: "d" }] })
    expect((await queue.verify()).lines).toEqual([])
    const text = await renderExposition({ prefix: "leaseq", queues: [await queue.stats()], notRead: 0, unreadable: [] })
    expect(text).toContain(`leaseq_jobs{queue="${q}",state="waiting-children"} 1`)
    const listed = await queue.getJobs("waiting-children")
    expect(listed.jobs.map((j) => j.id)).toEqual([tree.id])
    // a count that disagrees with the children is reported
    await shared.raw.hset(queueKeys(q).depCount, tree.id, 5)
    expect((await queue.verify()).lines).toEqual([`deps-count ${tree.id} counts 5 pending but 2 of its children are`])
  })
})
