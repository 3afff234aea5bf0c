// @ts-check
/** The queue page: its figures, leases by deadline, workers, feed, dead letters and delayed jobs. */
import { ago, cell, el, jobLink, main, table } from "./dom.js"
import { jobsSection } from "./jobs.js"
import { act, post, token } from "./net.js"
import { workerRow } from "./overview.js"
import { limitsSection, retentionSection, schedulesSection } from "./settings.js"
import { controls, redisClock, state, tick } from "./state.js"

/** @import { QueueView, StreamEvent } from "./types.js" */

/**
 * What the feed says of an event besides its kind.
 * @param {StreamEvent} e
 */
const feedDetail = (e) => {
  if (e.kind === "lease-lost") return `attempt ${e.attempt}`
  if (e.kind === "failed") return `${e.reason}${e.willRetry ? ", will retry" : ", no retry"}`
  if (e.kind === "dead") return e.reason
  if (e.kind === "cancelled") return `was ${e.was}`
  return ""
}

// the dead letters are rebuilt only when they change: a checked box, or a click on Retry or
// Purge, must survive the readings that arrive every second meanwhile
let deadKey = ""
/** @type {HTMLElement[]} */
let deadNodes = []

/**
 * The dead letters' section of `d`, rebuilt only when they change.
 * @param {QueueView} d
 */
const deadSection = (d) => {
  const key = JSON.stringify([d.queue, d.dead, state.actions, token])
  if (key !== deadKey) {
    deadKey = key
    deadNodes = buildDead(d)
  }
  return deadNodes
}

/**
 * The Retry and Purge buttons of the dead letters of `d`.
 * @param {QueueView} d
 */
const deadButtons = (d) => {
  const selected = () =>
    [...document.querySelectorAll("#dead input:checked")].flatMap((i) =>
      i instanceof HTMLInputElement ? [i.value] : [],
    )
  /** @param {"retry" | "purge"} action */
  const onSelected = (action) => () => {
    const ids = selected()
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
 * The dead letters' section of `d`: groups by reason and error, the buttons (when actions
 * are on and the page has the token), the first dead jobs.
 * @param {QueueView} d
 */
const buildDead = (d) => {
  const can = state.actions && Boolean(token)
  const jobs = d.dead.jobs.map((j) => {
    const { text, length } = j.payload
    return el(
      "tr",
      { "data-id": j.id },
      can ? el("td", {}, el("input", { type: "checkbox", "aria-label": `select ${j.id}`, value: j.id })) : null,
      el("td", {}, jobLink(d.queue, j.id)),
      cell(new Date(j.diedAt).toISOString()),
      cell(j.reason),
      cell(j.message),
      el(
        "td",
        {},
        el("pre", { text: text === null ? "" : text + (length > text.length ? ` … (${length} chars)` : "") }),
      ),
    )
  })
  const buttons = can
    ? deadButtons(d)
    : el("p", {
        class: "muted",
        text: "Read-only: start with --allow-actions and open the link it prints to retry or purge.",
      })
  const groups = d.dead.groups.map((g) => el("tr", {}, cell(g.reason), cell(g.message), cell(g.count, "num")))
  /** @type {Array<readonly [string, string?]>} */
  const head = [["job"], ["died"], ["reason"], ["error"], ["payload"]]
  return [
    el("h3", { text: `Dead letters (${d.dead.total}, first ${d.dead.shown} shown)` }),
    table("dead-groups", [["reason"], ["error"], ["jobs", "num"]], groups),
    buttons,
    table("dead", can ? [[""], ...head] : head, jobs),
  ]
}

/**
 * The queue's counts as pills.
 * @param {QueueView["stats"]} s
 */
const pills = (s) =>
  el(
    "p",
    {},
    s.paused ? el("span", { class: "pill bad", id: "paused", text: "paused" }) : null,
    ...[
      ["waiting", s.waiting],
      ["active", s.active],
      ["expired, not swept", s.expired],
      ["delayed", s.delayed],
      ["dead", s.dead],
      ["completed", s.counters.completed],
    ].map(([k, v]) => el("span", { class: "pill", id: `count-${String(k).split(",")[0]}`, text: `${k} ${v}` })),
  )

/**
 * The queue's groups (add's `group`): how many, and the busiest five (none without groups).
 * @param {QueueView["stats"]} s
 */
const groupsSection = (s) =>
  s.groups
    ? [
        el("h3", { text: `Groups (${s.groups}): the most jobs waiting` }),
        table(
          "groups",
          [["group"], ["waiting", "num"]],
          (s.busiestGroups ?? []).map((g) => el("tr", {}, cell(g.group), cell(g.waiting, "num"))),
        ),
      ]
    : []

/**
 * The workers, feed and delayed jobs of `d`.
 * @param {QueueView} d
 */
const lists = (d) => {
  const c = d.stats.counters
  return [
    el("h3", { text: `Workers (${d.workers.length})` }),
    table(
      "workers",
      [["worker"], ["host"], ["pid", "num"], ["state"], ["running", "num"], ["last seen", "num"], ["started"]],
      d.workers.map((w) => workerRow(w, d.leases.now)),
    ),
    el("h3", { text: "Feed: lease losses, failures, deaths, cancels (newest first)" }),
    el("p", {
      class: "muted",
      text: `Self-fences ${c.selfFenced} · refused late acknowledgements ${c.refused} · lost leases ${c.lostLeases} (since the queue was created)`,
    }),
    table(
      "feed",
      [["when"], ["event"], ["job"], ["detail"]],
      d.feed.map((e) =>
        el(
          "tr",
          { "data-event": e.eventId },
          cell(new Date(e.at).toISOString()),
          cell(e.kind),
          cell(e.jobId),
          cell(feedDetail(e)),
        ),
      ),
    ),
    ...deadSection(d),
    ...groupsSection(d.stats),
    schedulesSection(d),
    limitsSection(d),
    retentionSection(d),
    el("h3", { text: `Delayed (${d.delayed.total})` }),
    table(
      "delayed",
      [["job"], ["due in", "num"]],
      d.delayed.jobs.map((j) =>
        el("tr", { "data-id": j.id }, cell(j.id), cell(ago(Math.max(0, j.dueAt - d.delayed.now)), "num")),
      ),
    ),
  ]
}

/**
 * Show the page of one queue.
 * @param {QueueView} d
 */
export const queue = (d) => {
  state.actions = d.actions
  redisClock(d.leases.now)
  const s = d.stats
  const pause = s.paused ? "resume" : "pause"
  controls(`queue:${d.queue}:${s.paused}:${state.actions}`, () => [
    state.actions && token
      ? el("button", {
          id: pause,
          text: s.paused ? "Resume queue" : "Pause queue",
          onclick: () => post(d.queue, pause, {}),
        })
      : null,
  ])
  state.rows = d.leases.leases.map((l) => ({
    l,
    tr: el(
      "tr",
      { "data-id": l.id },
      el("td", {}, jobLink(d.queue, l.id)),
      cell(`${l.attempt} of ${l.maxAttempts ?? "?"}`, "num"),
      cell(l.token, "num"),
      cell("", "num left"),
    ),
  }))
  const shown = state.rows.length
  main.replaceChildren(
    el("h2", {}, el("a", { href: "#/", text: "Queues" }), ` / ${d.queue}`),
    pills(s),
    el("h3", {
      text: `Leases by deadline (${d.leases.total} active${d.leases.total > shown ? `, first ${shown} shown` : ""})`,
    }),
    table(
      "leases",
      [["job"], ["attempt", "num"], ["token", "num"], ["time left (Redis clock)", "num"]],
      state.rows.map((r) => r.tr),
    ),
    jobsSection(d.queue),
    ...lists(d),
  )
  tick()
}
