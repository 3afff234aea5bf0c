/**
 * The metrics endpoint's bounds: at most `maxQueues` queues exported (the rest counted in
 * `leaseq_queues_not_exported`), and with Redis not answering a scrape is answered 503
 * within `readTimeoutMs` (2 s by default), so a real Prometheus with a 3 s
 * `scrape_timeout` records the reason instead of "context deadline exceeded".
 */
import { spawnSync } from "node:child_process"
import { join, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { Queue } from "../../src/index.ts"
import { metricsHandler } from "../../src/metrics.ts"
import { freePort } from "../../src/testing/RedisServer.ts"
import { startChild } from "../support/child.ts"
import { onCleanup } from "../support/cleanup.ts"
import { startPrometheus } from "../support/prometheus.ts"
import { proxyToSuiteRedis } from "../support/proxy.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"
import { serveLoopback } from "../support/serve.ts"
import { until } from "../support/until.ts"

const ROOT = resolve(import.meta.dirname, "../..")
const name = queueNamer("mbounds")

/** A server for `handler` on a free loopback port. */
const serve = (handler: (req: never, res: never) => void): Promise<number> => serveLoopback(handler as never)

describe("the metrics endpoint's bounds", () => {
  it("exports at most maxQueues queues, the first by name, and counts the rest in leaseq_queues_not_exported", async () => {
    const prefix = "lqmbounds1"
    const names = [name(), name(), name()].sort()
    for (const n of names) {
      const q = new Queue<number>(n, { connection: redisUrl(), prefix })
      onCleanup(() => q.close())
      await q.add(1)
    }
    const handler = metricsHandler({ connection: redisUrl(), prefix, maxQueues: 2 })
    onCleanup(() => handler.close())
    const text = await handler.render()
    const exported = [...new Set([...text.matchAll(/^leaseq_jobs\{queue="([^"]+)"/gm)].map((m) => m[1]))]
    expect(exported).toEqual(names.slice(0, 2))
    expect(text).toContain("leaseq_queues_not_exported 1")
    const check = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" })
    expect(check.stdout + check.stderr).toBe("")
    // the same cap from the CLI
    const cliPort = await freePort()
    const cli = startChild(join(ROOT, "src/cli/main.ts"), [
      "metrics",
      ...["--url", redisUrl(), "--prefix", prefix, "--listen", `127.0.0.1:${cliPort}`, "--max-queues", "1"],
    ])
    await until("the exporter listening", () => cli.stderr().includes("serving metrics"))
    const served = await (await fetch(`http://127.0.0.1:${cliPort}/metrics`)).text()
    expect(served).toContain("leaseq_queues_not_exported 2")
  })

  it("with Redis not answering, a Prometheus with scrape_timeout 3s records the 503 and its reason", async () => {
    const prefix = "lqmbounds2"
    const q = new Queue<number>(name(), { connection: redisUrl(), prefix })
    onCleanup(() => q.close())
    await q.add(1)
    const proxy = await proxyToSuiteRedis()
    const handler = metricsHandler({ connection: proxy.url, prefix, cacheMs: 0 })
    onCleanup(() => handler.close())
    expect(await handler.render()).toContain(`queue="${q.name}"`)
    const port = await serve(handler)
    proxy.freeze()
    const promPort = await startPrometheus(`127.0.0.1:${port}`, ["scrape_interval: 4s", "scrape_timeout: 3s"])

    const lastError = await until(
      "Prometheus to have scraped the target once",
      async () => {
        const res = await fetch(`http://127.0.0.1:${promPort}/api/v1/targets`).catch(() => undefined)
        if (res?.status !== 200) return undefined
        const body = (await res.json()) as { data: { activeTargets: Array<{ lastError: string; health: string }> } }
        const t = body.data.activeTargets[0]
        return t !== undefined && t.health !== "unknown" ? t.lastError : undefined
      },
      { everyMs: 200, timeoutMs: 30_000 },
    )
    expect(lastError).toContain("503")
    proxy.heal()
  })
})
