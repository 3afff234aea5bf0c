/// <reference lib="dom" />
/**
 * The job page's flow section in a real Chromium (flows, docs/flows.md): a job's parents and
 * children, each with its state, linked both ways; the children bounded to a first page, the
 * rest on the children pages (`#/children/<q>/<cursor>/<id>`, 50 a page), whose cursor the
 * server checks is the parent's own. The screenshot for docs/dashboard.md is written when LEASEQ_SCREENSHOTS=1.
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

/** An engine cursor as the children view names it. */
const b64 = (cursor: string) => Buffer.from(cursor, "utf8").toString("base64url")

/** The status and JSON body of GET `path` of the dashboard, over plain HTTP. */
const get = async (path: string) => {
  const res = await fetch(`${base}${path}`)
  return { status: res.status, body: (await res.json()) as { error?: string; kind?: string } }
}

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

describe("the children pages", () => {
  it("pages a parent's 120 children 50/50/20 from its job page, each child seen exactly once, to an end", async () => {
    const a = newQueue()
    const tree = await a.addFlow({
      payload: "root",
      children: Array.from({ length: 120 }, (_, i) => ({ payload: `c${i}` })),
    })
    const ids = (page: Page, table: string) =>
      page.$$eval(`#${table} tbody tr`, (trs) => trs.map((tr) => tr.getAttribute("data-id") ?? ""))
    const page = await openPage(browser, base, `#/job/${a.name}/${tree.id}`)
    await listing(page, "job-children", 50)
    const first = await ids(page, "job-children")
    await follow(page, "#job-children-next")
    await page.waitForFunction(() => location.hash.startsWith("#/children/"))
    await listing(page, "children", 50)
    await page.waitForSelector("#children-next")
    const second = await ids(page, "children")
    const at = await page.evaluate(() => location.hash)
    await follow(page, "#children-next")
    await page.waitForFunction((h) => location.hash !== h, {}, at)
    await page.waitForSelector("#children-end")
    await listing(page, "children", 20)
    const third = await ids(page, "children")
    expect(await page.$("#children-next")).toBeNull()
    expect([first.length, second.length, third.length]).toEqual([50, 50, 20])
    const seen = [...first, ...second, ...third]
    expect(new Set(seen).size).toBe(120)
    expect([...seen].sort()).toEqual(tree.children.map((c) => c.id).sort())
    // the first page by its own address lists what the job page lists
    const again = await openPage(browser, base, `#/children/${a.name}//${tree.id}`)
    await listing(again, "children", 50)
    expect(await ids(again, "children")).toEqual(first)
  })

  it("refuses, with 400 over plain HTTP, a cursor that is not the parent's own, a malformed one and a view too long", async () => {
    const a = newQueue()
    const tree = await a.addFlow({ payload: "p", children: [{ payload: "c1" }, { payload: "c2" }] })
    const other = await a.addFlow({ payload: "o", children: [{ payload: "d1" }, { payload: "d2" }] })
    const own = (await a.getDependencies(tree.id, { count: 1 })).cursor!
    const foreign = (await a.getDependencies(other.id, { count: 1 })).cursor!
    const view = (cursor: string) => `api/stream?view=${encodeURIComponent(`children:${a.name}:${cursor}:${tree.id}`)}`
    const api = (cursor: string) => `api/children?queue=${a.name}&id=${tree.id}&cursor=${encodeURIComponent(cursor)}`
    const bad = [
      b64(foreign), // another parent's: it would page that parent's children
      b64("x"), // not "<id>|…"
      b64(tree.id), // the id without its bar: other parents' ids that start with it sort after it
      `${b64(own)}=`, // padded, not base64url
      "!!", // not base64url at all
      Buffer.from([...Buffer.from(`${tree.id}|`), 0xff]).toString("base64url"), // "<id>|" then no UTF-8
    ]
    for (const cursor of bad) {
      for (const path of [view(cursor), api(cursor)]) {
        const r = await get(path)
        expect(r.status, `${path}`).toBe(400)
        expect(r.body.error, path).toContain(`is not one of job ${tree.id}'s children pages`)
      }
    }
    const long = b64(`${tree.id}|${"x".repeat(1000)}`)
    for (const path of [view(long), api(long)]) {
      const r = await get(path)
      expect(r.status).toBe(400)
      expect(r.body.error).toContain("at most 1024 characters")
    }
    // the parent's own cursor reads its second page
    const ok = await get(api(b64(own)))
    expect(ok.status).toBe(200)
    expect(ok.body.kind).toBe("children")
    expect((ok.body as { children?: ReadonlyArray<{ id: string }> }).children?.map((c) => c.id)).toEqual([
      tree.children[1]!.id,
    ])
  })
})
