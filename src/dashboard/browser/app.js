// @ts-check
/**
 * The dashboard's browser script, served as /app.js (an ES module; it imports its
 * neighbours in this folder, each served by name beside it). It routes by the address's
 * hash (`#/`, `#/workers`, `#/queue/<q>`, `#/job/<q>/<id>`, `#/children/<q>/<cursor>/<id>`), streams the view's readings
 * and shows each as it comes; Find looks a job up by id.
 */
import { byId, el, live, main, status, visible } from "./dom.js"
import { childrenPage } from "./flow.js"
import { job } from "./job.js"
import { stopJobs } from "./jobs.js"
import { api, bodyOf, token, watch } from "./net.js"
import { overview, workersPage } from "./overview.js"
import { queue } from "./queue.js"
import { controls, state, tick } from "./state.js"

/** @import { Reading } from "./types.js" */

setInterval(tick, 200)

/** What a page that cannot act says, in one line, of how to act safely. */
const READ_ONLY =
  "Read-only. To retry, promote, clean or purge: restart with leaseq dashboard --allow-actions and open the link with #token= it prints (keep it private; beyond loopback put it behind an authenticating proxy)."
const NO_TOKEN = "Actions are on, but this page has no token: open the link with #token= that leaseq dashboard printed."

const notice = byId("notice")

/** The clock of the page: UTC, as every time on it (the header says so once). */
const utcNow = () => new Date().toISOString().slice(11, 19)

/**
 * Show reading `d` of the current view.
 * @param {Reading} d
 */
const show = (d) => {
  // a failed reading (Redis unreachable…) replaces the view: no stale figures shown as live
  if ("error" in d) {
    live.textContent = `not live · ${utcNow()}`
    main.replaceChildren(el("p", { class: "bad", text: d.error }))
    return
  }
  live.textContent = `live · ${utcNow()}`
  const actions = "actions" in d && d.actions === true
  notice.textContent = actions ? (token ? "" : NO_TOKEN) : READ_ONLY
  notice.hidden = notice.textContent === ""
  if (d.kind === "job") job(d)
  else if (d.kind === "children") childrenPage(d)
  else if (d.kind === "workers") workersPage(d)
  else if (d.kind === "queue") queue(d)
  else if (d.kind === "overview") overview(d)
}

/** The view the address names: `job:<q>:<id>`, `children:<q>:<cursor>:<id>`, `queue:<q>`, `workers` or `overview`. */
const viewOfHash = () => {
  const mc = /^#\/children\/([^/]+)\/([^/]*)\/(.+)$/.exec(location.hash)
  if (mc?.[1] !== undefined && mc[2] !== undefined && mc[3] !== undefined)
    return `children:${decodeURIComponent(mc[1])}:${mc[2]}:${decodeURIComponent(mc[3])}`
  const mj = /^#\/job\/([^/]+)\/(.+)$/.exec(location.hash)
  if (mj?.[1] !== undefined && mj[2] !== undefined)
    return `job:${decodeURIComponent(mj[1])}:${decodeURIComponent(mj[2])}`
  const m = /^#\/queue\/(.+)$/.exec(location.hash)
  if (m?.[1] !== undefined) return `queue:${decodeURIComponent(m[1])}`
  return location.hash === "#/workers" ? "workers" : "overview"
}

/** @type {AbortController | null} */
let source = null

/** Watch the view the address names, ending the previous view's stream. */
const route = () => {
  source?.abort()
  stopJobs()
  state.rows = []
  controls("", () => [])
  main.replaceChildren(el("p", { class: "muted", text: "Loading…" }))
  source = new AbortController()
  void watch(viewOfHash(), source, show)
}

byId("search").addEventListener("submit", async (e) => {
  e.preventDefault()
  if (!(e.target instanceof HTMLFormElement)) return
  const id = String(new FormData(e.target).get("id")).trim()
  const inView = /^#\/(?:queue|job)\/([^/]+)/.exec(location.hash)
  status.textContent = `looking for ${id}…`
  const res = await api(`api/find?id=${encodeURIComponent(id)}${inView ? `&queue=${inView[1]}` : ""}`)
  const r = await bodyOf(res)
  if (res.ok) location.hash = `#/job/${encodeURIComponent(String(r.queue))}/${encodeURIComponent(String(r.id))}`
  else status.textContent = visible(res.status === 404 ? `not found: ${id}` : r.error)
})
window.addEventListener("hashchange", route)
route()
