/**
 * Fan-in in the complete script (docs/architecture.md, flows): once a command set has learnt
 * the queue of its children's parents (its peer, calls/FanIn.ts), each complete carries that
 * queue's keys and releases the parent the moment its last child completes — no outbox note,
 * no drain, no sweep, no reserve in between — with the child's result kept on the parent's
 * edge. A parent of any other queue keeps the outbox; a re-send or a re-completed retry counts
 * nothing twice.
 */
import { describe, expect, it } from "vitest"
import { drainOutbox } from "../../src/engine/admin/Outbox.ts"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import type { Acked } from "../../src/engine/scripts/AckScripts.ts"
import { peerKeys } from "../../src/engine/scripts/Script.ts"
import { run } from "../support/jobs.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("flows-fanin")
const shared = sharedClients()

/** Queues qa (parents) and qb (children), and qb's command set taught qa as its peer by a first flow. */
const taught = async () => {
  const [qa, qb] = [name(), name()]
  const a = useQueue<string>(qa)
  const b = useQueue<string>(qb)
  const c = makeCommands(shared.client, queueKeys(qb))
  const first = await a.addFlow({ payload: "p0", children: [{ queue: qb, payload: "c0" }] })
  const [job] = await b.reserve()
  // the first complete knows no peer: its note goes to the outbox, and teaches qa
  const answer = acked(await run(c.complete([{ id: job!.id, token: job!.token }])))
  expect(answer.outbox).toEqual([`${qa}|${first.id}|${job!.id}|completed`])
  expect(c.peer.current()?.fanin).toEqual({ peer: qa, queue: qb })
  await run(drainOutbox(shared.client, queueKeys(qb)))
  expect((await a.getJob(first.id))?.state).toBe("waiting")
  // the first parent runs and ends, so qa holds only what the test adds
  const [p0] = await a.reserve()
  await a.complete(p0!.id, p0!.token)
  return { qa, qb, a, b, c }
}

/** complete's answer with its notes (Commands.complete answers it as booleans). */
const acked = (a: ReadonlyArray<boolean>): Acked => a as Acked

/** How many `dependencies-done` events the queue's stream holds for `id`. */
const doneEvents = async (q: string, id: string) => {
  const entries = (await shared.raw.xrange(queueKeys(q).events, "-", "+")) as Array<[string, string[]]>
  return entries.filter(([, f]) => f.includes("dependencies-done") && f.includes(id)).length
}

describe("fan-in in the complete script", () => {
  it("the parent is ready the moment its last child's complete answers: no note, no drain, no sweep, no reserve", async () => {
    const { qa, qb, a, b, c } = await taught()
    const tree = await a.addFlow({
      payload: "p",
      children: [
        { queue: qb, payload: "c1" },
        { queue: qb, payload: "c2" },
      ],
    })
    const jobs = await b.reserve({ count: 2 })
    const first = acked(await run(c.complete([{ id: jobs[0]!.id, token: jobs[0]!.token }])))
    expect(first.notes).toBeUndefined()
    expect((await a.getJob(tree.id))?.state).toBe("waiting-children")
    expect((await a.getDependencies(tree.id)).pending).toBe(1)
    const last = acked(await run(c.complete([{ id: jobs[1]!.id, token: jobs[1]!.token }])))
    expect([...last]).toEqual([true])
    expect(last.notes).toBeUndefined()
    expect(await shared.raw.llen(queueKeys(qb).depOutbox)).toBe(0)
    expect((await a.getJob(tree.id))?.state).toBe("waiting")
    expect(await doneEvents(qa, tree.id)).toBe(1)
    const [p] = await a.reserve()
    expect(p!.id).toBe(tree.id)
  })

  it("the parent reads the child's result from its edge, after the child's retention dropped it", async () => {
    const { a, b, c, qb } = await taught()
    await b.setRetention({ completed: { count: 0 } })
    const tree = await a.addFlow({ payload: "p", children: [{ queue: qb, payload: "c" }] })
    const [job] = await b.reserve()
    await run(c.complete([{ id: job!.id, token: job!.token, result: '{"n":42}' }]))
    expect(await shared.raw.hexists(queueKeys(qb).result, job!.id)).toBe(0)
    const page = await a.getDependencies(tree.id)
    expect(page.children.map((d) => [d.id, d.result])).toEqual([[job!.id, '{"n":42}']])
  })

  it("a fan-in complete re-sent after a lost reply answers the same and releases the parent once", async () => {
    const { qa, qb, a, b } = await taught()
    const tree = await a.addFlow({ payload: "p", children: [{ queue: qb, payload: "c" }] })
    const [job] = await b.reserve()
    const script = Scripts.complete
    const callKeys = peerKeys(script, queueKeys(qb), queueKeys(qa))
    const args = script.args({
      items: [{ id: job!.id, token: job!.token }],
      lane: "w-fanin:a0",
      fanin: { peer: qa, queue: qb },
    })
    const send = () => shared.raw.eval(script.source, callKeys.length, ...callKeys, ...args)
    expect(await send()).toEqual([1])
    expect(await send()).toEqual([1])
    expect(await doneEvents(qa, tree.id)).toBe(1)
    expect((await a.stats()).waiting).toBe(1)
    expect((await a.getDependencies(tree.id)).pending).toBe(0)
  })

  it("a finished child retried and completed again counts nothing twice: the parent runs once", async () => {
    const { qa, qb, a, b, c } = await taught()
    const tree = await a.addFlow({ payload: "p", children: [{ queue: qb, payload: "c" }] })
    const [job] = await b.reserve()
    await run(c.complete([{ id: job!.id, token: job!.token }]))
    const [p] = await a.reserve()
    expect(p!.id).toBe(tree.id)
    await a.complete(tree.id, p!.token)
    await b.retry(job!.id)
    const [again] = await b.reserve()
    expect(again!.id).toBe(job!.id)
    await run(c.complete([{ id: again!.id, token: again!.token }]))
    expect(await a.reserve()).toEqual([])
    expect(await doneEvents(qa, tree.id)).toBe(1)
    expect(await shared.raw.llen(queueKeys(qb).depOutbox)).toBe(0)
  })

  it("in one call, a parent of the peer is released in the script and a parent of a third queue gets its note", async () => {
    const { qa, qb, a, b, c } = await taught()
    const qc = name()
    const other = useQueue<string>(qc)
    const near = await a.addFlow({ payload: "near", children: [{ queue: qb, payload: "n" }] })
    const far = await other.addFlow({ payload: "far", children: [{ queue: qb, payload: "f" }] })
    const jobs = await b.reserve({ count: 2 })
    const farChild = far.children[0]!.id
    const answer = acked(await run(c.complete(jobs.map((j) => ({ id: j.id, token: j.token })))))
    expect([...answer]).toEqual([true, true])
    expect(answer.outbox).toEqual([`${qc}|${far.id}|${farChild}|completed`])
    expect((await a.getJob(near.id))?.state).toBe("waiting")
    expect((await other.getJob(far.id))?.state).toBe("waiting-children")
    await run(drainOutbox(shared.client, queueKeys(qb)))
    expect((await other.getJob(far.id))?.state).toBe("waiting")
    expect(c.peer.current()?.fanin.peer).toBe(qa)
  })

  it("a peer whose meta names another layout (an upgrade under way) gets its note in the outbox instead", async () => {
    const { qa, qb, a, b, c } = await taught()
    const tree = await a.addFlow({ payload: "p", children: [{ queue: qb, payload: "c" }] })
    const [job] = await b.reserve()
    const meta = queueKeys(qa).meta
    const layout = await shared.raw.hget(meta, "layout")
    await shared.raw.hset(meta, "layout", "999")
    const answer = acked(await run(c.complete([{ id: job!.id, token: job!.token }])))
    await shared.raw.hset(meta, "layout", layout!)
    expect(answer.outbox).toEqual([`${qa}|${tree.id}|${job!.id}|completed`])
    expect((await a.getJob(tree.id))?.state).toBe("waiting-children")
  })

  it("workers: the children's worker learns the parents' queue from its first note, then releases them in-script", async () => {
    const [qa, qb] = [name(), name()]
    const a = useQueue<string>(qa)
    const ran: string[] = []
    const errors: unknown[] = []
    useWorker<string>(qa, async (job) => void ran.push(job.payload), { sweep: false }).on("error", (e) =>
      errors.push(e),
    )
    useWorker<string>(qb, async (job) => ({ from: job.payload }), { sweep: false }).on("error", (e) => errors.push(e))
    const flow = (n: number) => a.addFlow({ payload: `p${n}`, children: [{ queue: qb, payload: `c${n}` }] })
    const first = await flow(1)
    await until("the first parent ran", () => ran.includes("p1"))
    const second = await flow(2)
    await until("the second parent ran", () => ran.includes("p2"))
    // the first went through the outbox (its note carried the result), the second through the complete
    expect((await a.getDependencies(first.id)).children.map((c) => c.value)).toEqual([{ from: "c1" }])
    expect((await a.getDependencies(second.id)).children.map((c) => c.value)).toEqual([{ from: "c2" }])
    expect(ran).toEqual(["p1", "p2"])
    expect(errors).toEqual([])
  })
})
