/**
 * A child's end counts once for its parent, under the faults the suite injects: a complete
 * re-sent after a lost reply (the same call twice), a lease that expired and was reclaimed
 * by the sweep (the old holder's late complete refused), a finished child retried and
 * completed again, notes applied twice (a drainer that died between apply and removal),
 * and a worker SIGKILLed right after its child's ack (its outbox drained by the sweep).
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { drainOutbox } from "../../src/engine/admin/Outbox.ts"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { scriptKeys } from "../../src/engine/scripts/Script.ts"
import { startWorkerChild } from "../support/child.ts"
import { run } from "../support/jobs.ts"
import { queueNamer, redisUrl, sharedClients } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("flows-once")
const shared = sharedClients()

/** A parent in `qa` waiting for one child in `qb` (another queue: its note goes through the outbox). */
const flowOfOne = async (qa: string, qb: string) => {
  const a = useQueue<string>(qa)
  const b = useQueue<string>(qb)
  const tree = await a.addFlow({ payload: "parent", children: [{ queue: qb, payload: "child" }] })
  return { a, b, parent: tree.id, child: tree.children[0]!.id }
}

describe("exactly once", () => {
  it("a complete sent twice (the same call: a re-send after a lost reply) leaves one note, counted once", async () => {
    const [qa, qb] = [name(), name()]
    const { a, b, parent, child } = await flowOfOne(qa, qb)
    const [job] = await b.reserve()
    expect(job!.id).toBe(child)
    const keys = queueKeys(qb)
    const script = Scripts.complete
    const args = script.args({ items: [{ id: child, token: job!.token }], lane: "w1:a0" })
    const send = () => shared.raw.eval(script.source, script.keys.length, ...scriptKeys(script, keys), ...args)
    // the first answer carries the note it left (the worker applies it without reading the
    // outbox); the re-send answers the statuses alone and leaves no second note
    expect(await send()).toEqual([2, `${qa}|${parent}|${child}|completed`])
    expect(await send()).toEqual([2])
    expect(await shared.raw.llen(keys.depOutbox)).toBe(1)
    await b.sweep()
    await b.sweep()
    expect(await shared.raw.llen(keys.depOutbox)).toBe(0)
    expect((await a.getJob(parent))?.state).toBe("waiting")
    expect((await a.stats()).waiting).toBe(1)
    expect((await a.getDependencies(parent)).pending).toBe(0)
  })

  it("a reserve re-sent after a lost reply, its rider a child that left notes (status 2), answers the same and counts the child once", async () => {
    const [qa, qb] = [name(), name()]
    const { a, b, parent, child } = await flowOfOne(qa, qb)
    const [job] = await b.reserve()
    expect(job!.id).toBe(child)
    await b.add("next")
    const c = makeCommands(shared.client, queueKeys(qb))
    const send = () =>
      run(c.reserve(1, 60_000, 0, [{ id: child, token: job!.token }], { workerId: "w-resend", requestId: "7" }))
    const first = await send()
    // the same call again (its reply lost): the same rider statuses and the same lease, no error
    const again = await send()
    expect(first.completed).toEqual([true])
    expect(first.notes).toBe(true)
    expect(again.completed).toEqual(first.completed)
    expect(again.jobs.map((j) => [j.id, j.token])).toEqual(first.jobs.map((j) => [j.id, j.token]))
    await b.sweep()
    expect((await a.getJob(parent))?.state).toBe("waiting")
    expect((await a.getDependencies(parent)).pending).toBe(0)
  })

  it("a drain applies the notes a complete answered without reading them, and reads the rest", async () => {
    const [qa, qb] = [name(), name()]
    const a = useQueue<string>(qa)
    const b = useQueue<string>(qb)
    const tree = await a.addFlow({
      payload: "parent",
      children: [
        { queue: qb, payload: "c1" },
        { queue: qb, payload: "c2" },
      ],
    })
    const [c1, c2] = tree.children.map((c) => c.id)
    const keys = queueKeys(qb)
    const jobs = await b.reserve({ count: 2 })
    const script = Scripts.complete
    const complete = (id: string) => {
      const job = jobs.find((j) => j.id === id)!
      const args = script.args({ items: [{ id, token: job.token }], lane: "" })
      return shared.raw.eval(script.source, script.keys.length, ...scriptKeys(script, keys), ...args)
    }
    const [, given] = (await complete(c1!)) as [number, string]
    await complete(c2!)
    // c1's note is only given (taken out of the outbox here, so only the answer has it), c2's
    // only in the outbox (as a fail's or a reserve's rider's would be): both count
    expect(await shared.raw.lrem(keys.depOutbox, 1, given)).toBe(1)
    let asked = 0
    const applied = await Effect.runPromise(drainOutbox(shared.client, keys, 4, () => (asked++ === 0 ? [given] : [])))
    expect(applied).toBe(2)
    expect(await shared.raw.llen(keys.depOutbox)).toBe(0)
    expect((await a.getJob(tree.id))?.state).toBe("waiting")
    expect((await a.getDependencies(tree.id)).pending).toBe(0)
  })

  it("a lease reclaimed by the sweep: the old holder's late complete is refused, the new one counts once", async () => {
    const [qa, qb] = [name(), name()]
    const { a, b, parent, child } = await flowOfOne(qa, qb)
    const [first] = await b.reserve({ leaseMs: 50 })
    await until("the lease expired and was reclaimed", async () => {
      await b.sweep()
      return (await b.getJob(child))?.state === "waiting"
    })
    const [second] = await b.reserve()
    await expect(b.complete(child, first!.token)).rejects.toThrow()
    await b.complete(child, second!.token)
    await b.sweep()
    expect((await a.getJob(parent))?.state).toBe("waiting")
    const deps = await a.getDependencies(parent)
    expect(deps.pending).toBe(0)
    expect(deps.children[0]!.state).toBe("completed")
  })

  it("a completed child retried and completed again does not release its parent twice", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const tree = await queue.addFlow({ payload: "parent", children: [{ payload: "child" }] })
    const child = tree.children[0]!.id
    const [c1] = await queue.reserve()
    await queue.complete(child, c1!.token)
    const [p1] = await queue.reserve()
    expect(p1!.id).toBe(tree.id)
    await queue.complete(tree.id, p1!.token)
    await queue.retry(child)
    const [c2] = await queue.reserve()
    expect(c2!.id).toBe(child)
    await queue.complete(child, c2!.token)
    expect(await queue.reserve()).toEqual([])
    expect((await queue.stats()).counters.completed).toBe(3)
  })

  it("notes applied twice (a drainer died before it removed them) count once", async () => {
    const [qa, qb] = [name(), name()]
    const { a, b, parent, child } = await flowOfOne(qa, qb)
    const [job] = await b.reserve()
    await b.complete(child, job!.token)
    const note = { parent, queue: qb, child, outcome: "completed" as const }
    const apply = Scripts.depsApply
    const send = () =>
      shared.raw.eval(apply.source, apply.keys.length, ...scriptKeys(apply, queueKeys(qa)), ...apply.args([note]))
    expect(await send()).toEqual(["counted"])
    expect(await send()).toEqual(["again"])
    await b.sweep()
    expect((await a.stats()).waiting).toBe(1)
    expect((await a.getDependencies(parent)).pending).toBe(0)
  })

  it("a worker SIGKILLed right after its child's ack: the sweep drains what it left, the parent runs once", async () => {
    const [qa, qb] = [name(), name()]
    const { a, parent, child } = await flowOfOne(qa, qb)
    const worker = startWorkerChild(redisUrl(), qb, "work:0", { sweep: false })
    await worker.waitFor((l) => l.startsWith(`done ${child} `), "the child done")
    await worker.stop("SIGKILL")
    await a.sweep()
    const b = useQueue<string>(qb)
    await b.sweep()
    await b.sweep()
    expect(await shared.raw.llen(queueKeys(qb).depOutbox)).toBe(0)
    const [p] = await a.reserve()
    expect(p!.id).toBe(parent)
    expect(await a.reserve()).toEqual([])
  })
})
