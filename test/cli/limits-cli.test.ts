/**
 * `leaseq limits` run from source as a process against real Redis: show, set and clear the
 * rate limit and the concurrency cap (text and --json), a partitioned queue's set on every
 * partition, a RateLimited hold lifted (`--hold off`), bad values refused (exit 2) writing
 * nothing, and `leaseq stats` showing them.
 */
import { describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { Queue } from "../../src/index.ts"
import { runCli } from "../support/child.ts"
import { onCleanup } from "../support/cleanup.ts"
import { run } from "../support/jobs.ts"
import { dumpQueue, queueNamer, redisUrl, sharedClients } from "../support/redis.ts"

const name = queueNamer("limits-cli")
const shared = sharedClients()

describe("leaseq limits", () => {
  it("sets, shows and clears the limits; stats shows them", async () => {
    const q = name()
    const queue = new Queue(q, { connection: redisUrl() })
    onCleanup(() => queue.close())
    await queue.add(1)
    const set = await runCli(["limits", "--queue", q, "--rate", "100/1000", "--concurrency", "5", "--url", redisUrl()])
    expect(set.code).toBe(0)
    expect(set.out).toBe(`queue ${q}: rate limit 100 per 1000 ms, concurrency 5\n`)
    expect(await queue.rateLimit()).toEqual({ max: 100, perMs: 1000 })
    expect(await queue.concurrency()).toBe(5)
    const stats = await runCli(["stats", "--queue", q, "--url", redisUrl()])
    expect(stats.out).toContain("100/1000ms, max 5 active")
    const json = await runCli(["limits", "--queue", q, "--json", "--url", redisUrl()])
    expect(JSON.parse(json.out)).toEqual({
      queue: q,
      rateLimit: { max: 100, perMs: 1000 },
      concurrency: 5,
      heldMs: 0,
    })
    const off = await runCli(["limits", "--queue", q, "--rate", "off", "--concurrency", "off", "--url", redisUrl()])
    expect(off.out).toBe(`queue ${q}: rate limit none, concurrency unlimited\n`)
    expect(await queue.rateLimit()).toBeNull()
  })

  it("a partitioned queue's limit is the whole queue's, split over its partitions", async () => {
    const q = name()
    const queue = new Queue(q, { connection: redisUrl(), partitions: 2 })
    onCleanup(() => queue.close())
    await queue.addBulk([{ payload: 1 }, { payload: 2 }])
    expect((await runCli(["limits", "--queue", q, "--concurrency", "3", "--url", redisUrl()])).code).toBe(0)
    const metas = [0, 1].map((p) => `leaseq:{${q}~${p}}:meta`)
    for (const m of metas) expect(await shared.raw.hget(m, "concurrencyTotal")).toBe("3")
    const shares = await Promise.all(metas.map(async (m) => Number(await shared.raw.hget(m, "concurrency"))))
    expect(shares.reduce((a, b) => a + b, 0)).toBe(3)
    expect((await runCli(["limits", "--queue", q, "--url", redisUrl()])).out).toContain("concurrency 3")
    expect(await queue.concurrency()).toBe(3)
  })

  it("--hold off lifts a RateLimited hold (a partitioned queue: every partition's)", async () => {
    const q = name()
    const queue = new Queue<number>(q, { connection: redisUrl(), partitions: 2 })
    onCleanup(() => queue.close())
    await queue.addBulk(Array.from({ length: 20 }, (_, n) => ({ payload: n })))
    for (const p of [0, 1]) {
      const c = makeCommands(shared.client, queueKeys(`${q}~${p}`))
      const [job] = (await run(c.reserve(1, 30_000, 0))).jobs
      await run(c.fail(job!, { delayMs: 86_400_000, error: "", mode: "hold" }))
    }
    expect((await runCli(["limits", "--queue", q, "--url", redisUrl()])).out).toContain("(RateLimited)")
    const off = await runCli(["limits", "--queue", q, "--hold", "off", "--url", redisUrl()])
    expect(off.code).toBe(0)
    expect(off.out).toBe(`queue ${q}: rate limit none, concurrency unlimited\n`)
    for (const p of [0, 1]) expect(await shared.raw.hget(`leaseq:{${q}~${p}}:meta`, "heldUntil")).toBeNull()
  })

  it.each([
    ["--hold", "on", "hold"],
    ["--rate", "0/1000", "max"],
    ["--rate", "10/0", "perMs"],
    ["--rate", "fast", "rate"],
    ["--concurrency", "-1", "concurrency"],
  ])("%s %s is refused naming %s, exit 2, nothing written", async (flag, value, field) => {
    const q = name()
    const queue = new Queue(q, { connection: redisUrl() })
    onCleanup(() => queue.close())
    await queue.add(1)
    const before = await dumpQueue(shared.raw, q)
    const r = await runCli(["limits", "--queue", q, flag, value, "--url", redisUrl()])
    expect(r.code).toBe(2)
    expect(r.err).toContain(`invalid option ${field} = `)
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })
})
