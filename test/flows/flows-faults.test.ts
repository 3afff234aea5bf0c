/**
 * Flows under Redis faults, on a redis-server of this file's own (its config changed freely):
 * children completing while a 3 s script keeps Redis BUSY (`busy-reply-threshold 100`) still
 * release their parent exactly once; and over `maxmemory` with `noeviction` an addFlow is
 * refused writing nothing, a seal (which frees a parent, growing nothing) still runs, and an
 * obliterate of a child's queue, which must tell the parent first, is refused writing nothing,
 * then succeeds once memory is back.
 */
import type { Redis } from "ioredis"
import { beforeAll, describe, expect, it, onTestFinished } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { type LocalRedis, startRedisServer } from "../../src/testing/RedisServer.ts"
import { BUSY_SCRIPT } from "../support/busy.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { dumpQueue, queueNamer, rawClient } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("flows-faults")
let server: LocalRedis
let raw: Redis

beforeAll(async () => {
  server = await startRedisServer({ args: ["--busy-reply-threshold", "100", "--maxmemory-policy", "noeviction"] })
  raw = rawClient(server.url)
  return async () => {
    raw.disconnect()
    await server.stop()
  }
})

/** A client of this file's server, closed after the test. */
const client = () => {
  const c = rawClient(server.url)
  onCleanup(() => c.disconnect())
  return c
}

describe("children completing while Redis is BUSY", () => {
  it("the parent runs once, after every child ran once; verify is clean", async () => {
    const [qa, qb] = [name(), name()]
    const connection = server.url
    const a = useQueue<string>(qa, { connection })
    const b = useQueue<string>(qb, { connection })
    const payloads = Array.from({ length: 12 }, (_, i) => `c${i}`)
    const tree = await a.addFlow({
      payload: "parent",
      children: payloads.map((p, i) => (i % 2 === 0 ? { payload: p } : { queue: qb, payload: p })),
    })
    const release = deferred()
    onCleanup(async () => release.resolve())
    const runs: string[] = []
    const handler = async (job: { readonly payload: string }) => {
      runs.push(job.payload)
      if (job.payload !== "parent") await release.promise
      return job.payload
    }
    // leases far longer than the busy spell: a lease lost to it would show as a second run
    const options = { connection, concurrency: 12, leaseMs: 20_000, sweep: { intervalMs: 100 } }
    const errors: string[] = []
    for (const q of [qa, qb])
      useWorker<string>(q, handler, options).on("error", (e) => errors.push(e instanceof Error ? e.message : String(e)))
    await until("every child running", () => runs.length === payloads.length)
    const slow = client().eval(BUSY_SCRIPT, 0, 3_000)
    const probe = client()
    await until("Redis answering BUSY", () =>
      probe.ping().then(
        () => false,
        (e: Error) => e.message.startsWith("BUSY"),
      ),
    )
    // every child's handler ends while Redis refuses every call: the completes meet BUSY
    release.resolve()
    expect(Number(await slow)).toBeGreaterThan(0)
    await a.waitFor(tree.id, { timeoutMs: 30_000 })
    await until("the children completed", async () => {
      const [sa, sb] = [await a.stats(), await b.stats()]
      return sa.counters.completed + sb.counters.completed === payloads.length + 1
    })
    // the workers met the busy spell (their calls refused BUSY), and went on
    expect(errors.some((m) => m.includes("BUSY"))).toBe(true)
    expect(runs.filter((r) => r === "parent")).toHaveLength(1)
    expect(runs.filter((r) => r !== "parent").sort()).toEqual([...payloads].sort())
    expect(runs.at(-1)).toBe("parent")
    expect((await a.getJob(tree.id))?.state).toBe("completed")
    const deps = await a.getDependencies(tree.id)
    expect(deps.pending).toBe(0)
    expect(deps.children.map((c) => c.state)).toEqual(payloads.map(() => "completed"))
    for (const q of [a, b]) {
      expect((await q.verify()).lines).toEqual([])
      expect((await q.stats()).counters).toMatchObject({ lostLeases: 0, dead: 0 })
    }
  })
})

describe("over maxmemory (noeviction)", () => {
  /** Set maxmemory just under what Redis holds, so every write that grows memory is refused (OOM). */
  const overMemory = async () => {
    onTestFinished(async () => {
      await raw.config("SET", "maxmemory", "0")
    })
    const used = Number(/used_memory:(\d+)/.exec(await raw.info("memory"))![1])
    await raw.config("SET", "maxmemory", String(used - 256 * 1024))
    await expect(raw.set(name("probe"), "x")).rejects.toThrow(/OOM/)
  }

  it("addFlow is refused writing nothing, seal still runs, an obliterate of a child's queue is refused writing nothing and runs once memory is back", async () => {
    const [qa, qb, qc] = [name(), name(), name()]
    const connection = server.url
    const a = useQueue<string>(qa, { connection })
    const b = useQueue<string>(qb, { connection })
    // an open parent whose one child completed: sealing it frees it
    const open = await a.add("open", { open: true })
    const [child] = await a.addChildren(open, [{ payload: "done" }])
    const [leased] = await a.reserve()
    expect(leased?.id).toBe(child!.id)
    await a.complete(leased!.id, leased!.token)
    expect((await a.getJob(open))?.state).toBe("waiting-children")
    // a parent waiting on a child in another queue: obliterating that queue must tell it
    const waiting = await a.addFlow({ payload: "waits", children: [{ queue: qb, payload: "there" }] })
    const dumps = async () => [await dumpQueue(raw, qa), await dumpQueue(raw, qb), await dumpQueue(raw, qc)]
    // the refusals below are compared with what is there once Redis is full (the OOM probe wrote nothing)
    await overMemory()
    const before = await dumps()

    const flow = a.addFlow({
      payload: "refused",
      children: [{ payload: "x" }, { queue: qc, payload: "y", children: [{ payload: "z" }] }],
    })
    await expect(flow).rejects.toThrow(/OOM/)
    await expect(b.obliterate()).rejects.toThrow(/OOM/)
    expect(await dumps()).toEqual(before)
    expect(await raw.exists(queueKeys(qc).data, queueKeys(qc).meta)).toBe(0)

    await a.seal(open)
    expect((await a.getJob(open))?.state).toBe("waiting")
    expect((await a.getJob(waiting.id))?.state).toBe("waiting-children")
    expect((await b.getJob(waiting.children[0]!.id))?.state).toBe("waiting")

    await raw.config("SET", "maxmemory", "0")
    await b.obliterate()
    expect(await raw.exists(queueKeys(qb).data, queueKeys(qb).meta)).toBe(0)
    const parent = await a.getJob(waiting.id)
    expect(parent?.state).toBe("dead")
    expect(parent?.error).toMatchObject({ reason: "child-failed", child: { queue: qb, outcome: "removed" } })
    expect((await a.verify()).lines).toEqual([])
  })
})
