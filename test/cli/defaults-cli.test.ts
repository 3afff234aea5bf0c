/**
 * Issue 34, CLI ergonomics: `leaseq jobs` without `--state` lists the waiting jobs and says
 * so; `leaseq workers` without `--queue` covers every queue under the prefix (as `stats`);
 * `leaseq stats` shows completed and failed totals and their per-second rates. The CLI is
 * spawned from source on this Node (24) against the suite's Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { formatStats, queueRate, statsReport } from "../../src/cli/Admin.ts"
import { makeCommands, type QueueStats } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { connect, type RedisClient } from "../../src/redis/Client.ts"
import { runCli } from "../support/child.ts"
import { newJob, run } from "../support/jobs.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"

const name = queueNamer("defaults-cli")
let client: RedisClient
beforeAll(() => {
  client = connect(redisUrl())
})
afterAll(async () => {
  await client.close()
})

/** `leaseq <args> --url <suite redis>` from source on this Node (24) (test/support/child.ts `runCli`). */
const leaseq = async (
  args: ReadonlyArray<string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> => {
  const r = await runCli([...args, "--url", redisUrl()])
  return { code: r.code, stdout: r.out, stderr: r.err }
}

/** The commands of a fresh queue under `prefix`, its keys deleted after the file. */
const fresh = (prefix?: string) => {
  const keys = queueKeys(name(), prefix)
  return { keys, c: makeCommands(client, keys) }
}

const worker = (id: string) => ({
  id,
  json: JSON.stringify({ id, host: "box", pid: 7, concurrency: 4, running: 1, state: "running", startedAt: 1_000 }),
  ttlMs: 60_000,
})

describe("leaseq jobs without --state", () => {
  it("lists the waiting jobs and says in the header that waiting is the default", async () => {
    const { keys, c } = fresh()
    const [a, b] = [newJob(), newJob()]
    await run(c.add([a, b]))
    await run(c.add([newJob({ delayMs: 60_000 })]))
    const text = await leaseq(["jobs", "--queue", keys.queue])
    expect(text.stderr).toBe("")
    expect(text.code).toBe(0)
    expect(text.stdout).toContain(`queue ${keys.queue}: 2 of 2 waiting jobs (the default state; --state delayed|`)
    expect(text.stdout).toContain(a.id)
    const json = JSON.parse((await leaseq(["jobs", "--queue", keys.queue, "--json"])).stdout)
    expect(json.state).toBe("waiting")
    expect(json.jobs.map((j: { id: string }) => j.id).sort()).toEqual([a.id, b.id].sort())
    // named, the header carries no note
    const named = await leaseq(["jobs", "--queue", keys.queue, "--state", "delayed"])
    expect(named.stdout).toMatch(new RegExp(`queue ${keys.queue}: 1 of 1 delayed jobs\\n`))
  })
})

describe("leaseq workers without --queue", () => {
  it("lists the workers of every queue under the prefix; --queue still narrows", async () => {
    const prefix = name("prefix")
    const one = fresh(prefix)
    const two = fresh(prefix)
    await run(one.c.add([newJob()])) // a queue is found by its meta key, which add writes
    await run(two.c.add([newJob()]))
    await run(one.c.extend([], 10_000, worker("w-one")))
    await run(two.c.extend([], 10_000, worker("w-two")))
    const all = await leaseq(["workers", "--prefix", prefix, "--json"])
    expect(all.code).toBe(0)
    const report = JSON.parse(all.stdout)
    expect(report.queue).toBeUndefined()
    expect([...report.queues].sort()).toEqual([one.keys.queue, two.keys.queue].sort())
    expect(report.workers.map((w: { id: string; queue: string }) => [w.id, w.queue]).sort()).toEqual(
      [
        ["w-one", one.keys.queue],
        ["w-two", two.keys.queue],
      ].sort(),
    )
    const text = await leaseq(["workers", "--prefix", prefix])
    expect(text.stdout).toMatch(new RegExp(`w-one\\s+${one.keys.queue}\\s+running\\s+1/4`))
    expect(text.stdout).toMatch(new RegExp(`w-two\\s+${two.keys.queue}\\s+running`))
    const narrowed = JSON.parse(
      (await leaseq(["workers", "--prefix", prefix, "--queue", two.keys.queue, "--json"])).stdout,
    )
    expect(narrowed.queue).toBe(two.keys.queue)
    expect(narrowed.workers.map((w: { id: string }) => w.id)).toEqual(["w-two"])
    const none = await leaseq(["workers", "--prefix", name("empty")])
    expect(none.code).toBe(0)
    expect(none.stdout).toMatch(/no live workers/)
  })
})

describe("leaseq stats: completed and failed, with rates", () => {
  it("shows completed jobs and failed attempts per queue and in the totals", async () => {
    const { keys, c } = fresh()
    await run(c.add([newJob(), newJob(), newJob()]))
    const { jobs } = await run(c.reserve(3, 60_000, 0))
    await run(c.complete(jobs.slice(0, 2).map((j) => ({ id: j.id, token: j.token }))))
    await run(c.fail(jobs[2]!, { delayMs: 0, error: JSON.stringify({ message: "boom" }), mode: "retry" }))
    const json = JSON.parse((await leaseq(["stats", "--queue", keys.queue, "--json", "--rate-ms", "20"])).stdout)
    expect(json.totals).toMatchObject({ completed: 2, failed: 1 })
    // nothing ran between the two readings: both rates are 0 over the 20 ms window
    expect(json.rateWindowMs).toBe(20)
    expect(json.rates).toEqual([{ queue: keys.queue, completedPerSec: 0, failedPerSec: 0 }])
    const text = await leaseq(["stats", "--queue", keys.queue, "--rate-ms", "20"])
    expect(text.stdout).toMatch(/DEAD\s+COMPLETED\s+FAILED\s+COMPLETED\/S\s+FAILED\/S\s+OLDEST WAITING/)
    expect(text.stdout).toMatch(new RegExp(`${keys.queue}\\s+1\\s+0\\s+0\\s+0\\s+0\\s+2\\s+1\\s+0\\.0\\s+0\\.0`))
    expect(text.stdout).toContain("rates: per second over")
    const noRates = await leaseq(["stats", "--queue", keys.queue, "--rate-ms", "0"])
    expect(noRates.stdout).toMatch(new RegExp(`${keys.queue}\\s+1\\s+0\\s+0\\s+0\\s+0\\s+2\\s+1\\s+-\\s+-`))
    expect(noRates.stdout).toContain("rates: not measured (--rate-ms 0)")
    const bad = await leaseq(["stats", "--queue", keys.queue, "--rate-ms", "-1"])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--rate-ms/)
  })

  it("a rate is the counters' growth per second between the two readings", () => {
    const at = (completed: number, failed: number) =>
      ({ queue: "q", counters: { completed, failed } }) as unknown as QueueStats
    expect(queueRate(at(10, 4), at(40, 5), 2_000)).toEqual({ queue: "q", completedPerSec: 15, failedPerSec: 0.5 })
    // a counter that went down (the queue obliterated and made again) reads 0, not a negative rate
    expect(queueRate(at(10, 4), at(3, 4), 1_000)).toMatchObject({ completedPerSec: 0 })
    const stats = {
      ...at(40, 5),
      waiting: 0,
      active: 0,
      expired: 0,
      delayed: 0,
      dead: 0,
      paused: false,
      oldestWaitingAgeMs: 0,
      limits: { rateLimit: null, concurrency: null, heldMs: 0 },
    } as unknown as QueueStats
    const text = formatStats(
      statsReport("leaseq", [stats], { windowMs: 2_000, queues: [queueRate(at(10, 4), at(40, 5), 2_000)] }),
    )
    expect(text).toMatch(/^q\s+0\s+0\s+0\s+0\s+0\s+40\s+5\s+15\.0\s+0\.5\s+-\s+-/m)
  })
})
