/// <reference lib="dom" />
/**
 * Issue 34's operator's dashboard in a real Chromium: the queue page's section bar, dead
 * letters grouped by masked error with their ids, bulk actions (retry selected and all,
 * promote selected, clean), the overview's rates with axes and a scale, one UTC clock said
 * once, and the one line that tells a read-only page how to act safely. Screenshots for
 * docs/dashboard.md are written when LEASEQ_SCREENSHOTS=1.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import type { Browser, Page } from "puppeteer-core"
import { beforeAll, describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { connect, type RedisClient } from "../../src/redis/Client.ts"
import { launchBrowser, openPage, serveDashboard, shoot, textOf } from "../support/browser.ts"
import { onCleanup } from "../support/cleanup.ts"
import { newJob, run } from "../support/jobs.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"

const ROOT = resolve(import.meta.dirname, "../..")
const PREFIX = "lqdashux"
const TOKEN = "opsux-token-0123456789abcdef"
const name = queueNamer("dashux")
const SHOTS = process.env.LEASEQ_SCREENSHOTS === "1" ? join(ROOT, "docs") : mkdtempSync(join(tmpdir(), "leaseq-shots-"))

let browser: Browser
let base: string
let readOnlyBase: string
let client: RedisClient

beforeAll(async () => {
  browser = await launchBrowser()
  client = connect(redisUrl())
  const common = { connection: redisUrl(), prefix: PREFIX, intervalMs: 250, discoverEveryMs: 500 }
  const served = await serveDashboard({ ...common, allowActions: true, token: TOKEN })
  const readOnly = await serveDashboard(common)
  base = served.base
  readOnlyBase = readOnly.base
  return async () => {
    await served.close()
    await readOnly.close()
    await browser.close()
    await client.close()
  }
})

/** A fresh queue under the prefix, as script commands. */
const fresh = () => {
  const keys = queueKeys(name(), PREFIX)
  return { keys, c: makeCommands(client, keys) }
}

/** `n` jobs of a fresh queue killed on their one attempt, the i-th with error `message(i)`. */
const withDead = async (n: number, message: (i: number) => string) => {
  const q = fresh()
  await run(q.c.add(Array.from({ length: n }, () => newJob({ maxAttempts: 1 }))))
  const { jobs } = await run(q.c.reserve(n, 60_000, 0))
  for (const [i, l] of jobs.entries())
    await run(q.c.fail(l, { delayMs: 0, error: JSON.stringify({ message: message(i) }), mode: "retry" }))
  return { ...q, ids: jobs.map((j) => j.id) }
}

/**
 * Click `selector` as the DOM does (its click event, its handler), not with the mouse: the page
 * re-renders on every reading, and a mouse click aimed at coordinates taken before a re-layout
 * can land beside the button (the "Retry selected" click of a loaded CI run did nothing).
 */
const press = (page: Page, selector: string) =>
  page.$eval(selector, (b) => {
    ;(b as HTMLElement).click()
  })

const rows = (page: Page, table: string) =>
  page.$$eval(`#${table} tbody tr`, (trs) =>
    trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)),
  )

describe("the queue page", () => {
  it("has a section bar with a link per section and its count; a link scrolls to its section and keeps the route", async () => {
    const q = await withDead(2, (i) => `boom ${i}`)
    // 100 delayed jobs make the page longer than the window: a section below them is out of view
    await run(q.c.add(Array.from({ length: 100 }, () => newJob({ delayMs: 3_600_000 }))))
    const page = await openPage(browser, base, `#/queue/${q.keys.queue}`, { token: TOKEN })
    await page.waitForSelector("#sections a[data-section=dead-section]")
    const links = await page.$$eval("#sections a", (as) =>
      as.map((a) => [a.getAttribute("data-section"), a.textContent]),
    )
    expect(links).toEqual(
      expect.arrayContaining([
        ["leases-section", "Active 0"],
        ["jobs-section", "Jobs by state"],
        ["dead-section", "Dead 2"],
        ["delayed-section", "Delayed 100"],
        ["clean-section", "Clean"],
        ["workers-section", "Workers 0"],
        ["schedules-section", "Schedules 0"],
        ["retention-section", "Retention"],
      ]),
    )
    // every link names a section the page has
    for (const [id] of links) expect(await page.$(`section#${id}`), String(id)).not.toBeNull()
    // the 100 delayed rows put the workers below the window's 700 px
    await page.waitForFunction(
      () => (document.querySelector("#workers-section")?.getBoundingClientRect().top ?? 0) > 700,
    )
    await page.click("#sections a[data-section=workers-section]")
    await page.waitForFunction(() => {
      const top = document.querySelector("#workers-section")?.getBoundingClientRect().top ?? -1
      return top >= 0 && top < window.innerHeight / 2
    })
    expect(await page.evaluate(() => location.hash)).toBe(`#/queue/${q.keys.queue}`)
    expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(0)
  })

  it("groups 5 dead letters that differ only in an e-mail address as one, with their ids; Select and Retry selected retries them", async () => {
    const q = await withDead(6, (i) =>
      i < 5 ? `SMTP 550: no mailbox user${i}@mail${i}.example.com` : "timeout after 30000 ms",
    )
    const page = await openPage(browser, base, `#/queue/${q.keys.queue}`, { token: TOKEN })
    await page.waitForFunction(() => document.querySelectorAll("#dead-groups tbody tr").length === 2)
    const groups = await rows(page, "dead-groups")
    expect(groups[0]?.slice(1, 3)).toEqual(["SMTP <n>: no mailbox <email>", "5"])
    expect(groups[1]?.slice(1, 3)).toEqual(["timeout after <n> ms", "1"])
    const linked = await page.$$eval("#dead-groups tbody tr:first-child td.ids a", (as) =>
      as.map((a) => a.getAttribute("href")),
    )
    expect(linked.sort()).toEqual(
      q.ids
        .slice(0, 5)
        .map((id) => `#/job/${q.keys.queue}/${id}`)
        .sort(),
    )
    await shoot(page, "#dead-section", join(SHOTS, "dashboard-dead.png"), 320)
    await press(page, "#dead-groups tbody tr:first-child button.select-group")
    const selected = await page.$$eval("#dead input:checked", (is) => is.map((i) => (i as HTMLInputElement).value))
    expect(selected.sort()).toEqual(q.ids.slice(0, 5).sort())
    await press(page, "#retry-selected")
    const raw = rawClient()
    onCleanup(() => raw.quit())
    await until("the 5 to be retried", async () => (await raw.zcard(q.keys.dead)) === 1 || undefined)
    expect(await raw.llen(q.keys.wait)).toBe(5)
    await page.waitForFunction(() => document.querySelector("#status")?.textContent === "retry: 5 done")
    // Retry all takes the rest
    await page.waitForFunction(() => document.querySelector("#retry-all")?.textContent === "Retry all (1)")
    await press(page, "#retry-all")
    await until("every dead job to be retried", async () => (await raw.zcard(q.keys.dead)) === 0 || undefined)
  })

  it("promotes the delayed jobs selected, and only them; boxes stay checked across readings", async () => {
    const q = fresh()
    const jobs = [newJob({ delayMs: 3_600_000 }), newJob({ delayMs: 3_600_000 }), newJob({ delayMs: 3_600_000 })]
    await run(q.c.add(jobs))
    const page = await openPage(browser, base, `#/queue/${q.keys.queue}`, { token: TOKEN })
    await page.waitForFunction(() => document.querySelectorAll("#delayed tbody tr").length === 3)
    const [a, b, c] = jobs.map((j) => j.id) as [string, string, string]
    // clicked in the page, found and clicked in one task: a mouse click finds the box, then
    // aims at where it is, and a reading that lays the page out again in between (each
    // rebuilds the sections above) moved it away ("Node is either not clickable"), 1 run of 3
    // at a load of 12. What this test is about is the boxes surviving readings, below
    const clickIn = (selector: string) => page.$eval(selector, (e) => (e as HTMLElement).click())
    await clickIn(`#delayed input[value="${a}"]`)
    await clickIn(`#delayed input[value="${c}"]`)
    // a few readings later (4 per second) the boxes are still checked
    const live = await textOf(page, "#live")
    await page.waitForFunction((before) => document.querySelector("#live")?.textContent !== before, {}, live)
    const checked = () => page.$$eval("#delayed input:checked", (is) => is.map((i) => (i as HTMLInputElement).value))
    expect((await checked()).sort()).toEqual([a, c].sort())
    await clickIn("#promote-selected")
    const raw = rawClient()
    onCleanup(() => raw.quit())
    await until("two to be promoted", async () => (await raw.zcard(q.keys.delayed)) === 1 || undefined)
    expect(await raw.zscore(q.keys.delayed, b)).not.toBeNull()
    expect((await raw.lrange(q.keys.wait, 0, -1)).sort()).toEqual([a, c].sort())
  })

  it("cleans the completed jobs finished over the minutes given, after a confirm", async () => {
    const q = fresh()
    await run(q.c.add([newJob(), newJob(), newJob()]))
    const { jobs } = await run(q.c.reserve(3, 60_000, 0))
    await run(q.c.complete(jobs.map((j) => ({ id: j.id, token: j.token }))))
    const raw = rawClient()
    onCleanup(() => raw.quit())
    expect(await raw.zcard(q.keys.done)).toBe(3)
    const page = await openPage(browser, base, `#/queue/${q.keys.queue}`, { token: TOKEN })
    await page.waitForSelector("#clean")
    // the default (over 60 min ago) deletes none of these
    await page.click("#clean")
    await page.waitForFunction(() => document.querySelector("#status")?.textContent === "clean: 0 done")
    expect(await raw.zcard(q.keys.done)).toBe(3)
    await page.$eval("#clean-minutes", (i) => {
      ;(i as HTMLInputElement).value = "0"
    })
    await page.click("#clean")
    await page.waitForFunction(() => document.querySelector("#status")?.textContent === "clean: 3 done")
    expect(await raw.zcard(q.keys.done)).toBe(0)
  })

  it("read-only, the page says in one line how to act safely and offers no action", async () => {
    const q = await withDead(1, () => "boom")
    await run(q.c.add([newJob({ delayMs: 3_600_000 })]))
    const page = await openPage(browser, readOnlyBase, `#/queue/${q.keys.queue}`)
    await page.waitForSelector("#dead-groups tbody tr")
    const notice = await textOf(page, "#notice")
    expect(notice).toMatch(
      /^Read-only\. To retry, promote, clean or purge: restart with leaseq dashboard --allow-actions/,
    )
    expect(notice).toContain("#token=")
    expect(notice?.split("\n")).toHaveLength(1)
    expect(await page.$eval("#notice", (e) => (e as HTMLElement).hidden)).toBe(false)
    for (const button of ["#retry-all", "#retry-selected", "#promote-selected", "#clean", ".select-group", "#pause"])
      expect(await page.$(button), button).toBeNull()
    // the overview says it too; with actions and the token, the line is gone
    const overview = await openPage(browser, readOnlyBase, "#/")
    await overview.waitForFunction(() => document.querySelector("#notice")?.textContent?.startsWith("Read-only."))
    const acting = await openPage(browser, base, "#/", { token: TOKEN })
    await acting.waitForSelector("#queues")
    expect(await acting.$eval("#notice", (e) => (e as HTMLElement).hidden)).toBe(true)
    const noToken = await openPage(browser, base, "#/")
    await noToken.waitForFunction(() => document.querySelector("#notice")?.textContent?.includes("no token"))
  })
})

describe("the page's clock and the overview's rates", () => {
  it("one clock, UTC, said once in the header: the live time is UTC whatever the browser's zone", async () => {
    const q = await withDead(1, () => "boom")
    const page = await browser.newPage()
    onCleanup(() => page.close())
    await page.emulateTimezone("America/New_York")
    await page.goto(`${readOnlyBase}#/queue/${q.keys.queue}`)
    await page.waitForFunction(() => document.querySelector("#live")?.textContent?.startsWith("live"))
    expect(await textOf(page, "#clock")).toBe("all times UTC")
    const live = (await textOf(page, "#live")) ?? ""
    expect(live).toMatch(/^live · \d\d:\d\d:\d\d$/)
    const hour = Number(live.slice(7, 9))
    const utc = new Date().getUTCHours()
    expect([utc, (utc + 23) % 24]).toContain(hour)
    // every time shown on the page is UTC (ISO, ending Z): the died column of the dead letters
    const died = (await rows(page, "dead"))[0]?.[1] ?? ""
    expect(died).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(await page.evaluate(() => document.body.textContent?.match(/UTC/g)?.length)).toBe(1)
  })

  it("the rates chart has axes: a y scale from 0 to a round top per second, and an x axis from the oldest point to now", async () => {
    const q = fresh()
    await run(q.c.add([newJob()]))
    const page = await openPage(browser, base, "#/", { token: TOKEN })
    await page.waitForSelector(`#queues tr[data-queue="${q.keys.queue}"] svg.spark`)
    // no points yet: the axes and the scale are there, and say so
    const empty = await page.$eval(`#queues tr[data-queue="${q.keys.queue}"] svg.spark`, (svg) => ({
      axes: svg.querySelectorAll("line.axis").length,
      top: svg.querySelector(".y-max")?.textContent,
      start: svg.querySelector(".x-start")?.textContent,
    }))
    expect(empty).toEqual({ axes: 2, top: "1/s", start: "no points yet" })
    // a series of five minutes peaking at 37 completed/s: the scale's top is 50/s
    // run in the page as a string: the test's own transform must not rewrite its import()
    const drawn = (await page.evaluate(`(async () => {
      const { spark } = await import(location.origin + "/dom.js")
      const t = 1700000000000
      const svg = spark([[t, 3, 0], [t + 150000, 37, 1.5], [t + 300000, 12, 0]])
      document.querySelector("main").append(svg)
      const ys = svg.querySelector("polyline.rate-1").getAttribute("points").split(" ").map((p) => Number(p.split(",")[1]))
      return {
        top: svg.querySelector(".y-max").textContent,
        bottom: svg.querySelector(".y-min").textContent,
        start: svg.querySelector(".x-start").textContent,
        end: svg.querySelector(".x-end").textContent,
        label: svg.getAttribute("aria-label"),
        ys,
      }
    })()`)) as { top: string; bottom: string; start: string; end: string; label: string; ys: number[] }
    expect(drawn).toMatchObject({ top: "50/s", bottom: "0", start: "−5 min", end: "now" })
    expect(drawn.label).toContain("scale 0 to 50/s")
    // the peak is drawn highest (smallest y), the first point lowest
    expect(Math.min(...drawn.ys)).toBe(drawn.ys[1])
    expect(Math.max(...drawn.ys)).toBe(drawn.ys[0])
  })
})
