/**
 * A multi-call addFlow cut part-way (docs/flows.md, "What holds"): its connection is cut
 * after each of its calls in turn (the proxy lets k replies through, swallows the next, then
 * cuts), and the writer never comes back. No parent runs early, and once the build deadline
 * passed the sweep leaves no parent waiting: an unsealed one dies, reason flow-incomplete.
 * A flow in one queue is one call (nothing to cut between).
 */
import { describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { InvalidOptions } from "../../src/index.ts"
import { proxyToSuiteRedis } from "../support/proxy.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("flows-build")
const shared = sharedClients()

/** root (A) ← x (B) ← y1, y2 (C); root ← z (A): eight calls (adds, registrations, two seals). */
const flowOf = (qb: string, qc: string, tag = "") => ({
  payload: `${tag}root`,
  children: [
    {
      queue: qb,
      payload: `${tag}x`,
      children: [
        { queue: qc, payload: `${tag}y1` },
        { queue: qc, payload: `${tag}y2` },
      ],
    },
    { payload: `${tag}z` },
  ],
})
const CALLS = 8

describe("a multi-call addFlow cut part-way", () => {
  it.each(Array.from({ length: CALLS - 1 }, (_, k) => k + 1))(
    "cut after call %i: no parent runs early, and after the deadline none waits",
    async (calls) => {
      const [qa, qb, qc] = [name(), name(), name()]
      const proxy = await proxyToSuiteRedis()
      const writer = useQueue<string>(qa, { connection: proxy.url, callTimeoutMs: 1000 })
      // every script the flow uses loaded (a NOSCRIPT reply would count as a call): this
      // flow is written whole, and runs to its end beside the one cut
      await writer.addFlow(flowOf(qb, qc, "warm-"))
      const direct = [useQueue<string>(qa), useQueue<string>(qb), useQueue<string>(qc)]

      proxy.dropReplies(calls - 1)
      const outcome = writer.addFlow(flowOf(qb, qc), { buildTimeoutMs: 1000 }).then(
        () => "added",
        (e: unknown) => String(e),
      )
      await until("the cut call reached Redis", () => proxy.droppedReplies > 0)
      proxy.cut()
      expect(await outcome).not.toBe("added")
      await writer.close()

      // what the writer left, and its nodes' children, as Redis holds them
      const building = await Promise.all([qa, qb, qc].map((q) => shared.raw.zcard(queueKeys(q).depBuild)))
      expect(building.reduce((a, b) => a + b, 0)).toBeGreaterThan(0)

      const ran: string[] = []
      const done = new Set<string>()
      const early: string[] = []
      for (const q of [qa, qb, qc])
        useWorker<string>(
          q,
          async (job) => {
            const deps = await job.dependencies?.({ count: 100 })
            if (deps?.children.some((c) => c.state === "pending")) early.push(job.payload)
            for (const c of deps?.children ?? []) if (!done.has(c.id)) early.push(`${job.payload}<-${c.id}`)
            ran.push(job.payload)
            done.add(job.id)
          },
          { sweep: { intervalMs: 50, limit: 500 } },
        )
      await until(
        "no parent waits for children",
        async () => {
          const s = await Promise.all(direct.map((q) => q.stats()))
          return s.every((x) => x.waitingChildren === 0 && x.waiting === 0 && x.active === 0)
        },
        { timeoutMs: 20_000 },
      )
      expect(early).toEqual([])
      expect(ran).not.toContain("root")
      const dead = (await direct[0]!.getJobs("dead")).jobs
      expect(dead.map((j) => j.payload)).toEqual(["root"])
      const error = (await direct[0]!.getJob(dead[0]!.id))?.error as { reason?: string } | undefined
      expect(error?.reason).toBe("flow-incomplete")
      for (const q of [qa, qb, qc]) expect(await shared.raw.zcard(queueKeys(q).depBuild)).toBe(0)
    },
  )

  it("a flow in one queue is one call: cut after it, the whole flow is written and sealed", async () => {
    const q = name()
    const proxy = await proxyToSuiteRedis()
    const writer = useQueue<string>(q, { connection: proxy.url, callTimeoutMs: 1000 })
    await writer.stats()
    const flow = {
      payload: "root",
      children: Array.from({ length: 20 }, (_, i) => ({ payload: `c${i}`, children: [{ payload: `g${i}` }] })),
    }
    await writer.addFlow({ payload: "warm" })
    proxy.dropReplies()
    const outcome = writer.addFlow(flow).catch((e: unknown) => e)
    await until("the call reached Redis", () => proxy.droppedReplies > 0)
    proxy.cut()
    await outcome
    await writer.close()
    const queue = useQueue<string>(q)
    expect(await shared.raw.zcard(queueKeys(q).depBuild)).toBe(0)
    const parents = (await queue.getJobs("waiting-children", { count: 100 })).jobs
    expect(parents.map((j) => j.payload).sort()).toEqual(
      ["root", ...Array.from({ length: 20 }, (_, i) => `c${i}`)].sort(),
    )
    for (const p of parents) expect((await queue.getDependencies(p.id)).open).toBe(false)
    expect((await queue.stats()).waiting).toBe(21) // the 20 leaves and the warm job
  })

  it("a parent whose custom id names a job that exists and waits for nothing is refused; its child is not added", async () => {
    const queue = useQueue<string>(name())
    await queue.add("already", { id: "taken" })
    const refused = await queue
      .addFlow({ payload: "p", options: { id: "taken" }, children: [{ payload: "c" }] })
      .catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(InvalidOptions)
    expect((refused as InvalidOptions).message).toContain("not waiting for children")
    expect((await queue.stats()).waiting).toBe(1)
  })
})
