/**
 * `leaseq flow <id>`, run from source as a process against real Redis: a two-level flow over
 * two queues as a text tree and as JSON, the --max and --depth bounds counted on "… n more"
 * lines, a job with no children, and bad input (exit 2, nothing written).
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Queue } from "../../src/index.ts"
import { runCli } from "../support/child.ts"
import { onCleanup } from "../support/cleanup.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"

const name = queueNamer("flow-cli")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

const leaseq = async (args: ReadonlyArray<string>) => {
  const r = await runCli([...args, "--url", redisUrl()])
  return { code: r.code, stdout: r.out, stderr: r.err }
}

const queue = () => {
  const q = name()
  const queue = new Queue<string>(q, { connection: redisUrl() })
  onCleanup(() => queue.close())
  return { q, queue }
}

/** A report (in qa) waiting for a fetch (in qb) and a merge (in qa) that waits for two parts (in qb). */
const twoLevels = async () => {
  const a = queue()
  const b = queue()
  const tree = await a.queue.addFlow({
    payload: "report",
    options: { name: "report" },
    children: [
      { queue: b.q, payload: "fetch", options: { name: "fetch" } },
      {
        payload: "merge",
        children: [
          { queue: b.q, payload: "part-1" },
          { queue: b.q, payload: "part-2" },
        ],
      },
    ],
  })
  return { qa: a.q, qb: b.q, tree }
}

describe("leaseq flow", () => {
  it("prints a two-level flow over two queues as a tree, and as JSON", async () => {
    const { qa, qb, tree } = await twoLevels()
    const [fetch, merge] = tree.children as [(typeof tree.children)[0], (typeof tree.children)[0]]
    const [p1, p2] = merge.children.map((c) => c.id) as [string, string]
    const text = await leaseq(["flow", tree.id, "--queue", qa])
    expect(text).toMatchObject({ code: 0, stderr: "" })
    const lines = text.stdout.trimEnd().split("\n")
    expect(lines[0]).toBe(`${qa} ${tree.id} report waiting-children`)
    expect(lines).toContain(`  ${qb} ${fetch.id} fetch waiting`)
    expect(lines).toContain(`  ${qa} ${merge.id} waiting-children`)
    expect(lines).toContain(`    ${qb} ${p1} waiting`)
    expect(lines).toContain(`    ${qb} ${p2} waiting`)
    expect(lines).toHaveLength(5)

    const json = await leaseq(["flow", tree.id, "--queue", qa, "--json"])
    expect(json.code).toBe(0)
    const root = JSON.parse(json.stdout)
    expect(root).toMatchObject({ queue: qa, id: tree.id, name: "report", state: "waiting-children", more: 0 })
    const byId = new Map(root.children.map((c: { id: string }) => [c.id, c]))
    expect(byId.get(fetch.id)).toMatchObject({ queue: qb, name: "fetch", state: "waiting", children: [] })
    expect(byId.get(merge.id)).toMatchObject({ queue: qa, state: "waiting-children" })
    expect((byId.get(merge.id) as { children: Array<{ id: string }> }).children.map((c) => c.id).sort()).toEqual(
      [p1, p2].sort(),
    )
  })

  it("--max and --depth bound what is printed and count the rest on '… n more' lines", async () => {
    const { qa, tree } = await twoLevels()
    const capped = await leaseq(["flow", tree.id, "--queue", qa, "--max", "2", "--json"])
    const root = JSON.parse(capped.stdout)
    expect(root.children).toHaveLength(1)
    expect(root.more).toBe(1)
    const text = await leaseq(["flow", tree.id, "--queue", qa, "--max", "2"])
    expect(text.stdout.trimEnd().split("\n")).toHaveLength(3)
    expect(text.stdout).toContain("  … 1 more")

    const shallow = await leaseq(["flow", tree.id, "--queue", qa, "--depth", "0"])
    expect(shallow.code).toBe(0)
    const lines = shallow.stdout.trimEnd().split("\n")
    expect(lines).toHaveLength(2)
    expect(lines[1]).toBe("  … 2 more")
  })

  it("a job that is not a parent prints itself with 'no children'", async () => {
    const { q, queue: jobs } = queue()
    const id = await jobs.add("alone")
    const text = await leaseq(["flow", id, "--queue", q])
    expect(text).toMatchObject({ code: 0, stderr: "" })
    expect(text.stdout).toBe(`${q} ${id} waiting (no children)\n`)
  })

  it("bad input: a clear error, exit 2, nothing printed and nothing written", async () => {
    const { qa, tree } = await twoLevels()
    const before = await dumpQueue(raw, qa)
    for (const [args, says] of [
      [["flow", "a|b", "--queue", qa], /a\|b/],
      [["flow", tree.id, "--queue", qa, "--depth", "x"], /--depth must be a whole number/],
      [["flow", tree.id, "--queue", qa, "--max", "0"], /--max must be from 1/],
      [["flow", tree.id], /--queue/],
    ] as const) {
      const r = await leaseq(args)
      expect(r.code).toBe(2)
      expect(r.stdout).toBe("")
      expect(r.stderr).toMatch(says)
    }
    expect(await dumpQueue(raw, qa)).toEqual(before)
  })
})
