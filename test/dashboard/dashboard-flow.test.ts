/// <reference lib="dom" />
/**
 * The job page's flow section in a real Chromium (flows, docs/flows.md): a job's parents and
 * children, each with its state, linked both ways; the children bounded to a first page.
 * The screenshot for docs/dashboard.md is written when LEASEQ_SCREENSHOTS=1.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import type { Browser, Page } from "puppeteer-core"
import { beforeAll, describe, expect, it } from "vitest"
import { Queue } from "../../src/index.ts"
import { launchBrowser, openPage, serveDashboard, shoot } from "../support/browser.ts"
import { onCleanup } from "../support/cleanup.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"

const PREFIX = "lqdashflow"
const name = queueNamer("dashflow")
const ROOT = resolve(import.meta.dirname, "../..")
const SHOTS = process.env.LEASEQ_SCREENSHOTS === "1" ? join(ROOT, "docs") : mkdtempSync(join(tmpdir(), "leaseq-shots-"))

let browser: Browser
let base: string

beforeAll(async () => {
  browser = await launchBrowser()
  const served = await serveDashboard({ connection: redisUrl(), prefix: PREFIX, intervalMs: 250 })
  base = served.base
  return async () => {
    await served.close()
    await browser.close()
  }
})

const newQueue = (queue = name()) => {
  const q = new Queue<string>(queue, { connection: redisUrl(), prefix: PREFIX })
  onCleanup(() => q.close())
  return q
}

/** The rows of table `id` on the page: each node's id and state, in order. */
const rows = (page: Page, id: string) =>
  page.$$eval(`#${id} tbody tr`, (trs) =>
    trs.map((tr) => `${tr.getAttribute("data-id")} ${tr.querySelector(".pill")?.textContent ?? ""}`),
  )

/** Follow the link `selector` (clicked in one turn of the page's script: the live page re-renders each reading). */
const follow = (page: Page, selector: string) =>
  page.evaluate((sel) => (document.querySelector(sel) as HTMLAnchorElement | null)?.click(), selector)

/** Wait until table `id` lists `n` rows. */
const listing = (page: Page, id: string, n: number) =>
  page.waitForFunction((id, n) => document.querySelectorAll(`#${id} tbody tr`).length === n, {}, id, n)

describe("the job page's flow section", () => {
  it("shows a parent's children and a child's parent, each with its state, linked both ways", async () => {
    const a = newQueue()
    const b = newQueue()
    const tree = await a.addFlow({
      payload: "root",
      children: [{ payload: "c1" }, { queue: b.name, payload: "c2", children: [{ payload: "g" }] }],
    })
    const [c1, c2] = tree.children
    const g = c2!.children[0]!
    const page = await openPage(browser, base, `#/job/${a.name}/${tree.id}`)
    await listing(page, "job-children", 2)
    expect((await rows(page, "job-children")).sort()).toEqual(
      [`${c1!.id} waiting`, `${c2!.id} waiting-children`].sort(),
    )
    expect(await page.$("#job-parents")).toBeNull()
    // down to the child in the other queue: its page lists its parent and its own child
    await follow(page, `#job-children tr[data-id="${c2!.id}"] td:nth-child(2) a`)
    await page.waitForFunction((h) => location.hash === h, {}, `#/job/${b.name}/${c2!.id}`)
    await listing(page, "job-parents", 1)
    expect(await rows(page, "job-parents")).toEqual([`${tree.id} waiting-children`])
    await listing(page, "job-children", 1)
    expect(await rows(page, "job-children")).toEqual([`${g.id} waiting`])
    await shoot(page, "#job-flow", join(SHOTS, "dashboard-flow.png"), 300)
    // and back up to the root
    await follow(page, `#job-parents tr[data-id="${tree.id}"] td:nth-child(2) a`)
    await page.waitForFunction((h) => location.hash === h, {}, `#/job/${a.name}/${tree.id}`)
    await listing(page, "job-children", 2)
    // a job outside any flow has no flow section
    const plain = await a.add("plain")
    const other = await openPage(browser, base, `#/job/${a.name}/${plain}`)
    await other.waitForFunction(() => document.querySelector("#job-state")?.textContent === "waiting")
    expect(await other.$("#job-flow")).toBeNull()
  })

  it("lists at most the first 50 children, and says how to see them all", async () => {
    const a = newQueue()
    const tree = await a.addFlow({
      payload: "root",
      children: Array.from({ length: 60 }, (_, i) => ({ payload: `c${i}` })),
    })
    const page = await openPage(browser, base, `#/job/${a.name}/${tree.id}`)
    await listing(page, "job-children", 50)
    await page.waitForSelector("#job-children-more")
    expect(await page.$eval("#job-children-more", (e) => e.textContent)).toContain(`leaseq flow ${tree.id}`)
    expect(await page.$eval("#job-flow h3", (e) => e.textContent)).toContain("60 child(ren) pending")
  })
})
