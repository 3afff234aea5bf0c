/// <reference lib="dom" />
/**
 * A dashboard served on 127.0.0.1 and a headless Chromium (Debian's `chromium`, driven by
 * puppeteer-core, which downloads no browser) for the dashboard's browser tests: pages
 * opened with or without the token, closed after the test.
 */
import { spawnSync } from "node:child_process"
import { createServer } from "node:http"
import puppeteer, { type Browser, type Page } from "puppeteer-core"
import { type DashboardHandler, type DashboardOptions, dashboardHandler } from "../../src/dashboard.ts"
import { onCleanup } from "./cleanup.ts"

/** The Chromium binary: CHROMIUM_PATH, else Debian's. */
export const chromium = (): string => {
  for (const bin of [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"]) {
    if (bin && spawnSync(bin, ["--version"], { stdio: "ignore" }).status === 0) return bin
  }
  throw new Error("chromium not found: install Debian's chromium package (apt-get install -y chromium)")
}

/** A headless Chromium. */
export const launchBrowser = (): Promise<Browser> =>
  puppeteer.launch({
    executablePath: chromium(),
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  })

/** `dashboardHandler(options)` served on a free loopback port: its base URL, handler and port; `close` stops both. */
export const serveDashboard = async (options: DashboardOptions) => {
  const handler: DashboardHandler = dashboardHandler(options)
  const server = createServer(handler)
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  const port = (server.address() as { port: number }).port
  return {
    base: `http://127.0.0.1:${port}/`,
    port,
    handler,
    close: async () => {
      await new Promise((r) => {
        server.close(r)
        server.closeAllConnections()
      })
      await handler.close()
    },
  }
}

/**
 * A new page of `browser` at `base` + `hash` (with the token when `token` is given, as the
 * printed link gives it), its dialogs answered by `answer` (default: accept); closed after the test.
 */
export const openPage = async (
  browser: Browser,
  base: string,
  hash: string,
  { token, answer = true }: { readonly token?: string; readonly answer?: boolean } = {},
): Promise<Page> => {
  const page = await browser.newPage()
  onCleanup(() => page.close())
  page.on("dialog", (d) => void (answer ? d.accept() : d.dismiss()))
  await page.setViewport({ width: 1100, height: 700 })
  if (token !== undefined) await page.goto(`${base}#token=${token}`)
  await page.goto(`${base}${hash}`)
  return page
}

/** The text of the first element `selector` matches, or undefined when none does. */
export const textOf = (page: Page, selector: string) =>
  page.$eval(selector, (e) => e.textContent ?? "").catch(() => undefined)

/** A screenshot of the element `selector` of `page` to `path`, at most `maxHeight` pixels of its top (small PNGs for the docs). */
export const shoot = async (page: Page, selector: string, path: string, maxHeight = 420) => {
  // the box is read in one turn of the page's own script: the live page re-renders a section on
  // each reading, so an element handle taken first can be detached by the time its box is asked
  await page.waitForSelector(selector)
  const box = await page.evaluate((sel) => {
    const r = document.querySelector(sel)?.getBoundingClientRect()
    return r && r.width > 0
      ? { x: r.x + window.scrollX, y: r.y + window.scrollY, width: r.width, height: r.height }
      : undefined
  }, selector)
  if (!box) throw new Error(`no ${selector} to take a screenshot of`)
  const clip = { x: box.x, y: box.y, width: box.width, height: Math.min(box.height, maxHeight) }
  await page.screenshot({ path, clip, captureBeyondViewport: true })
}
