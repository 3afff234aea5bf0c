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
import { type DashboardHandler, dashboardHandler } from "../../src/dashboard.ts"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { InvalidOptions, type Job, Queue, Worker } from "../../src/index.ts"
import { connect } from "../../src/redis/Client.ts"
import { startWorkerChild } from "../support/child.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { TcpProxy } from "../support/proxy.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { serveLoopback } from "../support/serve.ts"
import { until } from "../support/until.ts"

const ROOT = resolve(import.meta.dirname, "../..")
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
    // a queue made by a test shows on the overview and workers page within half a second
    discoverEveryMs: 500,
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

const worker = (
  queue: string,
  handle: (payload: unknown, job: Job<unknown>) => Promise<void> = async () => {},
  options: { readonly concurrency?: number } = {},
) => {
  const w = new Worker<unknown>(queue, (job) => handle(job.payload, job), {
    connection: redisUrl(),
    prefix: PREFIX,
    leaseMs: 3000,
    // a handler still running when the test ends (untilAborted) is aborted at once, not
    // after the default 10 s grace
    shutdownGraceMs: 0,
    ...options,
  })
  onCleanup(() => w.close())
  return w
}

/** A job handler that runs until its signal aborts (a cancel or the worker closing). */
const untilAborted = (job: Job<unknown>) =>
  new Promise<void>((_, reject) => job.signal.addEventListener("abort", () => reject(job.signal.reason)))

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

  it("with Redis gone the page says so, naming the server, and a reading answers 503; back when Redis is", async () => {
    const q = newQueue()
    await q.add(1)
    const url = new URL(redisUrl())
    const proxy = await TcpProxy.start({ host: url.hostname, port: Number(url.port || 6379) })
    onCleanup(() => proxy.close())
    // a dashboard of its own, on Redis through the proxy, with a short call timeout
    const own = dashboardHandler({
      connection: proxy.url,
      prefix: PREFIX,
      intervalMs: 250,
      discoverEveryMs: 500,
      callTimeoutMs: 500,
    })
    const server = createServer(own)
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    onCleanup(async () => {
      await new Promise((r) => {
        server.close(r)
        server.closeAllConnections()
      })
      await own.close()
    })
    const ownBase = `http://127.0.0.1:${(server.address() as { port: number }).port}/`
    const page = await browser.newPage()
    onCleanup(() => page.close())
    await page.goto(`${ownBase}#/`)
    const row = `tr[data-queue="${q.name}"]`
    await page.waitForFunction((s) => document.querySelector(`${s} td.waiting`)?.textContent === "1", {}, row)

    proxy.cut()
    await page.waitForFunction(() => document.querySelector("p.bad")?.textContent?.includes("Redis unavailable"))
    expect(await textOf(page, "p.bad")).toContain(`127.0.0.1:${proxy.port}`)
    const reading = await fetch(`${ownBase}api/overview`)
    expect(reading.status).toBe(503)
    expect(((await reading.json()) as { error: string }).error).toContain(`127.0.0.1:${proxy.port}`)

    proxy.heal()
    await page.waitForFunction((s) => document.querySelector(`${s} td.waiting`)?.textContent === "1", {}, row)
    expect(await page.$("p.bad")).toBeNull()
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
    // and on the workers page, across every queue under the prefix
    const all = await open("#/workers")
    await all.waitForFunction(
      (q) => document.querySelector(`#all-workers tr[data-queue="${q}"]`)?.textContent?.includes("1 of 1"),
      {},
      q.name,
    )
    await page.bringToFront()
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
    // a checked box stays checked across the readings that arrive meanwhile (one per 250 ms here)
    await page.click(`#dead input[value="${id}"]`)
    const live = await page.$eval("#live", (e) => e.textContent)
    await page.waitForFunction((before) => document.querySelector("#live")?.textContent !== before, {}, live)
    expect(await page.$eval(`#dead input[value="${id}"]`, (e) => (e as HTMLInputElement).checked)).toBe(true)
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
    const w = worker(q.name, async () => {
      throw new Error("dies")
    })
    await q.add({ n: 1 }, { maxAttempts: 1 })
    await until("the job is dead", async () => (await q.stats()).dead === 1)
    // closed before the dump: a live worker's registry beat would change Redis on its own
    await w.close()
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

  it("the job page shows a running job's state, progress and timeline (added, active)", async () => {
    const q = newQueue()
    const started = deferred<void>()
    worker(q.name, (_p, job) => {
      job.progress({ done: 40, of: 100 })
      started.resolve()
      return untilAborted(job)
    })
    const id = await q.add({ big: "x".repeat(5000) }, { priority: 3 })
    await started.promise
    const page = await open(`#/job/${q.name}/${id}`)
    await page.waitForFunction(() => document.querySelector("#job-state")?.textContent === "active")
    expect(await textOf(page, "#job-priority")).toBe("priority 3")
    await page.waitForFunction(() => document.querySelector("#job-progress")?.textContent?.includes('"done": 40'))
    await page.waitForFunction(() => {
      const kinds = [...document.querySelectorAll("#timeline tbody tr")].map((r) => r.getAttribute("data-kind"))
      return kinds.includes("added") && kinds.includes("active")
    })
    expect(await textOf(page, "#job-attempt")).toBe("attempt 1 of 3")
    // the lease counts down on the Redis clock
    await page.waitForSelector("#lease td.left")
    expect(await textOf(page, "#lease td.left")).toMatch(/^[0-9.]+ s$/)
    // a payload over 4 KiB is cut, and "show all" fetches the rest
    expect((await textOf(page, "#job-payload"))?.length).toBe(4096)
    // absent values show as "–", never as "null"
    expect(await textOf(page, "main")).not.toContain("null")
    await page.screenshot({ path: join(SHOTS, "dashboard-job.png"), fullPage: true })
    await page.click("#all-payload")
    await page.waitForFunction(() => (document.querySelector("#job-payload")?.textContent?.length ?? 0) > 5000)
  })

  it("cancel from the job page ends an active job as cancelled", async () => {
    const q = newQueue()
    const started = deferred<void>()
    const done: string[] = []
    // the queue keeps finished jobs (default retention), so getJob sees the cancel
    const w = worker(
      q.name,
      async (p, job) => {
        if ((p as { n: number }).n === 0) return
        started.resolve()
        return untilAborted(job)
      },
      {},
    )
    w.on("completed", (job) => done.push(job.id))
    const warm = await q.add({ n: 0 })
    await until("the first job completed", () => done.includes(warm))
    const id = await q.add({ n: 1 })
    await started.promise
    const page = await open(`#/job/${q.name}/${id}`, true)
    await page.waitForSelector("#cancel-job")
    await page.click("#cancel-job")
    await until("the job is cancelled", async () => (await q.getJob(id))?.state === "cancelled")
    await page.waitForFunction(() => document.querySelector("#job-state")?.textContent === "cancelled")
    await page.waitForFunction(() =>
      [...document.querySelectorAll("#timeline tbody tr")].some((r) => r.getAttribute("data-kind") === "cancelled"),
    )
    expect(await page.$("#cancel-job")).toBeNull()
  })

  it("the queue page names the groups with the most jobs waiting, and how many groups there are", async () => {
    const q = newQueue()
    await q.addBulk([
      ...Array.from({ length: 3 }, () => ({ payload: {}, options: { group: "tenant-big" } })),
      { payload: {}, options: { group: "tenant-small" } },
    ])
    const page = await open(`#/queue/${q.name}`)
    await page.waitForSelector("#groups tbody tr")
    const rows = await page.$$eval("#groups tbody tr", (trs) => trs.map((tr) => tr.textContent))
    expect(rows).toEqual(["tenant-big3", "tenant-small1"])
    expect(await page.$$eval("h3", (hs) => hs.map((h) => h.textContent))).toContain("Groups (2): the most jobs waiting")
  })

  it("pause from the queue page stops a worker taking jobs until resume", async () => {
    const q = newQueue()
    const done: string[] = []
    const release = deferred<void>()
    const running = deferred<void>()
    const first = await q.add({ n: 1 })
    const w = worker(q.name, async (p) => {
      if ((p as { n: number }).n === 1) {
        running.resolve()
        await release.promise
      }
    })
    w.on("completed", (job) => done.push(job.id))
    await running.promise
    const page = await open(`#/queue/${q.name}`, true)
    await page.waitForSelector("#pause")
    await page.click("#pause")
    await until("the queue is paused", () => q.isPaused())
    await page.waitForSelector("#paused")
    const held = await q.add({ n: 2 })
    // the first job's complete rides on the worker's next reserve, which would lease the
    // second job were the queue not paused
    release.resolve()
    await until("the first job completed", () => done.includes(first))
    expect((await q.getJob(held))?.state).toBe("waiting")
    const overview = await open("#/")
    await overview.waitForFunction(
      (s) => document.querySelector(`${s} td.paused`)?.textContent === "paused",
      {},
      `tr[data-queue="${q.name}"]`,
    )
    await page.bringToFront()
    await page.waitForSelector("#resume")
    await page.click("#resume")
    await until("the held job completed", () => done.includes(held))
    expect(await q.isPaused()).toBe(false)
  })

  it("Find goes to a job's page by id, from the overview and from a queue page, and says when there is none", async () => {
    const q = newQueue()
    const other = newQueue()
    await other.add({ n: 0 })
    const id = await q.add({ n: 1 })
    const page = await open("#/")
    // Find asks the queues the overview has discovered (redone every discoverEveryMs): wait
    // until the overview lists the new queue, as a user would see it, before looking
    await page.waitForSelector(`tr[data-queue="${q.name}"]`)
    await page.type("#search input", id)
    await page.click("#search button")
    await page.waitForFunction((h) => location.hash === h, {}, `#/job/${q.name}/${id}`)
    await page.waitForFunction(() => document.querySelector("#job-state")?.textContent === "waiting")
    await page.goto(`${base}#/queue/${other.name}`)
    await page.$eval("#search input", (e) => {
      ;(e as HTMLInputElement).value = ""
    })
    await page.type("#search input", "01NOSUCHJOB0000000000000000")
    await page.click("#search button")
    await page.waitForFunction(() => document.querySelector("#status")?.textContent?.startsWith("not found"))
    expect(await page.evaluate(() => location.hash)).toBe(`#/queue/${other.name}`)
  })

  it("a payload and an error that would run script stay text on the job page", async () => {
    const q = newQueue()
    const evil = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'
    worker(q.name, async () => {
      throw new Error(evil)
    })
    const id = await q.add({ evil }, { maxAttempts: 1 })
    await until("the job is dead", async () => (await q.getJob(id))?.state === "dead")
    const page = await open(`#/job/${q.name}/${id}`, true)
    await page.waitForSelector("#retry-job")
    expect(await textOf(page, "#job-payload")).toContain(evil.replaceAll('"', '\\"'))
    expect(await textOf(page, "#job-error")).toContain("<script>window.__xss=2</script>")
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined()
    expect(await page.$$("main img, main script")).toHaveLength(0)
  })

  it("reads that need the token work from the page (it sends it), and bidi controls show as their code point", async () => {
    const guarded = dashboardHandler({ connection: redisUrl(), prefix: PREFIX, readsNeedToken: true, token: TOKEN })
    onCleanup(() => guarded.close())
    const at = `http://127.0.0.1:${await serveLoopback(guarded)}/`
    const q = newQueue()
    const id = await q.add({ note: "\u202Eevil\u202C" }, { dedupeKey: "\u202Eevil" })
    const page = await browser.newPage()
    onCleanup(() => page.close())
    await page.goto(`${at}#token=${TOKEN}`)
    await page.goto(`${at}#/job/${q.name}/${id}`)
    await page.waitForSelector("#job-facts")
    const key = await textOf(page, "#job-facts td:nth-child(4)")
    expect(key).toBe("\u27E8U+202E\u27E9evil")
    const payload = await textOf(page, "#job-payload")
    expect(payload).toContain("\u27E8U+202E\u27E9evil\u27E8U+202C\u27E9")
    expect(payload).not.toMatch(/[\u202A-\u202E]/)
  })

  it("cancel, pause and resume without the token are refused and change nothing in Redis", async () => {
    const q = newQueue()
    const id = await q.add({ n: 1 })
    const raw = rawClient()
    onCleanup(() => raw.quit())
    const before = await dumpQueue(raw, q.name, PREFIX)
    const page = await open(`#/job/${q.name}/${id}`)
    await page.waitForFunction(() => document.querySelector("#job-state")?.textContent === "waiting")
    expect(await page.$("#cancel-job")).toBeNull()
    const statuses = await page.evaluate(
      async (queue, job) =>
        Promise.all(
          [{ action: "cancel", ids: [job] }, { action: "pause" }, { action: "resume" }].map(async (a) => {
            const res = await fetch("api/action", {
              method: "POST",
              headers: { "content-type": "application/json", "x-leaseq-token": "wrong-token-0123456789" },
              body: JSON.stringify({ queue, ...a }),
            })
            return res.status
          }),
        ),
      q.name,
      id,
    )
    expect(statuses).toEqual([403, 403, 403])
    expect(await dumpQueue(raw, q.name, PREFIX)).toEqual(before)
    expect((await q.getJob(id))?.state).toBe("waiting")
  })

  it("with hidePayloads the job page sends neither payload nor result, and show all answers nothing", async () => {
    const q = newQueue()
    const done: string[] = []
    const w = new Worker<unknown, unknown>(q.name, async () => ({ secret: "result-secret" }), {
      connection: redisUrl(),
      prefix: PREFIX,
    })
    onCleanup(() => w.close())
    w.on("completed", (job) => done.push(job.id))
    const id = await q.add({ secret: "payload-secret" })
    await until("the job completed", () => done.includes(id))
    expect((await q.getJob(id))?.result).toEqual({ secret: "result-secret" })
    const hidden = dashboardHandler({ connection: redisUrl(), prefix: PREFIX, hidePayloads: true })
    onCleanup(() => hidden.close())
    const server = createServer(hidden)
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    onCleanup(() => new Promise((r) => server.close(r)))
    const at = `http://127.0.0.1:${(server.address() as { port: number }).port}/api`
    const reading = await (await fetch(`${at}/job?queue=${q.name}&id=${id}`)).text()
    expect(reading).toContain('"state":"completed"')
    expect(reading).not.toContain("payload-secret")
    expect(reading).not.toContain("result-secret")
    for (const field of ["payload", "result"]) {
      const res = await fetch(`${at}/full?queue=${q.name}&id=${id}&field=${field}`)
      expect(res.status).toBe(404)
      expect(await res.text()).not.toContain("secret")
    }
    // the same job on the dashboard without hidePayloads shows both
    const shown = await (await fetch(`${base}api/job?queue=${q.name}&id=${id}`)).text()
    expect(shown).toContain("payload-secret")
    expect(shown).toContain("result-secret")
  })
})

describe("dashboard options", () => {
  it("a callTimeoutMs that is not a whole number of ms from 10 to 3600000 is refused, naming it, before connecting", () => {
    for (const bad of [0, 5, 1.5, 3_600_001, Number.NaN]) {
      let thrown: unknown
      try {
        dashboardHandler({ connection: redisUrl(), callTimeoutMs: bad })
      } catch (e) {
        thrown = e
      }
      expect(thrown).toBeInstanceOf(InvalidOptions)
      expect((thrown as InvalidOptions).field).toBe("callTimeoutMs")
      expect((thrown as Error).message).toContain("10 to 3600000")
    }
  })
})
