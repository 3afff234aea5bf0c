/// <reference lib="dom" />
/**
 * The dashboard's operator views in a real Chromium: the queue's schedules with their next
 * run on the Redis clock. Screenshots for docs/dashboard.md are written when
 * LEASEQ_SCREENSHOTS=1.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import type { Browser, Page } from "puppeteer-core"
import { beforeAll, describe, expect, it } from "vitest"
import { Queue } from "../../src/index.ts"
import { launchBrowser, openPage, serveDashboard, shoot, textOf } from "../support/browser.ts"
import { onCleanup } from "../support/cleanup.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useWorker } from "../support/use.ts"

const ROOT = resolve(import.meta.dirname, "../..")
const PREFIX = "lqdashop"
const TOKEN = "operator-token-0123456789abcdef"
const name = queueNamer("dashop")
const SHOTS = process.env.LEASEQ_SCREENSHOTS === "1" ? join(ROOT, "docs") : mkdtempSync(join(tmpdir(), "leaseq-shots-"))

let browser: Browser
let base: string

beforeAll(async () => {
  browser = await launchBrowser()
  const served = await serveDashboard({
    connection: redisUrl(),
    prefix: PREFIX,
    allowActions: true,
    token: TOKEN,
    intervalMs: 250,
    discoverEveryMs: 500,
  })
  base = served.base
  return async () => {
    await served.close()
    await browser.close()
  }
})

const newQueue = () => {
  const q = new Queue<unknown>(name(), { connection: redisUrl(), prefix: PREFIX })
  onCleanup(() => q.close())
  return q
}

/** The ids in the job list's table, in order. */
const listedIds = (page: Page) =>
  page.$$eval("#jobs tbody tr", (trs) => trs.map((tr) => tr.getAttribute("data-id") ?? ""))

/** The cells of job `id`'s row in the job list, by their column's heading. */
const rowByHeading = (page: Page, id: string) =>
  page.$eval(
    "#jobs",
    (t, id) => {
      const heads = [...t.querySelectorAll("thead th")].map((th) => th.textContent ?? "")
      const cells = [...t.querySelectorAll(`tbody tr[data-id="${id}"] td`)].map((td) => td.textContent ?? "")
      return Object.fromEntries(heads.map((h, i) => [h, cells[i]])) as Record<string, string>
    },
    id,
  )

/** A span of `ms` as the page writes it (dom.js `ago`). */
const span = (ms: number) =>
  ms < 1000
    ? `${Math.round(ms)} ms`
    : ms < 60000
      ? `${(ms / 1000).toFixed(1)} s`
      : ms < 3600000
        ? `${Math.round(ms / 60000)} min`
        : `${(ms / 3600000).toFixed(1)} h`

/** Wait until the job list shows `n` rows of `state` on page `k` (its caption says so). */
const listed = (page: Page, k: number, n: number, state: string) =>
  page.waitForFunction(
    (k, n, state) =>
      document.querySelector("#jobs-caption")?.textContent?.startsWith(`page ${k} · ${n} shown`) &&
      document.querySelector("#jobs")?.getAttribute("data-state") === state,
    {},
    k,
    n,
    state,
  )

describe("jobs by state on the queue page", () => {
  it("pages through 120 waiting jobs 50 at a time, in the order they run, forward and back; each row links to its job", async () => {
    const q = newQueue()
    const ids: string[] = []
    for (let i = 0; i < 120; i += 40)
      ids.push(...(await q.addBulk(Array.from({ length: 40 }, (_, j) => ({ payload: { n: i + j } })))))
    const page = await openPage(browser, base, `#/queue/${q.name}`)
    await listed(page, 1, 50, "waiting")
    expect(await listedIds(page)).toEqual(ids.slice(0, 50))
    expect(await textOf(page, "#jobs-caption")).toBe("page 1 · 50 shown of 120 waiting")
    expect(await page.$eval("#jobs-prev", (b) => (b as HTMLButtonElement).disabled)).toBe(true)
    await page.click("#jobs-next")
    await listed(page, 2, 50, "waiting")
    expect(await listedIds(page)).toEqual(ids.slice(50, 100))
    await page.click("#jobs-next")
    await listed(page, 3, 20, "waiting")
    expect(await listedIds(page)).toEqual(ids.slice(100))
    expect(await page.$eval("#jobs-next", (b) => (b as HTMLButtonElement).disabled)).toBe(true)
    await page.click("#jobs-prev")
    await listed(page, 2, 50, "waiting")
    expect(await listedIds(page)).toEqual(ids.slice(50, 100))
    // newest first
    await page.select("#jobs-order", "desc")
    await listed(page, 1, 50, "waiting")
    expect(await listedIds(page)).toEqual(ids.slice(70).reverse())
    const id = ids[100] as string
    await page.click(`#jobs tr[data-id="${id}"] a`)
    await page.waitForFunction((h) => location.hash === h, {}, `#/job/${q.name}/${id}`)
    await page.waitForFunction(() => document.querySelector("#job-state")?.textContent === "waiting")
    // back on the queue's page, the list shows the page it showed
    await page.goBack()
    await listed(page, 1, 50, "waiting")
    expect(await listedIds(page)).toEqual(ids.slice(70).reverse())
    expect(await page.$eval("#jobs-order", (s) => (s as HTMLSelectElement).value)).toBe("desc")
  })

  it("the state selector lists the dead and delayed jobs, each with its time on the Redis clock, and says when a state has none", async () => {
    const q = newQueue()
    const dead = await deadJob(q)
    const delayed = await q.add({ later: true }, { delayMs: 3_600_000 })
    const page = await openPage(browser, base, `#/queue/${q.name}`)
    await page.waitForSelector("#jobs-state")
    await page.select("#jobs-state", "dead")
    await listed(page, 1, 1, "dead")
    expect(await listedIds(page)).toEqual([dead])
    expect(await textOf(page, `#jobs tr[data-id="${dead}"] td:nth-child(4)`)).toBe(
      new Date((await q.getJob(dead))?.finishedAt as number).toISOString(),
    )
    await page.select("#jobs-state", "delayed")
    await listed(page, 1, 1, "delayed")
    expect(await listedIds(page)).toEqual([delayed])
    expect(await textOf(page, `#jobs tr[data-id="${delayed}"] td:nth-child(4)`)).toMatch(/^(59|60) min$/)
    await page.select("#jobs-state", "completed")
    await page.waitForSelector("#jobs-none")
    expect(await textOf(page, "#jobs-none")).toBe("No completed jobs.")
  })
})

describe("job rows", () => {
  it("each cell of a row sits under its own heading: the name under 'name', the payload under 'payload', whole", async () => {
    const q = newQueue()
    const id = await q.add({ to: "a@example.com" }, { name: "welcome-mail" })
    const page = await openPage(browser, base, `#/queue/${q.name}`)
    await listed(page, 1, 1, "waiting")
    const byHeading = await page.$eval("#jobs", (t) => {
      const heads = [...t.querySelectorAll("thead th")].map((th) => th.textContent ?? "")
      const cells = [...t.querySelectorAll("tbody tr td")].map((td) => td.textContent ?? "")
      return Object.fromEntries(heads.map((h, i) => [h, cells[i]]))
    })
    expect(byHeading.job).toBe(id)
    expect(byHeading.name).toBe("welcome-mail")
    expect(byHeading.payload).toBe(`{"to":"a@example.com"}`) // whole: the name in front is not counted as payload
  })

  it("a completed row shows its attempts, how long its run took and its result; a dead row its attempts and last error", async () => {
    const q = newQueue()
    useWorker<{ kind: string }>(
      q.name,
      async (job) => {
        if (job.payload.kind === "doomed") throw new Error("card declined for a@example.com")
        if (job.payload.kind === "flaky" && job.attempt === 1) throw new Error("try again")
        return { receipt: `r-${job.payload.kind}` }
      },
      { prefix: PREFIX, backoff: { type: "fixed", delayMs: 0 } },
    )
    const ok = await q.add({ kind: "ok" }, { name: "charge" })
    const flaky = await q.add({ kind: "flaky" })
    const doomed = await q.add({ kind: "doomed" }, { maxAttempts: 2 })
    await until("two completed, one dead", async () => {
      const s = await q.stats()
      return s.counters.completed === 2 && s.dead === 1
    })
    const page = await openPage(browser, base, `#/queue/${q.name}`)
    await page.waitForSelector("#jobs-state")
    await page.select("#jobs-state", "completed")
    await listed(page, 1, 2, "completed")
    const okRow = await rowByHeading(page, ok)
    const okInfo = (await q.getJob(ok))!
    expect(okRow).toMatchObject({ name: "charge", attempts: "1 / 3", result: '{"receipt":"r-ok"}' })
    // finished − started, both on the Redis clock, as the page writes a span
    expect(okRow.duration).toBe(span(okInfo.finishedAt! - okInfo.startedAt!))
    expect(await rowByHeading(page, flaky)).toMatchObject({ attempts: "2 / 3", result: '{"receipt":"r-flaky"}' })
    await shoot(page, "#jobs-section", join(SHOTS, "dashboard-jobs.png"), 300)
    await page.select("#jobs-state", "dead")
    await listed(page, 1, 1, "dead")
    const deadRow = await rowByHeading(page, doomed)
    expect(deadRow).toMatchObject({ attempts: "2 / 2", "last error": "Error: card declined for a@example.com" })
    expect(deadRow).not.toHaveProperty("duration")
  })
})

describe("schedules on the queue page", () => {
  it("lists each schedule with its timing and next run on the Redis clock, soonest first; a big one is not loaded", async () => {
    const q = newQueue()
    await q.schedule("hourly", { every: 3_600_000 }, { payload: { report: "hourly" } })
    await q.schedule("nightly", { cron: "30 3 * * *", tz: "America/New_York" }, { payload: { report: "daily" } })
    await q.schedule("big", { every: 7 * 86_400_000 }, { payload: "x".repeat(100_000) })
    const listed = await q.schedules()
    const page = await openPage(browser, base, `#/queue/${q.name}`)
    await page.waitForSelector('#schedules tr[data-schedule="big"]')
    const rows = await page.$$eval("#schedules tbody tr", (trs) =>
      trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")),
    )
    // soonest first, as queue.schedules() lists them, each next run as the engine gives it
    expect(rows.map((r) => r[0])).toEqual(listed.map((s) => s.name))
    for (const s of listed) {
      const row = rows.find((r) => r[0] === s.name) as string[]
      expect(row[2]).toBe(new Date(s.nextRunAt).toISOString())
    }
    const nightly = rows.find((r) => r[0] === "nightly") as string[]
    expect(nightly[1]).toBe("cron 30 3 * * * (America/New_York)")
    expect(nightly[5]).toContain('{"report":"daily"}')
    expect((rows.find((r) => r[0] === "hourly") as string[])[1]).toBe("every 1.0 h")
    // 100 kB is over what one schedule may load (64 KiB): its length only
    const big = rows.find((r) => r[0] === "big") as string[]
    expect(big[1]).toMatch(/^\(not loaded: the schedule is 1001\d\d bytes\)$/)
    expect(big[5]).toBe("–")
    expect(await textOf(page, "main")).not.toContain("x".repeat(400))
    await shoot(page, "#schedules-section", join(SHOTS, "dashboard-schedules.png"))
  })

  it("a queue without schedules says so", async () => {
    const q = newQueue()
    await q.add(1)
    const page = await openPage(browser, base, `#/queue/${q.name}`)
    await page.waitForSelector("#no-schedules")
    expect(await page.$("#schedules")).toBeNull()
  })
})

/** A job of `q` that died (maxAttempts 1, its handler threw): its id. */
const deadJob = async (q: Queue<unknown>, payload: unknown = { n: 1 }) => {
  useWorker(
    q.name,
    async () => {
      throw new Error("dies on purpose")
    },
    { prefix: PREFIX },
  )
  const id = await q.add(payload, { maxAttempts: 1 })
  await until("the job is dead", async () => (await q.getJob(id))?.state === "dead")
  return id
}

/**
 * Wait until the status line says `text`. The page says it when the action's answer is in,
 * which may come after the live view already shows what the action did.
 */
const statusSays = (page: Page, text: string) =>
  page.waitForFunction((s) => document.querySelector("#status")?.textContent === s, {}, text)

describe("actions on the job page", () => {
  it("Delete job removes a dead job once confirmed, and the page and status line say so", async () => {
    const q = newQueue()
    const id = await deadJob(q)
    const page = await openPage(browser, base, `#/job/${q.name}/${id}`, { token: TOKEN })
    await page.waitForSelector("#delete-job")
    await page.click("#delete-job")
    await page.waitForSelector("#job-missing")
    expect(await q.getJob(id)).toBeUndefined()
    await statusSays(page, `job ${id} deleted`)
    expect(await textOf(page, "#status")).toBe(`job ${id} deleted`)
  })

  it("Promote job makes a delayed job ready now once confirmed; the status line says so", async () => {
    const q = newQueue()
    const id = await q.add({ later: true }, { delayMs: 3_600_000 })
    const page = await openPage(browser, base, `#/job/${q.name}/${id}`, { token: TOKEN })
    await page.waitForSelector("#promote-job")
    await page.click("#promote-job")
    await page.waitForFunction(() => document.querySelector("#job-state")?.textContent === "waiting")
    expect((await q.getJob(id))?.state).toBe("waiting")
    await statusSays(page, `job ${id} promoted: it runs now`)
    expect(await textOf(page, "#status")).toBe(`job ${id} promoted: it runs now`)
    expect(await page.$("#promote-job")).toBeNull()
  })

  it("Retry job runs a dead job again once confirmed", async () => {
    const q = newQueue()
    let fail = true
    const done: string[] = []
    const w = useWorker(
      q.name,
      async () => {
        if (fail) throw new Error("first run fails")
      },
      { prefix: PREFIX },
    )
    w.on("completed", (job) => done.push(job.id))
    const id = await q.add({ n: 1 }, { maxAttempts: 1 })
    await until("the job is dead", async () => (await q.getJob(id))?.state === "dead")
    fail = false
    const page = await openPage(browser, base, `#/job/${q.name}/${id}`, { token: TOKEN })
    await page.waitForSelector("#retry-job")
    await page.click("#retry-job")
    await page.waitForFunction(
      (s) => document.querySelector("#status")?.textContent === s,
      {},
      `job ${id} queued again`,
    )
    await until("the retried job completed", () => done.includes(id))
  })

  it("without the token the job page offers no action, and the page's own request is refused 403", async () => {
    const q = newQueue()
    const dead = await deadJob(q)
    const delayed = await q.add({ later: true }, { delayMs: 3_600_000 })
    for (const [id, state] of [
      [dead, "dead"],
      [delayed, "delayed"],
    ] as const) {
      const page = await openPage(browser, base, `#/job/${q.name}/${id}`)
      await page.waitForFunction((s) => document.querySelector("#job-state")?.textContent === s, {}, state)
      expect(await page.$$("#controls button")).toHaveLength(0)
      const status = await page.evaluate(
        async (queue, job, action) =>
          (
            await fetch("api/action", {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ queue, action, ids: [job] }),
            })
          ).status,
        q.name,
        id,
        state === "dead" ? "retry" : "promote",
      )
      expect(status).toBe(403)
    }
    expect((await q.getJob(dead))?.state).toBe("dead")
    expect((await q.getJob(delayed))?.state).toBe("delayed")
  })

  it("an action not confirmed sends nothing and changes nothing", async () => {
    const q = newQueue()
    const id = await deadJob(q)
    const raw = rawClient()
    onCleanup(() => raw.quit())
    const before = await dumpQueue(raw, q.name, PREFIX)
    const page = await openPage(browser, base, `#/job/${q.name}/${id}`, { token: TOKEN, answer: false })
    const actions: string[] = []
    page.on("request", (r) => {
      if (r.url().endsWith("api/action")) actions.push(r.url())
    })
    for (const button of ["#delete-job", "#retry-job"]) {
      await page.waitForSelector(button)
      const asked = new Promise<string>((r) => page.once("dialog", (d) => r(d.message())))
      await page.click(button)
      expect(await asked).toContain(id)
      // the click's handler has run to its end once the page answers again
      await page.evaluate(() => 1)
    }
    expect(actions).toEqual([])
    expect(await dumpQueue(raw, q.name, PREFIX)).toEqual(before)
  })
})

describe("flow limits on the queue page", () => {
  it("shows the rate limit and the concurrency cap as set, and the reserves each held back as stats counts them", async () => {
    const q = newQueue()
    const page = await openPage(browser, base, `#/queue/${q.name}`)
    await page.waitForSelector('#limits tr[data-limit="rate"]')
    expect(await textOf(page, '#limits tr[data-limit="rate"] td:nth-child(2)')).toBe("none")
    await q.setRateLimit({ max: 100, perMs: 1000 })
    await q.setConcurrency(1)
    // two calls: a reading taken between them shows the rate and no cap yet, so wait for a
    // reading with both, not for the rate alone
    const cell = (limit: string) => `#limits tr[data-limit="${limit}"] td:nth-child(2)`
    await page.waitForFunction(
      (rate, cap) =>
        document.querySelector(rate)?.textContent === "100 per 1.0 s" &&
        document.querySelector(cap)?.textContent === "1 active at most",
      {},
      cell("rate"),
      cell("concurrency"),
    )
    expect(await textOf(page, '#limits tr[data-limit="groups"] td:nth-child(2)')).toBe("none")
    await q.setGroupLimits({ concurrency: 2, max: 10, perMs: 1000 })
    await page.waitForFunction(
      () =>
        document.querySelector('#limits tr[data-limit="groups"] td:nth-child(2)')?.textContent ===
        "2 active at most · 10 per 1.0 s",
    )
    // a worker of concurrency 4 under a cap of 1: its reserves are held back by the cap
    const done: string[] = []
    const w = useWorker(q.name, async () => {}, { prefix: PREFIX, concurrency: 4 })
    w.on("completed", (job) => done.push(job.id))
    const ids = await q.addBulk(Array.from({ length: 8 }, (_, i) => ({ payload: i })))
    await until("every job completed", () => ids.every((id) => done.includes(id)))
    await w.close()
    const c = (await q.stats()).counters
    expect(c.limitedConcurrency).toBeGreaterThan(0)
    await page.waitForFunction(
      (s) => document.querySelector('#limits tr[data-limit="limited"] td:nth-child(2)')?.textContent === s,
      {},
      `by the rate limit ${c.limitedRate} · by the cap ${c.limitedConcurrency} · by RateLimited ${c.limitedHeld}`,
    )
    await shoot(page, "#limits-section", join(SHOTS, "dashboard-limits.png"))
    await q.setRateLimit(null)
    await page.waitForFunction(
      () => document.querySelector('#limits tr[data-limit="rate"] td:nth-child(2)')?.textContent === "none",
    )
  })
})

describe("retention on the queue page", () => {
  it("shows the default policy, then the one set, and the completed jobs kept now", async () => {
    const q = newQueue()
    const done: string[] = []
    const w = useWorker(q.name, async () => {}, { prefix: PREFIX })
    w.on("completed", (job) => done.push(job.id))
    const id = await q.add({ n: 1 })
    await until("the job completed", () => done.includes(id))
    const page = await openPage(browser, base, `#/queue/${q.name}`)
    const kept = (kind: string) => `#retention tr[data-kind="${kind}"] td:nth-child(2)`
    await page.waitForSelector(kept("completed"))
    expect(await textOf(page, kept("completed"))).toBe("the newest 1000, for 1.0 h after they finish")
    expect(await textOf(page, kept("cancelled"))).toBe("the newest 1000, for 1.0 h after they finish")
    expect(await textOf(page, kept("dead"))).toBe("kept until retried or purged (no bound)")
    await page.waitForFunction(() =>
      document.querySelector("#retention-section h3")?.textContent?.endsWith("completed jobs kept now: 1)"),
    )
    await q.setRetention({ completed: { count: 10, ageMs: 60_000 }, dead: { count: 5 } })
    await page.waitForFunction(
      (s) => document.querySelector(s)?.textContent === "the newest 10, for 1 min after they finish",
      {},
      kept("completed"),
    )
    expect(await textOf(page, kept("dead"))).toBe("the newest 5")
  })

  it("Retry job runs a completed job (kept by the default retention) again once confirmed", async () => {
    const q = newQueue()
    const runs: string[] = []
    const w = useWorker(q.name, async () => {}, { prefix: PREFIX })
    w.on("completed", (job) => runs.push(job.id))
    const id = await q.add({ n: 1 })
    await until("the job completed", () => runs.includes(id))
    const page = await openPage(browser, base, `#/job/${q.name}/${id}`, { token: TOKEN })
    await page.waitForSelector("#retry-job")
    await page.click("#retry-job")
    await until("the job completed a second time", () => runs.filter((r) => r === id).length === 2)
    await statusSays(page, `job ${id} queued again`)
    expect(await textOf(page, "#status")).toBe(`job ${id} queued again`)
  })
})

describe("bidi controls in headings (N2)", () => {
  it("a job link's id with U+202E is shown as its code point in the heading, not as an override", async () => {
    const q = newQueue()
    await q.add({ seed: true })
    const page = await openPage(browser, base, `#/job/${q.name}/${encodeURIComponent("abc\u202Egpj.exe")}`)
    await page.waitForFunction(() => document.querySelector("h2")?.textContent?.includes(" / job "))
    const headings = await page.$$eval("h1, h2, h3", (hs) => hs.map((h) => h.textContent ?? ""))
    expect(headings.join("\n")).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/)
    expect(await textOf(page, "h2")).toBe(`Queues / ${q.name} / job abc\u27E8U+202E\u27E9gpj.exe`)
  })
})
