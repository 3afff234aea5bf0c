/// <reference lib="dom" />
/**
 * The dashboard's operator views in a real Chromium: the queue's schedules with their next
 * run on the Redis clock. Screenshots for docs/dashboard.md are written when
 * LEASEQ_SCREENSHOTS=1.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import type { Browser } from "puppeteer-core"
import { beforeAll, describe, expect, it } from "vitest"
import { Queue } from "../../src/index.ts"
import { until } from "../reliability/support.ts"
import { onCleanup } from "../support/cleanup.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { useWorker } from "../support/use.ts"
import { launchBrowser, openPage, serveDashboard, textOf } from "./browser.ts"

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
    await page.screenshot({ path: join(SHOTS, "dashboard-schedules.png") })
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

describe("actions on the job page", () => {
  it("Delete job removes a dead job once confirmed, and the page and status line say so", async () => {
    const q = newQueue()
    const id = await deadJob(q)
    const page = await openPage(browser, base, `#/job/${q.name}/${id}`, { token: TOKEN })
    await page.waitForSelector("#delete-job")
    await page.click("#delete-job")
    await page.waitForSelector("#job-missing")
    expect(await q.getJob(id)).toBeUndefined()
    expect(await textOf(page, "#status")).toBe(`job ${id} deleted`)
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
