// @ts-check
/**
 * The queue page's lists that take bulk actions: the dead letters (grouped by error, retry or
 * purge selected or all), the delayed jobs (promote selected) and clean (delete finished jobs
 * of a state older than an age). Each asks before it acts; the server checks the token and
 * origin again. Checked boxes and typed values survive the readings that arrive meanwhile.
 */
import { ago, cell, el, jobLink, table, when } from "./dom.js"
import { act, post, token } from "./net.js"
import { state } from "./state.js"

/** @import { QueueView } from "./types.js" */

/** True when the page may act: the server allows actions and the page holds the token. */
const canAct = () => state.actions && Boolean(token)

/**
 * The values of the checked boxes in table `tableId`.
 * @param {string} tableId
 */
const checked = (tableId) =>
  [...document.querySelectorAll(`#${tableId} input:checked`)].flatMap((i) =>
    i instanceof HTMLInputElement ? [i.value] : [],
  )

/**
 * A row's selection box, checked when `id` was checked before the rebuild.
 * @param {string} id
 * @param {ReadonlySet<string>} was
 */
const box = (id, was) => {
  const b = el("input", { type: "checkbox", "aria-label": `select ${id}`, value: id })
  b.checked = was.has(id)
  return el("td", {}, b)
}

// the dead letters are rebuilt only when they change: a checked box, or a click on Retry or
// Purge, must survive the readings that arrive every second meanwhile
let deadKey = ""
/** @type {HTMLElement | null} */
let deadNode = null

/**
 * The dead letters' section of `d`, rebuilt only when they change.
 * @param {QueueView} d
 */
export const deadSection = (d) => {
  const key = JSON.stringify([d.queue, d.dead, state.actions, token])
  if (key !== deadKey || deadNode === null) {
    deadKey = key
    deadNode = buildDead(d)
  }
  return deadNode
}

/**
 * The Retry and Purge buttons of the dead letters of `d`.
 * @param {QueueView} d
 */
const deadButtons = (d) => {
  /** @param {"retry" | "purge"} action */
  const onSelected = (action) => () => {
    const ids = checked("dead")
    if (ids.length) void act(d.queue, action, { ids }, ids.length)
  }
  const total = d.dead.total
  return el(
    "p",
    {},
    el("button", { id: "retry-selected", text: "Retry selected", onclick: onSelected("retry") }),
    el("button", { id: "purge-selected", text: "Purge selected", onclick: onSelected("purge") }),
    el("button", {
      id: "retry-all",
      text: `Retry all (${total})`,
      onclick: () => act(d.queue, "retry", { all: total }, total),
    }),
    el("button", {
      id: "purge-all",
      text: `Purge all (${total})`,
      onclick: () => act(d.queue, "purge", { all: total }, total),
    }),
  )
}

/**
 * A group's row: its reason, masked error, count and first ids (links), and with actions a
 * button that selects the group's listed jobs.
 * @param {QueueView} d
 * @param {QueueView["dead"]["groups"][number]} g
 */
const groupRow = (d, g) =>
  el(
    "tr",
    {},
    cell(g.reason),
    cell(g.message),
    cell(g.count, "num"),
    el("td", { class: "ids" }, ...g.ids.flatMap((id, i) => [i > 0 ? " " : "", jobLink(d.queue, id)])),
    canAct()
      ? el(
          "td",
          {},
          el("button", {
            class: "select-group",
            text: "Select",
            onclick: () => {
              for (const i of document.querySelectorAll("#dead input"))
                if (i instanceof HTMLInputElement) i.checked = g.ids.includes(i.value) || i.checked
            },
          }),
        )
      : null,
  )

/**
 * The dead letters' section of `d`: groups by reason and masked error, the buttons (when
 * actions are on and the page has the token), the first dead jobs.
 * @param {QueueView} d
 */
const buildDead = (d) => {
  const can = canAct()
  const none = new Set()
  const jobs = d.dead.jobs.map((j) => {
    const { text, length } = j.payload
    return el(
      "tr",
      { "data-id": j.id },
      can ? box(j.id, none) : null,
      el("td", {}, jobLink(d.queue, j.id)),
      cell(when(j.diedAt)),
      cell(j.reason),
      cell(j.message),
      el(
        "td",
        {},
        el("pre", { text: text === null ? "" : text + (length > text.length ? ` … (${length} chars)` : "") }),
      ),
    )
  })
  /** @type {Array<readonly [string, string?]>} */
  const head = [["job"], ["died"], ["reason"], ["error"], ["payload"]]
  /** @type {Array<readonly [string, string?]>} */
  const groupHead = [["reason"], ["error (ids, numbers, addresses masked)"], ["jobs", "num"], ["first jobs"]]
  return el(
    "section",
    { id: "dead-section" },
    el("h3", { text: `Dead letters (${d.dead.total}, first ${d.dead.shown} shown)` }),
    table(
      "dead-groups",
      can ? [...groupHead, [""]] : groupHead,
      d.dead.groups.map((g) => groupRow(d, g)),
    ),
    can ? deadButtons(d) : null,
    table("dead", can ? [[""], ...head] : head, jobs),
  )
}

// the delayed list is rebuilt only when its jobs change (its "due in" cells are updated in
// place): a click on a box must not be lost to a reading that replaces it mid-click
let delayedKey = ""
/** @type {HTMLElement | null} */
let delayedNode = null
/** @type {Array<{ readonly dueAt: number, readonly td: HTMLTableCellElement }>} */
let dueCells = []

/**
 * The delayed jobs of `d`, each with its time left; with actions, boxes to pick and a
 * Promote selected button (boxes checked before a change of the list stay checked after it).
 * @param {QueueView} d
 */
export const delayedSection = (d) => {
  const key = JSON.stringify([d.queue, d.delayed.total, d.delayed.jobs, state.actions, token])
  if (key !== delayedKey || delayedNode === null) {
    delayedKey = key
    delayedNode = buildDelayed(d)
  }
  for (const { dueAt, td } of dueCells) td.textContent = ago(Math.max(0, dueAt - d.delayed.now))
  return delayedNode
}

/**
 * Build the delayed list of `d` (see {@link delayedSection}).
 * @param {QueueView} d
 */
const buildDelayed = (d) => {
  const can = canAct()
  const was = new Set(checked("delayed"))
  const promote = () => {
    const ids = checked("delayed")
    if (ids.length === 0 || !confirm(`promote ${ids.length} delayed job${ids.length === 1 ? "" : "s"} of ${d.queue}?`))
      return
    void post(d.queue, "promote", { ids })
  }
  dueCells = []
  const rows = d.delayed.jobs.map((j) => {
    const td = cell("", "num")
    dueCells.push({ dueAt: j.dueAt, td })
    return el("tr", { "data-id": j.id }, can ? box(j.id, was) : null, cell(j.id), td)
  })
  return el(
    "section",
    { id: "delayed-section" },
    el("h3", { text: `Delayed (${d.delayed.total})` }),
    can ? el("p", {}, el("button", { id: "promote-selected", text: "Promote selected", onclick: promote })) : null,
    table("delayed", can ? [[""], ["job"], ["due in", "num"]] : [["job"], ["due in", "num"]], rows),
  )
}

// the clean form is made once per queue (and actions, token): what is typed in it must survive readings
let cleanKey = ""
/** @type {HTMLElement | null} */
let cleanNode = null

/**
 * Clean: delete the completed, cancelled or dead jobs of `queue` that finished at least the
 * given minutes ago, after a confirm. Nothing without actions (the page's notice says how to turn them on).
 * @param {string} queue
 */
export const cleanSection = (queue) => {
  const key = JSON.stringify([queue, state.actions, token])
  if (key === cleanKey && cleanNode !== null) return cleanNode
  cleanKey = key
  const pick = el("select", { id: "clean-state", "aria-label": "clean which finished jobs" })
  for (const s of ["completed", "cancelled", "dead"]) pick.append(el("option", { value: s, text: s }))
  const age = el("input", { id: "clean-minutes", type: "number", min: "0", value: "60", "aria-label": "minutes" })
  const run = () => {
    const minutes = Math.max(0, Math.floor(Number(age.value) || 0))
    if (!confirm(`delete every ${pick.value} job of ${queue} finished over ${minutes} min ago?`)) return
    void post(queue, "clean", { state: pick.value, olderThanMs: minutes * 60_000 })
  }
  cleanNode = canAct()
    ? el(
        "section",
        { id: "clean-section" },
        el("h3", { text: "Clean finished jobs" }),
        el(
          "p",
          {},
          "Delete every ",
          pick,
          " job finished over ",
          age,
          " min ago ",
          el("button", { id: "clean", text: "Clean", onclick: run }),
        ),
      )
    : el("section", { id: "clean-section", hidden: "" })
  return cleanNode
}
