/**
 * The Prometheus exposition: `metricsHandler` mounted in a plain node:http server, the
 * `leaseq metrics` CLI spawned as a process, `promtool check metrics` on what it serves,
 * and a real Prometheus server scraping the CLI, read back through Prometheus' own API.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { createServer, type Server } from "node:http"
import { join, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { Queue, Worker } from "../../src/index.ts"
import { metricsHandler } from "../../src/metrics.ts"
import { freePort } from "../../src/testing/RedisServer.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { startPrometheus } from "../support/prometheus.ts"
import { proxyToSuiteRedis } from "../support/proxy.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"

const ROOT = resolve(import.meta.dirname, "../..")
const NODE = join(ROOT, "node_modules/.bin/node")
const name = queueNamer("metrics")

/** promtool and prometheus come from Debian's `prometheus` package (.ci/run installs it). */
const need = (bin: string) => {
  if (spawnSync(bin, ["--version"], { stdio: "ignore" }).status !== 0) {
    throw new Error(`${bin} not found: install Debian's prometheus package (apt-get install -y prometheus)`)
  }
}

/** A queue with `n` jobs added, of which the first `done` were completed by a worker (closed again). */
const queueWith = async (prefix: string, n: number, done: number) => {
  const q = new Queue<{ i: number }>(name(), { connection: redisUrl(), prefix })
  onCleanup(() => q.close())
  const jobs = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => ({ payload: { i: from + i } }))
  if (done > 0) {
    await q.addBulk(jobs(0, done))
    const w = new Worker<{ i: number }>(q.name, async () => {}, { connection: redisUrl(), prefix })
    onCleanup(() => w.close())
    await until("jobs completed", async () => (await q.stats()).counters.completed === done)
    await w.close()
  }
  if (n > done) await q.addBulk(jobs(done, n))
  return q
}

/** The value of one sample of an exposition, or undefined. */
const sample = (text: string, metric: string, labels: string): number | undefined => {
  const line = text.split("\n").find((l) => l.startsWith(`${metric}{${labels}}`))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1))
}

const serve = async (handler: (req: never, res: never) => void): Promise<string> => {
  const server: Server = createServer(handler as never)
  onCleanup(() => new Promise((r) => server.close(r)))
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  const a = server.address() as { port: number }
  return `http://127.0.0.1:${a.port}/metrics`
}

describe("metricsHandler", () => {
  it("exposes gauges per state and lifetime counters as _total counters, and promtool accepts the text", async () => {
    need("promtool")
    const prefix = "lqmx1"
    const q = await queueWith(prefix, 5, 2)
    const handler = metricsHandler({ connection: redisUrl(), prefix })
    onCleanup(() => handler.close())
    const res = await fetch(await serve(handler))
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toContain("text/plain")
    const text = await res.text()
    const l = `queue="${q.name}"`
    expect(sample(text, "leaseq_jobs", `${l},state="waiting"`)).toBe(3)
    expect(sample(text, "leaseq_jobs", `${l},state="active"`)).toBe(0)
    expect(sample(text, "leaseq_jobs_added_total", l)).toBe(5)
    expect(sample(text, "leaseq_jobs_completed_total", l)).toBe(2)
    expect(sample(text, "leaseq_leases_expired", l)).toBe(0)
    expect(sample(text, "leaseq_oldest_waiting_age_seconds", l)).toBeGreaterThanOrEqual(0)
    expect(text).toContain("# TYPE leaseq_jobs_completed_total counter")
    expect(text).toContain("# TYPE leaseq_jobs gauge")
    const check = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" })
    expect(check.stdout + check.stderr).toBe("")
    expect(check.status).toBe(0)
  })

  it("a queue whose keys are not leaseq's is reported unreadable, and every other queue is still exported", async () => {
    const prefix = "lqmx5"
    const q = await queueWith(prefix, 2, 0)
    const raw = rawClient()
    onCleanup(() => raw.quit())
    const bad = name()
    // a queue whose wait key is a string: open refuses it (WrongKeyType)
    await raw.hset(`${prefix}:{${bad}}:meta`, "layout", "1")
    await raw.set(`${prefix}:{${bad}}:wait`, "not a list")
    onCleanup(() => raw.del(`${prefix}:{${bad}}:meta`, `${prefix}:{${bad}}:wait`))
    const handler = metricsHandler({ connection: redisUrl(), prefix })
    onCleanup(() => handler.close())
    const text = await handler.render()
    expect(sample(text, "leaseq_jobs", `queue="${q.name}",state="waiting"`)).toBe(2)
    expect(sample(text, "leaseq_queue_unreadable", `queue="${bad}"`)).toBe(1)
  })

  it("counts the live workers of a queue (leaseq_workers), and none once they closed", async () => {
    const prefix = "lqmx6"
    const q = await queueWith(prefix, 0, 0)
    await q.add({ i: 0 })
    const handler = metricsHandler({ connection: redisUrl(), prefix, cacheMs: 0 })
    onCleanup(() => handler.close())
    const w = new Worker<{ i: number }>(q.name, async () => {}, { connection: redisUrl(), prefix })
    onCleanup(() => w.close())
    await w.ready
    const l = `queue="${q.name}"`
    expect(sample(await handler.render(), "leaseq_workers", l)).toBe(1)
    await w.close()
    expect(sample(await handler.render(), "leaseq_workers", l)).toBe(0)
  })

  it("shows a paused queue (leaseq_paused 1) and 0 again after resume", async () => {
    const prefix = "lqmx8"
    const q = await queueWith(prefix, 1, 0)
    const handler = metricsHandler({ connection: redisUrl(), prefix, cacheMs: 0 })
    onCleanup(() => handler.close())
    const l = `queue="${q.name}"`
    expect(sample(await handler.render(), "leaseq_paused", l)).toBe(0)
    expect(await q.pause()).toBe(true)
    expect(sample(await handler.render(), "leaseq_paused", l)).toBe(1)
    expect(await q.resume()).toBe(true)
    expect(sample(await handler.render(), "leaseq_paused", l)).toBe(0)
  })

  it("counts the queue's groups (leaseq_groups), with no label per group", async () => {
    const prefix = "lqmx9"
    const q = await queueWith(prefix, 0, 0)
    await q.add({ i: 1 }, { group: "tenant-1" })
    await q.add({ i: 2 }, { group: "tenant-2" })
    await q.add({ i: 3 }, { group: "tenant-2" })
    const handler = metricsHandler({ connection: redisUrl(), prefix, cacheMs: 0 })
    onCleanup(() => handler.close())
    const text = await handler.render()
    expect(sample(text, "leaseq_groups", `queue="${q.name}"`)).toBe(2)
    expect(text).not.toContain("tenant-")
    expect((await q.stats()).busiestGroups).toEqual([
      { group: "tenant-2", waiting: 2 },
      { group: "tenant-1", waiting: 1 },
    ])
  })

  it("serves one reading to every scrape within cacheMs, and a fresh one after", async () => {
    const prefix = "lqmx2"
    const q = await queueWith(prefix, 1, 0)
    const cached = metricsHandler({ connection: redisUrl(), prefix, cacheMs: 3_600_000 })
    const fresh = metricsHandler({ connection: redisUrl(), prefix, cacheMs: 0 })
    onCleanup(() => Promise.all([cached.close(), fresh.close()]))
    const l = `queue="${q.name}",state="waiting"`
    expect(sample(await cached.render(), "leaseq_jobs", l)).toBe(1)
    expect(sample(await fresh.render(), "leaseq_jobs", l)).toBe(1)
    await q.add({ i: 2 })
    expect(sample(await cached.render(), "leaseq_jobs", l)).toBe(1)
    expect(sample(await fresh.render(), "leaseq_jobs", l)).toBe(2)
  })

  it("answers 503 with a reason and no password when Redis cannot be read, and 405 to a POST", async () => {
    const port = await freePort()
    const handler = metricsHandler({ connection: `redis://:s3cret-pw@127.0.0.1:${port}`, queues: ["q"] })
    onCleanup(() => handler.close())
    const url = await serve(handler)
    const res = await fetch(url)
    const body = await res.text()
    expect(res.status).toBe(503)
    expect(body).toMatch(/^leaseq: cannot read Redis: /)
    expect(body).not.toContain("s3cret-pw")
    expect((await fetch(url, { method: "POST" })).status).toBe(405)
  })

  it("refuses a bad prefix, queue name or cacheMs at once, naming the field", () => {
    expect(() => metricsHandler({ connection: redisUrl(), prefix: "a{b" })).toThrow(/prefix/)
    expect(() => metricsHandler({ connection: redisUrl(), queues: ["a:b"] })).toThrow(/a:b/)
    expect(() => metricsHandler({ connection: redisUrl(), cacheMs: -1 })).toThrow(/cacheMs/)
  })
})

interface Cli {
  readonly child: ChildProcess
  readonly stderr: () => string
  readonly exited: Promise<number | null>
}

/** Spawn `leaseq metrics …` from source (Node 24 strips the types). */
const startCli = (args: ReadonlyArray<string>): Cli => {
  const child = spawn(NODE, [join(ROOT, "src/cli/main.ts"), "metrics", ...args], { stdio: ["ignore", "pipe", "pipe"] })
  let stderr = ""
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString()
  })
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)))
  onCleanup(async () => {
    child.kill("SIGTERM")
    await exited
  })
  return { child, stderr: () => stderr, exited }
}

describe("leaseq metrics", () => {
  it("serves /metrics until SIGTERM, then exits 0", async () => {
    const prefix = "lqmx3"
    const q = await queueWith(prefix, 2, 0)
    const port = await freePort()
    const cli = startCli(["--url", redisUrl(), "--prefix", prefix, "--listen", `127.0.0.1:${port}`])
    await until("the exporter listening", () => cli.stderr().includes("serving metrics"))
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    expect(sample(text, "leaseq_jobs", `queue="${q.name}",state="waiting"`)).toBe(2)
    expect((await fetch(`http://127.0.0.1:${port}/nope`)).status).toBe(404)
    cli.child.kill("SIGTERM")
    expect(await cli.exited).toBe(0)
  })

  it("exits 2 when the port is in use or --listen is bad, and 1 when Redis is not there", async () => {
    const busy = createServer()
    onCleanup(() => new Promise((r) => busy.close(r)))
    await new Promise<void>((r) => busy.listen(0, "127.0.0.1", r))
    const port = (busy.address() as { port: number }).port
    const inUse = startCli(["--url", redisUrl(), "--listen", `127.0.0.1:${port}`])
    expect(await inUse.exited).toBe(2)
    expect(inUse.stderr()).toContain(`cannot listen on 127.0.0.1:${port}: the address is in use`)
    const bad = startCli(["--url", redisUrl(), "--listen", "9464"])
    expect(await bad.exited).toBe(2)
    expect(bad.stderr()).toContain("--listen must be host:port")
    const gone = startCli(["--url", `redis://:s3cret-pw@127.0.0.1:${await freePort()}`])
    expect(await gone.exited).toBe(1)
    expect(gone.stderr()).toContain("cannot reach Redis")
    expect(gone.stderr()).not.toContain("s3cret-pw")
  })
})

describe("a real Prometheus scraping leaseq metrics", () => {
  it("reads leaseq_jobs_completed_total equal to the jobs the test ran, through Prometheus' API", async () => {
    need("prometheus")
    const prefix = "lqmx4"
    const q = await queueWith(prefix, 25, 25)
    const exporterPort = await freePort()
    const cli = startCli(["--url", redisUrl(), "--prefix", prefix, "--listen", `127.0.0.1:${exporterPort}`])
    await until("the exporter listening", () => cli.stderr().includes("serving metrics"))
    const promPort = await startPrometheus(`127.0.0.1:${exporterPort}`, ["scrape_interval: 1s"])
    const query = `leaseq_jobs_completed_total{queue="${q.name}"}`
    const value = await until(
      "Prometheus to have scraped the counter",
      async () => {
        const res = await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(query)}`).catch(
          () => undefined,
        )
        if (res?.status !== 200) return undefined
        const body = (await res.json()) as { data: { result: Array<{ value: [number, string] }> } }
        return body.data.result[0]?.value[1]
      },
      { everyMs: 200 },
    )
    expect(Number(value)).toBe(25)
  })
})

describe("the docs' Prometheus files", () => {
  it("promtool accepts the alert rules and the scrape config", () => {
    need("promtool")
    const rules = spawnSync("promtool", ["check", "rules", join(ROOT, "docs/examples/prometheus-alerts.yml")], {
      encoding: "utf8",
    })
    expect(rules.status, rules.stdout + rules.stderr).toBe(0)
    const config = spawnSync("promtool", ["check", "config", join(ROOT, "docs/examples/prometheus.yml")], {
      encoding: "utf8",
    })
    expect(config.status, config.stdout + config.stderr).toBe(0)
  })
})

describe("the self-fence counter", () => {
  it("a worker that self-fenced while cut off reports it once Redis answers again: leaseq_self_fences_total", async () => {
    const prefix = "lqmx7"
    const q = await queueWith(prefix, 1, 0)
    const proxy = await proxyToSuiteRedis()
    const started = deferred()
    const worker = new Worker<{ i: number }>(
      q.name,
      async (job) => {
        started.resolve()
        await new Promise((r) => job.signal.addEventListener("abort", r))
      },
      { connection: proxy.url, prefix, leaseMs: 1500 },
    )
    onCleanup(() => worker.close())
    const fenced = deferred<string>()
    worker.on("lease-lost", (_job, reason) => fenced.resolve(reason))
    worker.on("error", () => {}) // the cut connection is reported; expected here
    await started.promise
    proxy.cut()
    expect(await fenced.promise).toBe("self-fenced")
    expect((await q.stats()).counters.selfFenced).toBe(0)
    proxy.heal()
    // the next heartbeat that gets through carries the count
    await until("the self-fence counted", async () => (await q.stats()).counters.selfFenced === 1)
    const handler = metricsHandler({ connection: redisUrl(), prefix, queues: [q.name] })
    onCleanup(() => handler.close())
    expect(sample(await handler.render(), "leaseq_self_fences_total", `queue="${q.name}"`)).toBe(1)
    await worker.close()
    expect((await q.stats()).counters.selfFenced).toBe(1)
  })
})
