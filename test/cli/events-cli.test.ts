/**
 * `leaseq events`, run as a process (node src/cli/main.ts) against real Redis.
 */
import { spawn } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { Queue } from "../../src/index.ts"
import { COMPILE_CACHE, ROOT, startChild } from "../support/child.ts"
import { onCleanup } from "../support/cleanup.ts"
import { proxyToSuiteRedis } from "../support/proxy.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"

const name = queueNamer("events-cli")
const CLI = join(ROOT, "src/cli/main.ts")

const cli = (args: ReadonlyArray<string>) => {
  const child = startChild(CLI, [...args, "--url", redisUrl()])
  onCleanup(() => child.stop())
  return child
}
const finished = async (args: ReadonlyArray<string>) => {
  const child = cli(args)
  const { code } = await child.ended
  return { code, lines: child.lines.map((l) => l.text), stderr: child.stderr() }
}
const queue = (q: string, options: { partitions?: number } = {}) => {
  const made = new Queue<number>(q, { connection: redisUrl(), ...options })
  onCleanup(() => made.close())
  return made
}

describe("leaseq events", () => {
  it("prints the retained events and ends; --json gives one object per line", async () => {
    const q = name()
    const producer = queue(q)
    const [a, b] = await producer.addBulk([{ payload: 1 }, { payload: 2 }])
    const text = await finished(["events", "--queue", q])
    expect(text.code).toBe(0)
    expect(text.lines).toHaveLength(2)
    expect(text.lines[0]).toMatch(new RegExp(`^\\d+-\\d+\\.0 \\S+Z ${q} added ${a}$`))
    const json = await finished(["events", "--queue", q, "--json"])
    expect(json.lines.map((l) => JSON.parse(l))).toMatchObject([
      { kind: "added", jobId: a, queue: q },
      { kind: "added", jobId: b, queue: q },
    ])
    // --from an event id: only what came after it (here inside the entry both jobs of the call share)
    const after = await finished(["events", "--queue", q, "--json", "--from", JSON.parse(json.lines[0]!).eventId])
    expect(after.lines.map((l) => JSON.parse(l).jobId)).toEqual([b])
    const none = await finished(["events", "--queue", q, "--json", "--from", JSON.parse(json.lines[1]!).eventId])
    expect(none.lines).toEqual([])
  })

  it("--follow prints events as they are recorded, on every partition of a partitioned queue", async () => {
    const q = name()
    const producer = queue(q, { partitions: 2 })
    // two jobs, round robin: both partitions exist before the CLI looks for them
    const first = await producer.addBulk([{ payload: 0 }, { payload: 1 }])
    const follower = cli(["events", "--queue", q, "--from", "start", "--follow"])
    for (const id of first) await follower.waitFor((l) => l.includes(`added ${id}`), `added ${id}`)
    const ids = await producer.addBulk([{ payload: 2 }, { payload: 3 }, { payload: 4 }])
    for (const id of ids) await follower.waitFor((l) => l.includes(`added ${id}`), `added ${id}`)
    expect(new Set(follower.lines.map((l) => l.text.split(" ")[2]))).toEqual(new Set([`${q}~0`, `${q}~1`]))
  })

  it("a bad --from exits 2 naming the flag, and help lists the command", async () => {
    const bad = await finished(["events", "--queue", name(), "--from", "yesterday"])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--from.*"now", "start" or an event id/)
    const help = await finished(["--help"])
    expect(help.lines.join("\n")).toMatch(/events \[options\]/)
  })

  it("--follow ends with exit 1 and a reason when its connection is lost (the CLI does not reconnect)", async () => {
    const q = name()
    const producer = queue(q)
    const id = await producer.add(1)
    const proxy = await proxyToSuiteRedis()
    const follower = startChild(CLI, ["events", "--queue", q, "--from", "start", "--follow", "--url", proxy.url])
    onCleanup(() => follower.stop())
    await follower.waitFor((l) => l.includes(`added ${id}`), "the added event")
    proxy.cut()
    const { code } = await follower.ended
    expect(code).toBe(1)
    expect(follower.stderr()).toMatch(/^leaseq: events of queue \S+: Redis unavailable/m)
  })

  it("F14: prints each page of 1,000 before reading the next (bounded memory on a stream of any length)", async () => {
    const q = name()
    await queue(q).add(1)
    const raw = rawClient()
    onCleanup(() => raw.disconnect())
    // 2,999 more entries of about 1 KB each: a page prints far more than a pipe holds
    const pipeline = raw.pipeline()
    for (let i = 0; i < 2_999; i++)
      pipeline.xadd(queueKeys(q).events, "*", "kind", "dead", "id", `j${i}`, "reason", "r".repeat(1_000))
    await pipeline.exec()
    const child = spawn(process.execPath, [CLI, "events", "--queue", q, "--url", redisUrl()], {
      env: { NODE_COMPILE_CACHE: COMPILE_CACHE, ...process.env },
      stdio: ["ignore", "pipe", "inherit"],
    })
    onCleanup(() => child.kill("SIGKILL"))
    let out = ""
    // at the first output, stop reading (the CLI blocks on the full pipe) and delete the
    // stream: a CLI that read the whole stream before printing still prints all of it
    child.stdout.once("data", () => {
      child.stdout.pause()
      void raw.del(queueKeys(q).events).then(() => child.stdout.resume())
    })
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString()
    })
    const code = await new Promise((resolve) => child.on("close", resolve))
    expect(code).toBe(0)
    const lines = out.trimEnd().split("\n")
    expect(lines).toHaveLength(1_000)
    expect(lines[0]).toMatch(/ added /)
    expect(lines[999]).toMatch(/ dead j998 reason=r{1000}$/)
  })

  it("without --follow, merges a partitioned queue's partitions by time across pages", async () => {
    const q = name()
    await queue(q, { partitions: 2 }).addBulk([{ payload: 0 }, { payload: 1 }])
    const raw = rawClient()
    onCleanup(() => raw.disconnect())
    // 1,000 entries for partition 0 and 2,000 for partition 1, interleaved in time: a page
    // of partition 0 spans two of partition 1, so pages cannot be passed on whole
    const pipeline = raw.pipeline()
    const base = 2_000_000_000_000
    for (let i = 0; i < 3_000; i++)
      pipeline.xadd(
        queueKeys(`${q}~${i % 3 === 0 ? 0 : 1}`).events,
        `${base + i}-0`,
        "kind",
        "dead",
        "id",
        `j${i}`,
        "reason",
        "x",
      )
    await pipeline.exec()
    const { code, lines } = await finished(["events", "--queue", q, "--json"])
    expect(code).toBe(0)
    const events = lines.map((l) => JSON.parse(l))
    expect(events.slice(0, 2).map((e) => e.kind)).toEqual(["added", "added"])
    expect(events.slice(2).map((e) => e.jobId)).toEqual(Array.from({ length: 3_000 }, (_, i) => `j${i}`))
  })
})
