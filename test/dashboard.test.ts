/// <reference lib="dom" />
/**
 * The dashboard in a real, headless Chromium (Debian's `chromium`, driven by
 * puppeteer-core, which downloads no browser): live counts, a lease counting down on the
 * Redis clock and turning expired when its worker is killed, retry of a dead job from the
 * page, a payload that would run script staying text, actions refused without the token,
 * and a queue with 100,000 active leases.
 * Screenshots for docs/dashboard.md are written when LEASEQ_SCREENSHOTS=1.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Effect } from "effect"
import puppeteer, { type Browser, type Page } from "puppeteer-core"
import { beforeAll, describe, expect, it } from "vitest"
import { type DashboardHandler, dashboardHandler } from "../src/dashboard.ts"
import { makeCommands } from "../src/engine/Commands.ts"
import { queueKeys } from "../src/engine/Keys.ts"
import { Queue, Worker } from "../src/index.ts"
import { connect } from "../src/redis/Client.ts"
import { until } from "./reliability/support.ts"
import { startWorkerChild } from "./support/child.ts"
import { onCleanup } from "./support/cleanup.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "./support/redis.ts"

const ROOT = resolve(import.meta.dirname, "..")
const PREFIX = "lqdash"
const TOKEN = "test-token-0123456789abcdef"
const name = queueNamer("dash")
const SHOTS = process.env.LEASEQ_SCREENSHOTS === "1" ? join(ROOT, "docs") : mkdtempSync(join(tmpdir(), "leaseq-shots-"))

const chromium = (): string => {
  for (const bin of [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"]) {
    if (bin && spawnSync(bin, ["--version"], { stdio: "ignore" }).status === 0) return bin
  }
  throw new Error("chromium not found: install Debian's chromium package (apt-get install -y chromium)")
}

let browser: Browser
let handler: DashboardHandler
let base: string

beforeAll(async () => {
  browser = await puppeteer.launch({
    executablePath: chromium(),
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  })
  handler = dashboardHandler({
    connection: redisUrl(),
    prefix: PREFIX,
    allowActions: true,
    token: TOKEN,
    intervalMs: 250,
  })
  const server = createServer(handler)
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}/`
  return async () => {
    await new Promise((r) => {
      server.close(r)
      server.closeAllConnections()
    })
    await handler.close()
    await browser.close()
  }
})

const open = async (hash: string, withToken = false): Promise<Page> => {
  const page = await browser.newPage()
  onCleanup(() => page.close())
  page.on("dialog", (d) => void d.accept())
  await page.setViewport({ width: 1100, height: 700 })
  if (withToken) await page.goto(`${base}#token=${TOKEN}`)
  await page.goto(`${base}${hash}`)
  return page
}

const textOf = (page: Page, selector: string) => page.$eval(selector, (e) => e.textContent ?? "").catch(() => undefined)

const newQueue = () => {
  const q = new Queue<unknown>(name(), { connection: redisUrl(), prefix: PREFIX })
  onCleanup(() => q.close())
  return q
}

const worker = (queue: string, handle: (payload: unknown) => Promise<void> = async () => {}) => {
  const w = new Worker<unknown>(queue, (job) => handle(job.payload), { connection: redisUrl(), prefix: PREFIX })
  onCleanup(() => w.close())
  return w
}

describe("the dashboard in Chromium", () => {
  it("overview counts change live while jobs are added and completed", async () => {
    const q = newQueue()
    await q.addBulk([{ payload: 1 }, { payload: 2 }, { payload: 3 }])
    const page = await open("#/")
    const row = `tr[data-queue="${q.name}"]`
    await page.waitForFunction((s) => document.querySelector(`${s} td.waiting`)?.textContent === "3", {}, row)
    await page.screenshot({ path: join(SHOTS, "dashboard-overview.png") })
    worker(q.name)
    await page.waitForFunction(
      (s) =>
        document.querySelector(`${s} td.waiting`)?.textContent === "0" &&
        document.querySelector(`${s} td.completed`)?.textContent === "3",
      {},
      row,
    )
  })

  it("a lease row counts down on the Redis clock, turns expired when its worker is killed, and goes after a sweep", async () => {
    const q = newQueue()
    const id = await q.add({ n: 1 })
    const child = startWorkerChild(redisUrl(), q.name, "hang", {
      leaseMs: 4000,
      concurrency: 1,
      sweep: false,
      prefix: PREFIX,
    })
    await child.waitFor((l) => l.startsWith(`started ${id}`), "the job started")
    const page = await open(`#/queue/${q.name}`)
    const left = `#leases tr[data-id="${id}"] td.left`
    await page.waitForSelector(left)
    const first = Number.parseFloat((await textOf(page, left)) ?? "")
    await page.waitForFunction(
      (s, v) => Number.parseFloat(document.querySelector(s)?.textContent ?? "") < v,
      {},
      left,
      first,
    )
    await page.screenshot({ path: join(SHOTS, "dashboard-queue.png") })
    // the worker process is on the page, as its heartbeat recorded it
    // (running 1 once a heartbeat carried it)
    await page.waitForFunction(() => document.querySelector("#workers tbody tr")?.textContent?.includes("1 of 1"))
    await child.stop("SIGKILL")
    await page.waitForSelector(`#leases tr.expired[data-id="${id}"]`, { timeout: 30_000 })
    expect(await textOf(page, left)).toMatch(/^expired /)
    await page.screenshot({ path: join(SHOTS, "dashboard-expired.png") })
    const client = connect(redisUrl())
    onCleanup(() => client.close())
    await Effect.runPromise(makeCommands(client, queueKeys(q.name, PREFIX)).sweep(100))
    await page.waitForFunction((s) => document.querySelector(s) === null, {}, `#leases tr[data-id="${id}"]`)
    // the sweep's reclaim is in the feed, read from the events stream
    await page.waitForFunction(
      (job) =>
        [...document.querySelectorAll("#feed tbody tr")].some((r) =>
          r.textContent?.includes(`lease-lost${job}attempt 1`),
        ),
      {},
      id,
    )
  })

  it("retry of a dead job from the page makes it complete", async () => {
    const q = newQueue()
    let fail = true
    const done: string[] = []
    const w = worker(q.name, async () => {
      if (fail) throw new Error("first run fails")
    })
    w.on("completed", (job) => done.push(job.id))
    const id = await q.add({ n: 1 }, { maxAttempts: 1 })
    await until("the job is dead", async () => (await q.stats()).dead === 1)
    fail = false
    const page = await open(`#/queue/${q.name}`, true)
    await page.waitForSelector(`#dead tr[data-id="${id}"]`)
    await page.click("#retry-all")
    await until("the retried job completed", () => done.includes(id))
    expect((await q.stats()).dead).toBe(0)
  })

  it("a payload and an error that would run script stay text and run nothing", async () => {
    const q = newQueue()
    const evil = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'
    worker(q.name, async () => {
      throw new Error(evil)
    })
    const id = await q.add({ evil }, { maxAttempts: 1 })
    await until("the job is dead", async () => (await q.stats()).dead === 1)
    const page = await open(`#/queue/${q.name}`)
    await page.waitForSelector(`#dead tr[data-id="${id}"]`)
    const row = await textOf(page, `#dead tr[data-id="${id}"]`)
    expect(row).toContain('<img src=x onerror=\\"window.__xss=1\\">')
    expect(row).toContain("<script>window.__xss=2</script>")
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined()
    expect(await page.$$("#dead img, #dead script")).toHaveLength(0)
  })

  it("an action without the token, or from another site, is refused and changes nothing in Redis", async () => {
    const q = newQueue()
    worker(q.name, async () => {
      throw new Error("dies")
    })
    await q.add({ n: 1 }, { maxAttempts: 1 })
    await until("the job is dead", async () => (await q.stats()).dead === 1)
    const raw = rawClient()
    onCleanup(() => raw.quit())
    const before = await dumpQueue(raw, q.name, PREFIX)
    const page = await open(`#/queue/${q.name}`)
    await page.waitForSelector("#dead tbody tr")
    expect(await page.$("#retry-all")).toBeNull()
    const status = await page.evaluate(async (queue) => {
      const res = await fetch("api/action", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ queue, action: "purge", all: 1 }),
      })
      return res.status
    }, q.name)
    expect(status).toBe(403)
    const crossSite = await fetch(`${base}api/action`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-leaseq-token": TOKEN, origin: "http://evil.example" },
      body: JSON.stringify({ queue: q.name, action: "purge", all: 1 }),
    })
    expect(crossSite.status).toBe(403)
    expect(await dumpQueue(raw, q.name, PREFIX)).toEqual(before)
  })

  it("a queue with 100,000 active leases renders the first few hundred by deadline and the total", async () => {
    const q = newQueue()
    const n = 100_000
    for (let i = 0; i < n; i += 10_000) {
      await q.addBulk(Array.from({ length: 10_000 }, (_, j) => ({ payload: i + j })))
    }
    const client = connect(redisUrl())
    onCleanup(() => client.close())
    const c = makeCommands(client, queueKeys(q.name, PREFIX))
    for (let i = 0; i < n; i += 1000) await Effect.runPromise(c.reserve(1000, 3_600_000, 0))
    const page = await open(`#/queue/${q.name}`)
    await page.waitForFunction(() => document.querySelectorAll("#leases tbody tr").length === 300)
    expect(await page.$eval("h3", (e) => e.textContent)).toContain("100000 active, first 300 shown")
    expect(await textOf(page, "#count-active")).toBe("active 100000")
  })
})
