/**
 * Flows (jobs that wait for other jobs, docs/flows.md) against real Redis: a tree over
 * queues, the parent's state and counts, depending on jobs that exist, a shared child
 * (BullMQ #1021), the all-or-nothing checks, and a parent that reads its children.
 */
import { describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { InvalidOptions, InvalidPayload } from "../../src/index.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("flows")
const shared = sharedClients()

describe("addFlow", () => {
  it("a parent waits in waiting-children until its children (two queues) completed, then runs once", async () => {
    const [qa, qb] = [name(), name()]
    const a = useQueue<string>(qa)
    const b = useQueue<string>(qb)
    const tree = await a.addFlow({
      payload: "parent",
      children: [{ payload: "c1" }, { queue: qb, payload: "c2", children: [{ payload: "g1" }] }],
    })
    expect(tree.children).toHaveLength(2)
    expect(tree.children[1]!.queue).toBe(qb)
    expect((await a.getJob(tree.id))?.state).toBe("waiting-children")
    expect((await b.getJob(tree.children[1]!.id))?.state).toBe("waiting-children")
    expect((await a.stats()).waitingChildren).toBe(1)
    expect((await a.stats()).waiting).toBe(1)
    const runs: string[] = []
    useWorker<string>(qa, async (job) => void runs.push(job.payload), { sweep: { intervalMs: 50, limit: 500 } })
    useWorker<string>(qb, async (job) => void runs.push(job.payload), { sweep: { intervalMs: 50, limit: 500 } })
    await until("the parent ran", () => runs.includes("parent"))
    expect(runs.indexOf("g1")).toBeLessThan(runs.indexOf("c2"))
    expect(runs.indexOf("c2")).toBeLessThan(runs.indexOf("parent"))
    expect(runs.indexOf("c1")).toBeLessThan(runs.indexOf("parent"))
    await until("all completed", async () => (await a.stats()).counters.completed === 2)
    expect(runs.filter((r) => r === "parent")).toHaveLength(1)
    const deps = await a.getDependencies(tree.id)
    expect(deps.pending).toBe(0)
    expect(deps.children.map((c) => c.state)).toEqual(["completed", "completed"])
  })

  it("with no sweep, the worker that acked the last child (another queue) drains its outbox at once", async () => {
    const [qa, qb] = [name(), name()]
    const a = useQueue<string>(qa)
    const tree = await a.addFlow({ payload: "parent", children: [{ queue: qb, payload: "child" }] })
    const runs: string[] = []
    useWorker<string>(qb, async (job) => void runs.push(job.payload), { sweep: false })
    useWorker<string>(qa, async (job) => void runs.push(job.payload), { sweep: false })
    await until("the parent ran", () => runs.includes("parent"))
    expect(runs).toEqual(["child", "parent"])
    expect(await shared.raw.llen(queueKeys(qb).depOutbox)).toBe(0)
    expect((await a.getJob(tree.id))?.state).not.toBe("waiting-children")
  })

  it("refuses a bad node anywhere by its path, and writes nothing", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const bad = queue.addFlow({
      payload: "p",
      children: [{ payload: "a" }, { payload: "b", children: [{ payload: "c", options: { priority: -1 } }] }],
    })
    await expect(bad).rejects.toBeInstanceOf(InvalidOptions)
    await expect(bad).rejects.toMatchObject({ field: "children[1].children[0].options.priority" })
    expect(await shared.raw.exists(queueKeys(q).data)).toBe(0)
  })

  it("refuses a payload JSON cannot hold anywhere by its path, and writes nothing", async () => {
    const q = name()
    const queue = useQueue<unknown>(q)
    const bad = queue.addFlow({
      payload: "p",
      children: [{ payload: "a" }, { payload: "b", children: [{ payload: "c" }, { payload: { n: 1n } }] }],
    })
    await expect(bad).rejects.toBeInstanceOf(InvalidPayload)
    await expect(bad).rejects.toMatchObject({ field: "children[1].children[1].payload" })
    expect(await shared.raw.exists(queueKeys(q).data)).toBe(0)
  })

  it("a node without options takes its queue's defaults, one with options its own", async () => {
    const [qa, qb] = [name(), name()]
    const a = useQueue<string>(qa, { defaultJobOptions: { maxAttempts: 5 } })
    useQueue<string>(qb)
    const tree = await a.addFlow({
      payload: "p",
      children: [
        { payload: "same" },
        { payload: "own", options: { maxAttempts: 7 } },
        { payload: "other", queue: qb },
        { payload: "same again" },
      ],
    })
    const [same, own, other, again] = tree.children.map((c) => c.id)
    const max = queueKeys(qa).max
    expect(await shared.raw.hmget(max, tree.id, same!, own!, again!)).toEqual(["5", "5", "7", "5"])
    // another queue's node takes that queue's defaults (none here: 3, not recorded)
    expect(await shared.raw.hget(queueKeys(qb).max, other!)).toBeNull()
    // one id each: the defaults are shared, the ids are not
    expect(new Set([tree.id, same, own, other, again]).size).toBe(5)
  })
})

describe("job.dependencies()", () => {
  it("the parent's handler reads its children's results, paged", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const tree = await queue.addFlow({ payload: "sum", children: [1, 2, 3].map((n) => ({ payload: String(n) })) })
    let seen: Array<string | undefined> = []
    let pages = 0
    let foreign: unknown
    useWorker<string>(q, async (job) => {
      if (job.payload !== "sum") return Number(job.payload) * 10
      // "0|" sorts before every id: from it the lex range would start at other parents' children
      foreign = await job.dependencies!({ cursor: "0|" }).then(
        () => "read",
        (e: unknown) => (e as { field?: string }).field,
      )
      let cursor: string | undefined
      do {
        const page = await job.dependencies!({ cursor, count: 2 })
        pages++
        seen = [...seen, ...page.children.map((c) => c.result)]
        cursor = page.cursor
      } while (cursor)
      return "ok"
    })
    await queue.waitFor(tree.id, { timeoutMs: 10_000 })
    expect(seen.sort()).toEqual(["10", "20", "30"])
    expect(pages).toBe(2)
    expect(foreign).toBe("cursor")
  })
})

describe("dependsOn", () => {
  it("a completed (retained) job counts at once; a missing one is refused and nothing is written", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const first = await queue.add("first")
    const runs: string[] = []
    useWorker<string>(q, async (job) => void runs.push(job.payload))
    await until("first completed", async () => (await queue.getJob(first))?.state === "completed")
    const missing = queue.add("needs-missing", { dependsOn: [first, "NOPE"] })
    await expect(missing).rejects.toMatchObject({ field: "dependsOn[1]" })
    await queue.add("after", { dependsOn: [first] })
    await until("after ran", () => runs.includes("after"))
    expect(runs).not.toContain("needs-missing")
  })

  it("a child shared by two parents runs both (BullMQ #1021)", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const child = await queue.add("child", { delayMs: 300 })
    await queue.add("p1", { dependsOn: [child] })
    await queue.add("p2", { dependsOn: [child] })
    expect((await queue.stats()).waitingChildren).toBe(2)
    const runs: string[] = []
    useWorker<string>(q, async (job) => void runs.push(job.payload))
    await until("both parents ran", () => runs.includes("p1") && runs.includes("p2"))
    expect(runs.indexOf("child")).toBe(0)
    expect(runs.filter((r) => r === "child")).toHaveLength(1)
  })
})

describe("getDependencies' cursor", () => {
  it("refuses a cursor that is not the parent's own (it would read other parents' children), reading nothing", async () => {
    const q = name()
    const queue = useQueue<string>(q)
    const keys = queueKeys(q)
    // "o|…" sorts before "p|…", and "pa|…" between "p" and "p|": the lex range would reach both
    for (const id of ["o", "p", "pa"])
      await queue.addFlow({ payload: id, options: { id }, children: [{ payload: `${id}1` }, { payload: `${id}2` }] })
    const before = await shared.raw.zrange(keys.depChildren, "0", "-1")
    const own = await queue.getDependencies("p", { count: 1 })
    expect(own.cursor?.startsWith("p|")).toBe(true)
    for (const cursor of ["o|", "p", "pa|", "x", "|"]) {
      const read = queue.getDependencies("p", { cursor })
      await expect(read, cursor).rejects.toBeInstanceOf(InvalidOptions)
      await expect(read, cursor).rejects.toMatchObject({ field: "cursor", value: cursor })
      await expect(read, cursor).rejects.toThrow(/starts with "p\|"/)
    }
    expect(await shared.raw.zrange(keys.depChildren, "0", "-1")).toEqual(before)
    // the parent's own cursor still pages its children, and only them
    const rest = await queue.getDependencies("p", { cursor: own.cursor, count: 10 })
    const ids = [...own.children, ...rest.children].map((c) => c.id)
    const mine = (await queue.getJob("p"))!
    expect(ids).toHaveLength(2)
    expect(mine.state).toBe("waiting-children")
    for (const id of ids) expect((await queue.getJob(id))?.payload).toMatch(/^p\d$/)
    expect(rest.cursor).toBeUndefined()
  })
})
