/**
 * `leaseq groups --queue <name>`, run from source as a process against real Redis: text and
 * --json, paging with --cursor, a partitioned queue, a bad --count refused, and a printed
 * cursor line that is safe to paste into a shell whatever the group's name (N1).
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { runCli } from "../support/child.ts"
import { onCleanup } from "../support/cleanup.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("groups-cli")

describe("leaseq groups", () => {
  it("lists the groups with waiting, active, paused and limits; --cursor pages on; --json", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    await queue.setGroupLimits({ concurrency: 4 })
    await queue.setGroupLimits("beta", { max: 10, perMs: 1000 })
    await queue.add(1, { group: "alpha" })
    await queue.add(2, { group: "alpha" })
    await queue.add(3, { group: "beta" })
    await queue.pauseGroup("beta")
    const text = await runCli(["groups", "--queue", q, "--count", "1", "--url", redisUrl()])
    expect(text.code).toBe(0)
    expect(text.out).toBe(
      `queue ${q}: 1 group(s); default limits concurrency=4\nalpha  waiting 2  active 0  limits -\nmore: --cursor YWxwaGE\n`,
    )
    const json = await runCli(["groups", "--queue", q, "--cursor", "YWxwaGE", "--json", "--url", redisUrl()])
    expect(JSON.parse(json.out)).toEqual({
      queue: q,
      groups: [{ group: "beta", waiting: 1, active: 0, paused: true, limits: { max: 10, perMs: 1000 } }],
      defaults: { concurrency: 4 },
    })
  })

  it("a partitioned queue is listed partition by partition; a bad --count is a usage error", async () => {
    const q = name()
    const queue = useQueue<number>(q, { partitions: 2 })
    await queue.add(1, { group: "g1" })
    await queue.add(2, { group: "g2" })
    const seen: Array<string> = []
    let cursor: string | undefined
    do {
      const r = await runCli([
        "groups",
        "--queue",
        q,
        "--json",
        "--url",
        redisUrl(),
        ...(cursor ? ["--cursor", cursor] : []),
      ])
      const page = JSON.parse(r.out) as { groups: Array<{ group: string }>; cursor?: string }
      seen.push(...page.groups.map((g) => g.group))
      cursor = page.cursor
    } while (cursor)
    expect(seen.sort()).toEqual(["g1", "g2"])
    const bad = await runCli(["groups", "--queue", q, "--count", "0", "--url", redisUrl()])
    expect(bad.code).toBe(2)
    expect(bad.err).toContain("--count must be from 1 to 1000")
  })

  it("a printed cursor pasted into bash runs nothing and goes on after that group, whatever its name (N1)", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const dir = mkdtempSync(join(tmpdir(), "leaseq-n1-"))
    onCleanup(() => rmSync(dir, { recursive: true, force: true }))
    const mark = join(dir, "pwned")
    const hostile = `b'; touch ${mark}; echo '$(touch ${mark})\`touch ${mark}\`\u001b[31m`
    await queue.add(1, { group: "a" })
    await queue.add(2, { group: hostile })
    await queue.add(3, { group: "c" })
    const first = await runCli(["groups", "--queue", q, "--count", "2", "--url", redisUrl()])
    expect(first.code).toBe(0)
    const line = first.out.split("\n").find((l) => l.startsWith("more: "))
    expect(line).toBeDefined()
    // What an operator pastes, run by bash with `leaseq` a stub that prints its arguments, one a line.
    const pasted = `leaseq groups --queue ${q} ${line?.slice("more: ".length)}`
    const argv = execFileSync("bash", ["-c", `leaseq() { printf '%s\\n' "$@"; }; ${pasted}`], { encoding: "utf8" })
    expect(existsSync(mark)).toBe(false)
    const args = argv.trimEnd().split("\n")
    expect(args.slice(0, 4)).toEqual(["groups", "--queue", q, "--cursor"])
    expect(args).toHaveLength(5)
    const next = await runCli(["groups", "--queue", q, "--cursor", args[4] ?? "", "--json", "--url", redisUrl()])
    expect((JSON.parse(next.out) as { groups: Array<{ group: string }> }).groups.map((g) => g.group)).toEqual(["c"])
    const bad = await runCli(["groups", "--queue", q, "--cursor", "b'x", "--url", redisUrl()])
    expect(bad.code).toBe(2)
    expect(bad.err).toContain("is not a cursor leaseq groups printed")
  })
})
