/**
 * The flow limits in the Prometheus exposition: the limits set (absent when not), the
 * RateLimited hold, the reserves held back by each limit (a `limit` label of three
 * values, no label per anything else), and the snoozed and rate-limited job counters.
 */
import { spawnSync } from "node:child_process"
import { describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { metricsHandler } from "../../src/metrics.ts"
import { onCleanup } from "../support/cleanup.ts"
import { run } from "../support/jobs.ts"
import { queueNamer, redisUrl, sharedClients } from "../support/redis.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("flow-metrics")
const shared = sharedClients()

/** The value of one sample of an exposition, or undefined. */
const sample = (text: string, metric: string, labels: string): number | undefined => {
  const line = text.split("\n").find((l) => l.startsWith(`${metric}{${labels}}`))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1))
}

describe("flow limits in /metrics", () => {
  it("shows the limits, the hold and the reserves each limit held back; promtool accepts the text", async () => {
    const prefix = "lqflowm1"
    const q = name()
    const queue = useQueue<number>(q, { prefix })
    const handler = metricsHandler({ connection: redisUrl(), prefix, cacheMs: 0 })
    onCleanup(() => handler.close())
    const l = `queue="${q}"`
    await queue.addBulk([1, 2, 3, 4].map((payload) => ({ payload })))
    let text = await handler.render()
    expect(sample(text, "leaseq_rate_limit_max", l)).toBeUndefined()
    expect(sample(text, "leaseq_concurrency_limit", l)).toBeUndefined()
    expect(sample(text, "leaseq_reserves_limited_total", `${l},limit="rate"`)).toBe(0)

    await queue.setRateLimit({ max: 1, perMs: 60_000 })
    await queue.setConcurrency(10)
    const c = makeCommands(shared.client, queueKeys(q, prefix))
    const [job] = (await run(c.reserve(2, 30_000, 0))).jobs
    await run(c.reserve(2, 30_000, 0))
    await run(c.fail(job!, { delayMs: 30_000, error: "", mode: "hold" }))
    await run(c.reserve(2, 30_000, 0))
    text = await handler.render()
    expect(sample(text, "leaseq_rate_limit_max", l)).toBe(1)
    expect(sample(text, "leaseq_rate_limit_window_seconds", l)).toBe(60)
    expect(sample(text, "leaseq_concurrency_limit", l)).toBe(10)
    expect(sample(text, "leaseq_held_seconds", l)).toBeGreaterThan(29)
    expect(sample(text, "leaseq_reserves_limited_total", `${l},limit="rate"`)).toBe(2)
    expect(sample(text, "leaseq_reserves_limited_total", `${l},limit="held"`)).toBe(1)
    expect(sample(text, "leaseq_reserves_limited_total", `${l},limit="concurrency"`)).toBe(0)
    expect(sample(text, "leaseq_jobs_rate_limited_total", l)).toBe(1)
    expect(sample(text, "leaseq_jobs_snoozed_total", l)).toBe(0)
    const check = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" })
    expect(check.stdout + check.stderr).not.toMatch(/error/i)
    expect(check.status).toBe(0)
  })
})
