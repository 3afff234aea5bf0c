/**
 * `leaseq workers`: the CLI, spawned on Node 24 (type stripping) against real Redis,
 * lists the live workers of a queue as their heartbeats recorded them.
 */
import { spawn } from "node:child_process"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { partitionKeys, queueKeys } from "../../src/engine/model/Keys.ts"
import { connect, type RedisClient } from "../../src/redis/Client.ts"
import { newJob, run } from "../support/jobs.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"

const ROOT = resolve(import.meta.dirname, "../..")
const NODE = join(ROOT, "node_modules/.bin/node")
const name = queueNamer("workers-cli")
let client: RedisClient
beforeAll(() => {
  client = connect(redisUrl())
})
afterAll(async () => {
  await client.close()
})

const cli = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((done, fail) => {
    const child = spawn(NODE, [join(ROOT, "src/cli/main.ts"), ...args], { env: { ...process.env, NO_COLOR: "1" } })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => {
      stdout += d
    })
    child.stderr.on("data", (d) => {
      stderr += d
    })
    child.on("error", fail)
    child.on("close", (code) => done({ code, stdout, stderr }))
  })

const record = (id: string, running: number) => ({
  id,
  json: JSON.stringify({ id, host: "box", pid: 42, concurrency: 8, running, state: "running", startedAt: 1_000 }),
  ttlMs: 60_000,
})

describe("leaseq workers", () => {
  it("lists the live workers of a queue (text and --json)", async () => {
    const queue = name()
    const c = makeCommands(client, queueKeys(queue))
    await run(c.extend([], 10_000, record("box:42:aaa", 3)))
    await run(c.extend([], 10_000, record("box:43:bbb", 0)))
    const json = await cli(["workers", "--url", redisUrl(), "--queue", queue, "--json"])
    expect(json.code).toBe(0)
    const report = JSON.parse(json.stdout)
    expect(report.queue).toBe(queue)
    expect(report.workers.map((w: { id: string; running: number }) => [w.id, w.running])).toEqual([
      ["box:42:aaa", 3],
      ["box:43:bbb", 0],
    ])
    expect(report.workers[0]).toMatchObject({ queue, host: "box", pid: 42, concurrency: 8, state: "running" })
    expect(report.now).toBeGreaterThanOrEqual(report.workers[1].lastSeenAt)
    const text = await cli(["workers", "--url", redisUrl(), "--queue", queue])
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/WORKER\s+QUEUE\s+STATE\s+RUNNING\s+LAST SEEN/)
    expect(text.stdout).toMatch(/box:42:aaa\s+\S+\s+running\s+3\/8/)
  })

  it("a partitioned queue's name covers its partitions; an empty queue says so", async () => {
    const queue = name()
    for (const i of [0, 1]) {
      const c = makeCommands(client, partitionKeys(queue, i))
      await run(c.add([newJob()])) // a partition is found by its meta key, which add writes
      await run(c.extend([], 10_000, record(`p${i}`, i)))
    }
    const json = JSON.parse((await cli(["workers", "--url", redisUrl(), "--queue", queue, "--json"])).stdout)
    expect(json.workers.map((w: { id: string; queue: string }) => [w.id, w.queue])).toEqual([
      ["p0", `${queue}~0`],
      ["p1", `${queue}~1`],
    ])
    const none = await cli(["workers", "--url", redisUrl(), "--queue", name()])
    expect(none.code).toBe(0)
    expect(none.stdout).toMatch(/no live workers on queue/)
  })

  it("is in the help; --queue is optional (every queue, see defaults-cli.test.ts) but a bad one exits 2", async () => {
    const help = await cli(["--help"])
    expect(help.stdout).toMatch(/\n\s+workers \[options\]\s+live workers of every queue/)
    const bad = await cli(["workers", "--url", redisUrl(), "--queue", "no{braces}"])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--queue/)
  })
})
