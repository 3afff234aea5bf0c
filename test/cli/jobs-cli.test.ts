/**
 * `leaseq job`, `leaseq cancel`, `leaseq pause`, `leaseq resume`, `leaseq retention`, run from source as a
 * process against real Redis: text and --json, exit codes, partitioned queues, bad input
 * writing nothing, and the commands listed in the help.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Queue } from "../../src/index.ts"
import { runCli } from "../support/child.ts"
import { onCleanup } from "../support/cleanup.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"

const name = queueNamer("jobs-cli")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** `leaseq <args> --url <suite redis>` from source on this Node (24) (test/support/child.ts `runCli`). */
const leaseq = async (args: ReadonlyArray<string>, withUrl = true): Promise<Run> => {
  const r = await runCli([...args, ...(withUrl ? ["--url", redisUrl()] : [])])
  return { code: r.code, stdout: r.out, stderr: r.err }
}

const queue = (partitions = 1) => {
  const q = name()
  const queue = new Queue<{ to: string }>(q, { connection: redisUrl(), partitions })
  onCleanup(() => queue.close())
  return { q, queue }
}

describe("leaseq job / cancel / pause / resume", () => {
  it("job shows a job in text and JSON; cancel cancels it; an unknown id is not an error", async () => {
    const { q, queue: jobs } = queue()
    const id = await jobs.add({ to: "a@example.com" }, { dedupeKey: "a", priority: 7 })
    const text = await leaseq(["job", id, "--queue", q])
    expect(text).toMatchObject({ code: 0, stderr: "" })
    expect(text.stdout).toContain(`id:          ${id}`)
    expect(text.stdout).toContain("state:       waiting")
    expect(text.stdout).toContain("priority:    7")
    expect(text.stdout).toContain("dedupe key:  a")
    const json = await leaseq(["job", id, "--queue", q, "--json"])
    expect(JSON.parse(json.stdout)).toMatchObject({
      queue: q,
      found: true,
      id,
      state: "waiting",
      payload: { to: "a@example.com" },
      attempt: 1,
      priority: 7,
    })

    const cancelled = await leaseq(["cancel", id, "--queue", q, "--json"])
    expect(cancelled.code).toBe(0)
    expect(JSON.parse(cancelled.stdout)).toEqual({ queue: q, id, cancelled: true, was: "waiting" })
    const again = await leaseq(["cancel", id, "--queue", q])
    expect(again).toMatchObject({ code: 0, stderr: "" })
    expect(again.stdout).toContain("not cancelled: unknown or already finished")

    const missing = await leaseq(["job", "01NEVERADDED0000000000000X", "--queue", q, "--json"])
    expect(missing.code).toBe(0)
    expect(JSON.parse(missing.stdout)).toEqual({ queue: q, found: false, id: "01NEVERADDED0000000000000X" })
  })

  it("job and jobs show when a custom id's job was added (it was blank: read from the id)", async () => {
    const { q, queue: jobs } = queue()
    await jobs.add({ to: "a@example.com" }, { id: "order-42" })
    const added = new Date((await jobs.getJob("order-42"))!.addedAt).toISOString()
    expect(added.startsWith("1970")).toBe(false)
    const one = await leaseq(["job", "order-42", "--queue", q])
    expect(one.stdout).toContain(`added:       ${added}`)
    const page = await leaseq(["jobs", "--queue", q, "--state", "waiting"])
    expect(page.stdout).toMatch(new RegExp(`order-42 +${added.replace(/\./g, "\\.")} `))
  })

  it("pause and resume a partitioned queue (every partition); job and cancel find the partition", async () => {
    const { q, queue: jobs } = queue(3)
    const ids = await jobs.addBulk([{ payload: { to: "x" } }, { payload: { to: "y" } }, { payload: { to: "z" } }])
    expect(JSON.parse((await leaseq(["pause", "--queue", q, "--json"])).stdout)).toEqual({
      queue: q,
      action: "pause",
      changed: true,
    })
    expect(await jobs.isPaused()).toBe(true)
    for (let i = 0; i < 3; i++) expect(await raw.hget(`leaseq:{${q}~${i}}:meta`, "paused")).toBe("1")
    expect((await leaseq(["pause", "--queue", q])).stdout).toBe(`queue ${q}: already paused\n`)
    // stats marks a paused queue (each partition) in text, and says paused in JSON
    const stats = await leaseq(["stats", "--queue", q])
    expect(stats.stdout).toContain(`${q}~0 (paused)`)
    const statsJson = JSON.parse((await leaseq(["stats", "--queue", q, "--json"])).stdout)
    expect(statsJson.queues.map((s: { paused: boolean }) => s.paused)).toEqual([true, true, true])
    expect((await leaseq(["resume", "--queue", q])).stdout).toBe(`queue ${q}: resumed\n`)
    expect(await jobs.isPaused()).toBe(false)
    const found = JSON.parse((await leaseq(["job", ids[2]!, "--queue", q, "--json"])).stdout)
    expect(found).toMatchObject({ found: true, state: "waiting", payload: { to: "z" } })
    expect((await leaseq(["cancel", ids[2]!, "--queue", q])).stdout).toContain("cancelled (it was waiting)")
    expect((await jobs.stats()).waiting).toBe(2)
  })

  it("bad input exits 2 with one line naming the problem, and writes nothing", async () => {
    const { q, queue: jobs } = queue()
    await jobs.add({ to: "a" })
    const before = await dumpQueue(raw, q)
    const cases: Array<[ReadonlyArray<string>, RegExp]> = [
      [["cancel", "x".repeat(200), "--queue", q], /id.*must be a job id/],
      [["job", "01X", "--queue", "a{b"], /invalid queue name/],
      [["pause"], /required option '--queue <name>'/],
      [["cancel", "--queue", q], /missing required argument 'id'/],
    ]
    for (const [args, message] of cases) {
      const r = await leaseq(args)
      expect(r.code).toBe(2)
      expect(r.stderr.trimEnd()).not.toContain("\n")
      expect(r.stderr).toMatch(message)
    }
    expect(await dumpQueue(raw, q)).toEqual(before)
  })

  it("retention shows the policy (the defaults), --set stores one on every partition, a bad one exits 2 writing nothing", async () => {
    const { q, queue: jobs } = queue(2)
    await jobs.addBulk([{ payload: { to: "x" } }, { payload: { to: "y" } }]) // the CLI finds the partitions by their keys
    const shown = await leaseq(["retention", "--queue", q])
    expect(shown).toMatchObject({ code: 0, stderr: "" })
    expect(shown.stdout).toBe(
      `queue ${q} keeps finished jobs:\n  completed  at most 1000, for 3600000 ms\n  cancelled  at most 1000, for 3600000 ms\n  dead       no bound (kept until retried or purged)\n`,
    )
    const set = await leaseq([
      "retention",
      "--queue",
      q,
      "--json",
      "--set",
      '{"completed":{"count":5},"dead":{"ageMs":60000}}',
    ])
    expect(JSON.parse(set.stdout)).toEqual({
      queue: q,
      set: true,
      retention: {
        completed: { count: 5, ageMs: 3_600_000 },
        cancelled: { count: 1000, ageMs: 3_600_000 },
        dead: { ageMs: 60_000 },
      },
    })
    for (let i = 0; i < 2; i++) expect(await raw.hget(`leaseq:{${q}~${i}}:meta`, "keep")).toBe("5")
    expect((await jobs.retention()).dead).toEqual({ ageMs: 60_000 })
    const before = [await dumpQueue(raw, `${q}~0`), await dumpQueue(raw, `${q}~1`)]
    for (const bad of ['{"completed":{"count":-1}}', "{not json"]) {
      const r = await leaseq(["retention", "--queue", q, "--set", bad])
      expect(r.code).toBe(2)
      expect(r.stderr.trimEnd()).not.toContain("\n")
      expect(r.stderr).toMatch(bad.startsWith("{n") ? /--set/ : /retention\.completed\.count/)
    }
    expect([await dumpQueue(raw, `${q}~0`), await dumpQueue(raw, `${q}~1`)]).toEqual(before)
  })

  it("the help lists the new commands", async () => {
    const help = await leaseq(["--help"], false)
    expect(help.code).toBe(0)
    for (const command of [
      "job [options] <id>",
      "cancel [options] <id>",
      "pause [options]",
      "resume [options]",
      "retention [options]",
    ]) {
      expect(help.stdout).toContain(command)
    }
  })
})
