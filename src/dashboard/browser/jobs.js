// @ts-check
/**
 * The queue page's list of jobs by state: a state selector, a page of jobs (each linking to
 * its page) and Previous / Next by cursor. The list streams its own view
 * (`jobs:<queue>:<state>:<order>:<cursor>`), so a page stays live; its controls stay put
 * across the queue's readings (a click is not lost to a reading that replaces them).
 */
import { ago, cell, el, jobLink, when } from "./dom.js"
import { watch } from "./net.js"

/** @import { JobState, JobsView, ListedRow } from "./job-readings.js" */
/** @import { Reading } from "./types.js" */

/** @type {ReadonlyArray<JobState>} */
const STATES = ["waiting", "delayed", "active", "completed", "cancelled", "dead"]

/** What the time column of a state says. */
const AT_TITLE = /** @type {const} */ ({
  waiting: "",
  delayed: "due in (Redis clock)",
  active: "lease left (Redis clock)",
  completed: "finished",
  cancelled: "cancelled",
  dead: "died",
})

const select = el("select", { id: "jobs-state", "aria-label": "jobs in state" })
for (const s of STATES) select.append(el("option", { value: s, text: s }))
const order = el("select", { id: "jobs-order", "aria-label": "order" })
order.append(
  el("option", { value: "asc", text: "oldest / next first" }),
  el("option", { value: "desc", text: "newest / last first" }),
)
const prev = el("button", { id: "jobs-prev", text: "Previous" })
const next = el("button", { id: "jobs-next", text: "Next" })
const caption = el("span", { id: "jobs-caption", class: "muted" })
const body = el("div", { id: "jobs-body" })
const box = el(
  "section",
  { id: "jobs-section" },
  el("h3", { text: "Jobs" }),
  el("p", {}, select, " ", order, " ", prev, next, " ", caption),
  body,
)

/**
 * What is listed: the queue, the state, the order, the cursors of the pages so far (the
 * last is the page shown), the next page's cursor, the stream.
 * @type {{ queue: string, state: JobState, order: "asc" | "desc", cursors: string[], next: string | undefined, ctl: AbortController | null }}
 */
const list = { queue: "", state: "waiting", order: "asc", cursors: [""], next: undefined, ctl: null }

const cursor = () => list.cursors[list.cursors.length - 1] ?? ""

/** Watch the page `list` names, ending the stream of the one before. */
const start = () => {
  list.ctl?.abort()
  list.ctl = new AbortController()
  list.next = undefined
  prev.disabled = list.cursors.length < 2
  next.disabled = true
  caption.textContent = "loading…"
  shown.sig = ""
  void watch(`jobs:${list.queue}:${list.state}:${list.order}:${cursor()}`, list.ctl, render)
}

select.addEventListener("change", () => {
  list.state = /** @type {JobState} */ (select.value)
  list.cursors = [""]
  start()
})
order.addEventListener("change", () => {
  list.order = order.value === "desc" ? "desc" : "asc"
  list.cursors = [""]
  start()
})
prev.addEventListener("click", () => {
  if (list.cursors.length < 2) return
  list.cursors.pop()
  start()
})
next.addEventListener("click", () => {
  if (list.next === undefined) return
  list.cursors.push(list.next)
  start()
})

/**
 * The time column of job `j` of page `d`.
 * @param {JobsView} d
 * @param {ListedRow} j
 */
const atText = (d, j) => {
  if (j.at === undefined) return "–"
  if (d.state === "delayed" || d.state === "active")
    return j.at > d.page.now ? ago(j.at - d.page.now) : `${ago(d.page.now - j.at)} ago`
  return when(j.at)
}

/**
 * A payload's start as a cell.
 * @param {ListedRow["payload"]} p
 */
const payloadCell = (p) =>
  cell(
    p.text === null
      ? p.length > 0
        ? `(${p.length} bytes, not shown)`
        : "–"
      : p.text + (p.length > p.text.length ? " …" : ""),
  )

/**
 * A clipped value (a result) as a cell: its start, or its length when not loaded.
 * @param {ListedRow["payload"] | undefined} v
 */
const clippedText = (v) =>
  v === undefined
    ? "–"
    : v.text === null
      ? `(${v.length} bytes, not shown)`
      : v.text + (v.length > v.text.length ? " …" : "")

/**
 * The outcome cell of job `j`: a completed job's result, another's last error.
 * @param {JobsView} d
 * @param {ListedRow} j
 */
const outcomeCell = (d, j) => {
  if (d.state === "completed") return cell(clippedText(j.result), "result")
  const e = j.error
  if (e === undefined) return cell("–", "error")
  if (e.cut === null) return cell(`(an error of ${e.length} bytes: see the job)`, "error bad")
  const name = e.cut.tag ?? e.cut.name ?? e.cut.reason ?? "Error"
  const reason = e.cut.reason !== undefined && e.cut.reason !== "failed" ? ` (${e.cut.reason})` : ""
  return cell(`${name}${reason}: ${e.cut.message}`, "error bad")
}

/**
 * How long job `j` of page `d` ran (completed) or has run so far (active, on the Redis clock).
 * @param {JobsView} d
 * @param {ListedRow} j
 */
const durationText = (d, j) => {
  if (j.startedAt === undefined) return "–"
  const end = d.state === "completed" ? j.at : d.page.now
  return end === undefined ? "–" : ago(Math.max(0, end - j.startedAt))
}

/** The states whose rows say how long their run took (completed) or takes (active). */
const TIMED = new Set(["active", "completed"])

/**
 * What the table shows: the signature of the jobs it was built from, and its cells that move
 * with the clock (the time column, an active job's duration).
 * @type {{ sig: string, atCells: HTMLTableCellElement[], durCells: HTMLTableCellElement[] }}
 */
const shown = { sig: "", atCells: [], durCells: [] }

/**
 * The time cell of job `j` of page `d`, kept to update in place.
 * @param {JobsView} d
 * @param {ListedRow} j
 */
const atCell = (d, j) => {
  const c = cell(atText(d, j), "num at")
  shown.atCells.push(c)
  return c
}

/**
 * The duration cell of job `j` of page `d`, kept to update in place.
 * @param {JobsView} d
 * @param {ListedRow} j
 */
const durCell = (d, j) => {
  const c = cell(durationText(d, j), "num duration")
  shown.durCells.push(c)
  return c
}

/**
 * Show a reading of the list, when it is of the page asked for (a reading of the page
 * before may still arrive once its stream is ended).
 * @param {Reading} d
 */
const render = (d) => {
  if ("error" in d) {
    caption.textContent = ""
    shown.sig = ""
    body.replaceChildren(el("p", { class: "bad", id: "jobs-error", text: d.error }))
    return
  }
  if (
    d.kind !== "jobs" ||
    d.queue !== list.queue ||
    d.state !== list.state ||
    d.order !== list.order ||
    d.cursor !== cursor()
  )
    return
  list.next = d.page.next
  next.disabled = d.page.next === undefined
  prev.disabled = list.cursors.length < 2
  caption.textContent = `page ${list.cursors.length} · ${d.page.jobs.length} shown of ${d.page.total} ${d.state}`
  // the same jobs as the reading before: only their times move (a click on a row's link is
  // not lost to a reading that would replace it)
  const sig = JSON.stringify([d.queue, d.state, d.order, d.cursor, d.page.jobs])
  if (sig === shown.sig) {
    shown.atCells.forEach((c, i) => {
      const j = d.page.jobs[i]
      if (j !== undefined) c.textContent = atText(d, j)
    })
    shown.durCells.forEach((c, i) => {
      const j = d.page.jobs[i]
      if (j !== undefined) c.textContent = durationText(d, j)
    })
    return
  }
  shown.sig = sig
  build(d)
}

/**
 * The page's table (or that there are none) for reading `d`.
 * @param {JobsView} d
 */
const build = (d) => {
  shown.atCells = []
  shown.durCells = []
  const timed = TIMED.has(d.state)
  const head = [
    ["job"],
    ["name"],
    ["added"],
    ...(d.state === "waiting" ? [] : [[AT_TITLE[d.state], "num"]]),
    ["attempts", "num"],
    ...(timed ? [["duration", "num"]] : []),
    [d.state === "completed" ? "result" : "last error"],
    ["payload"],
  ]
  const rows = d.page.jobs.map((j) =>
    el(
      "tr",
      { "data-id": j.id },
      // in the order of `head`
      el("td", {}, jobLink(d.queue, j.id)),
      cell(j.name, "name"),
      cell(j.addedAt > 0 ? when(j.addedAt) : "–"),
      d.state === "waiting" ? null : atCell(d, j),
      cell(`${j.attempt} / ${j.maxAttempts}`, "num attempts"),
      timed ? durCell(d, j) : null,
      outcomeCell(d, j),
      payloadCell(j.payload),
    ),
  )
  body.replaceChildren(
    rows.length === 0
      ? el("p", {
          class: "muted",
          id: "jobs-none",
          text: `No ${d.state} jobs${list.cursors.length > 1 ? " on this page" : ""}.`,
        })
      : el(
          "table",
          { id: "jobs", "data-state": d.state },
          el("thead", {}, el("tr", {}, ...head.map(([t, c]) => el("th", { text: t, class: c ?? "" })))),
          el("tbody", {}, ...rows),
        ),
  )
}

/**
 * The list's section for the page of `queue`: the same nodes at every reading of the
 * queue; a new queue starts from its first page of waiting jobs, the same queue again (back
 * from a job's page) from the page it showed.
 * @param {string} queue
 */
export const jobsSection = (queue) => {
  if (list.queue !== queue) {
    list.queue = queue
    list.state = "waiting"
    list.order = "asc"
    list.cursors = [""]
    select.value = "waiting"
    order.value = "asc"
    body.replaceChildren()
    start()
  } else if (list.ctl === null) start()
  return box
}

/** End the list's stream (the page shows another view). */
export const stopJobs = () => {
  list.ctl?.abort()
  list.ctl = null
}
