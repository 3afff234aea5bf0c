/**
 * Cancelling a parent (docs/flows.md, "Cancel, obliterate, clean"): its pending children no
 * other parent waits on are cancelled too, recursively, in any queue, by the sweep a bounded
 * page a call; `{ children: "keep" }` keeps them; a child another waiting parent shares is
 * kept. No parent is left with a dangling count, and verify stays clean.
 */
import { describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { InvalidOptions } from "../../src/index.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("flows-cancel")
const shared = sharedClients()

const stateOf = async (queue: { getJob: (id: string) => Promise<{ state: string } | undefined> }, id: string) =>
  (await queue.getJob(id))?.state

describe("cancel a parent", () => {
  it("cancels its pending children here and in another queue (waiting, delayed, active), not a completed one", async () => {
    const q = name()
    const q2 = name()
    const queue = useQueue<string>(q)
    const other = useQueue<string>(q2)
    const tree = await queue.addFlow({
      payload: "parent",
      children: [
        { payload: "done" },
        { payload: "later", options: { delayMs: 60_000 } },
        { payload: "running" },
        { payload: "elsewhere", queue: q2 },
      ],
    })
    const [done, later, running, elsewhere] = tree.children.map((c) => c.id)
    const [first] = await queue.reserve()
    expect(first!.id).toBe(done)
    await queue.complete(done!, first!.token)
    const [held] = await queue.reserve()
    expect(held!.id).toBe(running)

    expect(await queue.cancel(tree.id)).toBe("waiting-children")
    await queue.sweep()
    expect(await stateOf(queue, later!)).toBe("cancelled")
    expect(await stateOf(queue, running!)).toBe("cancelled")
    expect(await stateOf(queue, done!)).toBe("completed")
    // the other queue's child: a note in this queue's outbox, applied there, cancelled by its sweep
    await other.sweep()
    expect(await stateOf(other, elsewhere!)).toBe("cancelled")
    // the active child's holder is refused
    await expect(queue.complete(running!, held!.token)).rejects.toThrow(/cancel/i)
    expect((await queue.stats()).counters.cancelled).toBe(3)
    for (const k of [queueKeys(q), queueKeys(q2)]) {
      expect(await shared.raw.exists(k.depGone, k.depOutbox)).toBe(0)
      expect(await shared.raw.hkeys(k.depCount)).toEqual([])
    }
    expect((await queue.verify()).lines).toEqual([])
    expect((await other.verify()).lines).toEqual([])
  })

  it("recursively: a child that waits for its own children cancels them too", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const tree = await queue.addFlow({
      payload: "root",
      children: [{ payload: "mid", children: [{ payload: "leaf-1" }, { payload: "leaf-2" }] }],
    })
    const mid = tree.children[0]!
    await queue.cancel(tree.id)
    await queue.sweep()
    expect(await stateOf(queue, mid.id)).toBe("cancelled")
    for (const leaf of mid.children) expect(await stateOf(queue, leaf.id)).toBe("cancelled")
    expect((await queue.stats()).waiting).toBe(0)
    expect((await queue.verify()).lines).toEqual([])
  })

  it('{ children: "keep" } keeps them; a kept child that completes leaves no count behind', async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const tree = await queue.addFlow({ payload: "parent", children: [{ payload: "a" }, { payload: "b" }] })
    expect(await queue.cancel(tree.id, { children: "keep" })).toBe("waiting-children")
    await queue.sweep()
    for (const c of tree.children) expect(await stateOf(queue, c.id)).toBe("waiting")
    const [a] = await queue.reserve()
    await queue.complete(a!.id, a!.token)
    // the cancelled parent counts nothing more: no depCount field (it went -1 before)
    expect(await shared.raw.hkeys(queueKeys(q).depCount)).toEqual([])
    expect(await stateOf(queue, tree.id)).toBe("cancelled")
    expect((await queue.verify()).lines).toEqual([])
  })

  it("a child another waiting parent shares is kept, and that parent still runs", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const shared1 = await queue.add("shared")
    const p1 = await queue.add("p1", { dependsOn: [shared1] })
    const p2 = await queue.add("p2", { dependsOn: [shared1] })
    await queue.cancel(p1)
    await queue.sweep()
    expect(await stateOf(queue, shared1)).toBe("waiting")
    const [c] = await queue.reserve()
    expect(c!.id).toBe(shared1)
    await queue.complete(c!.id, c!.token)
    const [p] = await queue.reserve()
    expect(p!.id).toBe(p2)
    expect((await queue.verify()).lines).toEqual([])
  })

  it("a shared child whose other parent is in another queue is kept (that queue is out of the child's reach)", async () => {
    const q = name()
    const q2 = name()
    const queue = useQueue<string>(q)
    const other = useQueue<string>(q2)
    const child = await queue.add("shared")
    const here = await queue.add("here", { dependsOn: [child] })
    await other.add("there", { dependsOn: [{ queue: q, id: child }] })
    await queue.cancel(here)
    await queue.sweep()
    expect(await stateOf(queue, child)).toBe("waiting")
    expect((await queue.verify()).lines).toEqual([])
  })

  it("a parent of 2,500 children: cancelled in bounded sweep calls (no call O(children))", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const children = Array.from({ length: 2500 }, (_, i) => ({ payload: `c${i}` }))
    const tree = await queue.addFlow({ payload: "parent", children })
    await queue.cancel(tree.id)
    const pass = await queue.sweep({ limit: 1000 })
    // each call reads at most 1,000 edges or cancels at most 1,000 jobs: 2,500 + 2,500 > 4 calls
    expect(pass.calls).toBeGreaterThan(4)
    const stats = await queue.stats()
    expect(stats.waiting).toBe(0)
    expect(stats.counters.cancelled).toBe(2501)
    expect(await shared.raw.exists(queueKeys(q).depGone)).toBe(0)
    expect((await queue.verify()).lines).toEqual([])
  })

  it("a bad children option is refused by name and changes nothing", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const tree = await queue.addFlow({ payload: "parent", children: [{ payload: "a" }] })
    const bad = await queue.cancel(tree.id, { children: "drop" as "keep" }).catch((e: unknown) => e)
    expect(bad).toBeInstanceOf(InvalidOptions)
    expect(String(bad)).toMatch(/children.*drop/s)
    expect(await stateOf(queue, tree.id)).toBe("waiting-children")
  })
})
