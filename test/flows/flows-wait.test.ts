/**
 * `waitFor(parent)` resolves when the whole flow ended (docs/flows.md): not while the parent
 * waits for children, once the parent itself completed after every child (in any queue),
 * and with the parent's end when a child's policy failed it or it was cancelled.
 */
import { describe, expect, it } from "vitest"
import { queueNamer } from "../support/redis.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("flows-wait")

describe("waitFor a parent", () => {
  it("resolves once the parent completed, after every child here and in another queue", async () => {
    const q = name()
    const q2 = name()
    const queue = useQueue<string>(q)
    const other = useQueue<string>(q2)
    const tree = await queue.addFlow({
      payload: "parent",
      children: [
        { payload: "a" },
        { payload: "b", children: [{ payload: "deep", queue: q2 }] },
        { payload: "c", queue: q2 },
      ],
    })
    const waited = queue.waitFor(tree.id, { timeoutMs: 30_000 })
    const ended: string[] = []
    const seen = new Map<string, number>()
    const run = async (job: { id: string; payload: string }) => {
      seen.set(job.id, (seen.get(job.id) ?? 0) + 1)
      ended.push(job.payload)
      return `done:${job.payload}`
    }
    useWorker<string, string>(q, run)
    useWorker<string, string>(q2, run)
    const finished = await waited
    expect(finished.state).toBe("completed")
    expect(finished.result).toBe("done:parent")
    // the parent ran last, once; each child ran once
    expect(ended.at(-1)).toBe("parent")
    expect([...ended].sort()).toEqual(["a", "b", "c", "deep", "parent"])
    expect([...seen.values()].every((n) => n === 1)).toBe(true)
    for (const c of (await queue.getDependencies(tree.id)).children) expect(c.state).toBe("completed")
    expect((await other.stats()).counters.completed).toBe(2)
  })

  it('resolves dead when a "fail" child died, and cancelled when the parent is cancelled', async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const failing = await queue.addFlow({
      payload: "parent",
      onChildFailure: "fail",
      children: [
        { payload: "bad", options: { maxAttempts: 1 } },
        { payload: "slow", options: { delayMs: 60_000 } },
      ],
    })
    const cancelled = await queue.addFlow({
      payload: "other",
      children: [{ payload: "x", options: { delayMs: 60_000 } }],
    })
    const waitDead = queue.waitFor(failing.id, { timeoutMs: 30_000 })
    const waitCancelled = queue.waitFor(cancelled.id, { timeoutMs: 30_000 })
    useWorker<string>(q, async (job) => {
      if (job.payload === "bad") throw new Error("boom")
    })
    const dead = await waitDead
    expect(dead.state).toBe("dead")
    expect(dead.error).toMatchObject({ reason: "child-failed" })
    await queue.cancel(cancelled.id)
    expect((await waitCancelled).state).toBe("cancelled")
  })
})
