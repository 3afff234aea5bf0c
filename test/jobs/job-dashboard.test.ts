/**
 * The dashboard shows a job's name (its page and the queue page's job rows), each failed
 * attempt's error and its log lines (headless Chromium, real Redis).
 */
import type { Browser } from "puppeteer-core"
import { beforeAll, describe, expect, it } from "vitest"
import { Queue } from "../../src/index.ts"
import { launchBrowser, openPage, serveDashboard, textOf } from "../support/browser.ts"
import { onCleanup } from "../support/cleanup.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useWorker } from "../support/use.ts"

const PREFIX = "lqjobdash"
const name = queueNamer("jobdash")
let browser: Browser
let base: string

beforeAll(async () => {
  browser = await launchBrowser()
  const served = await serveDashboard({ connection: redisUrl(), prefix: PREFIX, intervalMs: 250, discoverEveryMs: 500 })
  base = served.base
  return async () => {
    await served.close()
    await browser.close()
  }
})

describe("the dashboard's job data", () => {
  it("a dead named job's page shows its name, every attempt's error and its log; its row shows the name", async () => {
    const q = new Queue<{ to: string }>(name(), { connection: redisUrl(), prefix: PREFIX })
    onCleanup(() => q.close())
    const id = await q.add({ to: "a@x" }, { name: "email", maxAttempts: 2 })
    useWorker<{ to: string }>(
      q.name,
      async (job) => {
        await job.log(`sending to ${job.payload.to}, attempt ${job.attempt}`)
        throw new Error(`smtp refused ${job.attempt}`)
      },
      { prefix: PREFIX, backoff: { type: "fixed", delayMs: 0 } },
    )
    await until("dead", async () => (await q.getJob(id))?.state === "dead")
    const page = await openPage(browser, base, `#/job/${q.name}/${id}`)
    await page.waitForSelector("#job-errors tbody tr")
    expect(await textOf(page, "#job-name")).toBe("name email")
    const rows = await page.$$eval("#job-errors tbody tr", (trs) =>
      trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)),
    )
    expect(rows.map((r) => [r[0], r[2], r[3], r[4]])).toEqual([
      ["1", "failed", "Error", "smtp refused 1"],
      ["2", "failed", "Error", "smtp refused 2"],
    ])
    expect(await textOf(page, "#job-logs")).toBe("sending to a@x, attempt 1\nsending to a@x, attempt 2")
    const list = await openPage(browser, base, `#/queue/${q.name}`)
    await list.waitForSelector("#jobs-state")
    await list.select("#jobs-state", "dead")
    await list.waitForFunction(
      (id) => document.querySelector(`#jobs tbody tr[data-id="${id}"] td.name`)?.textContent === "email",
      {},
      id,
    )
  })
})
