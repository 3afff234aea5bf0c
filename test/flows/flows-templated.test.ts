/**
 * A flow's add sent templated (lua/add.lua's header, "Templated"): each run of jobs with the
 * same options and parent (a parent's children) shares one template, 2 arguments a job. Each
 * job still gets its own options, a flow of jobs all unlike goes plain, and a re-sent
 * templated add writes nothing (MONITOR on a server of the test's own shows which form ran).
 */
import { describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { startRedisServer } from "../../src/testing/RedisServer.ts"
import { onCleanup } from "../support/cleanup.ts"
import { run } from "../support/jobs.ts"
import { type Monitor, monitorOf } from "../support/monitor.ts"
import { dumpQueue, queueNamer, sharedClients } from "../support/redis.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("flows-templated")
const shared = sharedClients()

/** The third ARGV entry (the job count, "t<n>" when templated) and the ARGV length of each add call seen. */
const addCalls = async (monitor: Monitor) => {
  await monitor.caughtUp()
  return monitor.seen
    .filter((c) => c.source !== "lua" && c.args[0]?.toLowerCase() === "evalsha" && c.args[1] === Scripts.add.sha)
    .map((c) => {
      const argv = c.args.slice(3 + Number(c.args[2]))
      return { n: argv[2], argc: argv.length }
    })
}

describe("a flow's templated add", () => {
  it("gives each job its own options when runs of children differ, in 2 arguments a job", async () => {
    const server = await startRedisServer()
    onCleanup(() => server.stop())
    const q = name()
    const queue = useQueue<string>(q, { connection: server.url })
    await queue.stats() // the scripts loaded: the add below is one EVALSHA
    const monitor = await monitorOf(server.url)
    // runs of children alike (a template each), the first of the last run a parent itself
    const runs = [
      { count: 4, options: undefined },
      { count: 3, options: { priority: 7, maxAttempts: 5 } },
      { count: 3, options: { timeoutMs: 1234 } },
      { count: 2, options: undefined },
    ]
    const children = runs.flatMap((r, k) =>
      Array.from({ length: r.count }, (_, i) => ({
        payload: `r${k}.${i}`,
        options: r.options,
        children: k === 3 && i === 0 ? [{ payload: "grandchild", options: { priority: 3 } }] : undefined,
      })),
    )
    const tree = await queue.addFlow({ payload: "root", children })
    const calls = await addCalls(monitor)
    expect(calls).toHaveLength(1)
    expect(calls[0]!.n).toBe("t14")
    // 4 fixed entries, a template (a count, 10 fields) a run: the root, the 4 runs, the last
    // run's second child (its parent's run broken), the grandchild; then 2 entries a job
    expect(calls[0]!.argc).toBe(4 + 11 * 7 + 2 * 14)
    const got = await Promise.all(tree.children.map((c) => queue.getJob(c.id)))
    expect(got.map((j) => j?.payload)).toEqual(children.map((c) => c.payload))
    expect(got.map((j) => j?.priority)).toEqual(runs.flatMap((r, k) => Array(r.count).fill(k === 1 ? 7 : 0)))
    expect(got.map((j) => j?.maxAttempts)).toEqual(runs.flatMap((r, k) => Array(r.count).fill(k === 1 ? 5 : 3)))
    expect(got.map((j) => j?.timeoutMs)).toEqual(
      runs.flatMap((r, k) => Array(r.count).fill(k === 2 ? 1234 : undefined)),
    )
    expect(got.map((j) => j?.state)).toEqual(children.map((c) => (c.children ? "waiting-children" : "waiting")))
    const grandchild = await queue.getJob(tree.children[10]!.children[0]!.id)
    expect(grandchild).toMatchObject({ payload: "grandchild", priority: 3, state: "waiting" })
    expect((await queue.getJob(tree.id))?.state).toBe("waiting-children")
    expect((await queue.getDependencies(tree.id, { count: 100 })).pending).toBe(12)
  })

  it("goes plain when no two jobs in a row share their options (templates would be longer)", async () => {
    const server = await startRedisServer()
    onCleanup(() => server.stop())
    const q = name()
    const queue = useQueue<string>(q, { connection: server.url })
    await queue.stats()
    const monitor = await monitorOf(server.url)
    const tree = await queue.addFlow({
      payload: "root",
      children: [1, 2, 3].map((p) => ({ payload: `c${p}`, options: { priority: p } })),
    })
    const calls = await addCalls(monitor)
    expect(calls).toEqual([{ n: "4", argc: 3 + 12 * 4 }])
    const got = await Promise.all(tree.children.map((c) => queue.getJob(c.id)))
    expect(got.map((j) => [j?.payload, j?.priority])).toEqual([
      ["c1", 1],
      ["c2", 2],
      ["c3", 3],
    ])
  })

  it("answers no ids, and re-sent with its request id writes nothing", async () => {
    const q = name()
    const keys = queueKeys(q)
    onCleanup(async () => void (await shared.raw.del(...Object.values(keys).slice(2))))
    const c = makeCommands(shared.client, keys)
    const job = (id: string, deps: string) => ({
      id,
      payload: `"${id}"`,
      delayMs: 0,
      maxAttempts: 3,
      dedupeKey: "",
      dedupeTtlMs: 0,
      deps,
    })
    const jobs = [job("root", "s;"), ...["a", "b", "c"].map((id) => job(id, "0;|root;wait"))]
    expect(Scripts.add.args({ requestId: "r", jobs })[2]).toBe("t4")
    // a templated call answers no ids: its caller drew them
    expect(await run(c.add(jobs, "req-1"))).toEqual([])
    expect(await shared.raw.hmget(keys.data, "root", "a", "b", "c")).toEqual(['"root"', '"a"', '"b"', '"c"'])
    const before = await dumpQueue(shared.raw, q)
    expect(await run(c.add(jobs, "req-1"))).toEqual([])
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
    expect((await run(c.add([job("x", "")], "req-2")))[0]).toBe("x")
    expect(await shared.raw.hget(keys.data, "a")).toBe('"a"')
  })
})
