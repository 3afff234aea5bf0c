// @ts-check
/**
 * The queue page: its figures, then one section per concern (leases by deadline, jobs by
 * state, dead letters, delayed, clean, workers, feed, groups, schedules, limits,
 * retention), each reached from the section bar at the top with its count.
 */
import { cleanSection, deadSection, delayedSection } from "./bulk.js"
import { cell, el, jobLink, main, table, when } from "./dom.js"
import { jobsSection } from "./jobs.js"
import { post, token } from "./net.js"
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
    ? el(
        "section",
        { id: "groups-section" },
        el("h3", { text: `Groups (${s.groups}): the most jobs waiting` }),
        table(
          "groups",
          [["group"], ["waiting", "num"]],
          (s.busiestGroups ?? []).map((g) => el("tr", {}, cell(g.group), cell(g.waiting, "num"))),
        ),
      )
    : null

/**
 * The workers and feed of `d`.
 * @param {QueueView} d
 */
const watchSections = (d) => {
  const c = d.stats.counters
  return [
    el(
      "section",
      { id: "workers-section" },
      el("h3", { text: `Workers (${d.workers.length})` }),
      table(
        "workers",
        [["worker"], ["host"], ["pid", "num"], ["state"], ["running", "num"], ["last seen", "num"], ["started"]],
        d.workers.map((w) => workerRow(w, d.leases.now)),
      ),
    ),
    el(
      "section",
      { id: "feed-section" },
      el("h3", { text: "Feed: lease losses, failures, deaths, cancels (newest first)" }),
      el("p", {
        class: "muted",
        text: `Self-fences ${c.selfFenced} · refused late acknowledgements ${c.refused} · lost leases ${c.lostLeases} (since the queue was created)`,
      }),
      table(
        "feed",
        [["when"], ["event"], ["job"], ["detail"]],
        d.feed.map((e) =>
          el("tr", { "data-event": e.eventId }, cell(when(e.at)), cell(e.kind), cell(e.jobId), cell(feedDetail(e))),
        ),
      ),
    ),
  ]
}

/** Scroll to the section a bar link names (the address's hash stays the view's route). */
const toSection = (/** @type {Event} */ e) => {
  e.preventDefault()
  const id = e.currentTarget instanceof HTMLElement ? e.currentTarget.dataset.section : undefined
  if (id !== undefined) document.getElementById(id)?.scrollIntoView({ block: "start" })
}

// the bar is rebuilt only when its links change: a click must not be lost to a reading
// that replaces the link between mouse down and up
let barKey = ""
/** @type {HTMLElement | null} */
let barNode = null

/**
 * The section bar: a link per section present, with its count, that scrolls to it.
 * @param {ReadonlyArray<HTMLElement | null>} sections
 * @param {QueueView} d
 */
const sectionBar = (sections, d) => {
  /** @type {Readonly<Record<string, string>>} */
  const names = {
    "leases-section": `Active ${d.leases.total}`,
    "jobs-section": "Jobs by state",
    "dead-section": `Dead ${d.dead.total}`,
    "delayed-section": `Delayed ${d.delayed.total}`,
    "clean-section": "Clean",
    "workers-section": `Workers ${d.workers.length}`,
    "feed-section": "Feed",
    "groups-section": `Groups ${d.stats.groups ?? 0}`,
    "schedules-section": `Schedules ${d.schedules.total}`,
    "limits-section": "Limits",
    "retention-section": "Retention",
  }
  const links = sections.flatMap((s) =>
    s === null || s.hidden || names[s.id] === undefined ? [] : [[s.id, names[s.id] ?? ""]],
  )
  const key = JSON.stringify([location.hash, links])
  if (key === barKey && barNode !== null) return barNode
  barKey = key
  barNode = el(
    "nav",
    { id: "sections", "aria-label": "sections of this queue" },
    ...links.map(([id, text]) => el("a", { href: location.hash, "data-section": id, text, onclick: toSection })),
  )
  return barNode
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
  const leases = el(
    "section",
    { id: "leases-section" },
    el("h3", {
      text: `Leases by deadline (${d.leases.total} active${d.leases.total > shown ? `, first ${shown} shown` : ""})`,
    }),
    table(
      "leases",
      [["job"], ["attempt", "num"], ["token", "num"], ["time left (Redis clock)", "num"]],
      state.rows.map((r) => r.tr),
    ),
  )
  const sections = [
    leases,
    jobsSection(d.queue),
    deadSection(d),
    delayedSection(d),
    cleanSection(d.queue),
    ...watchSections(d),
    groupsSection(d.stats),
    schedulesSection(d),
    limitsSection(d),
    retentionSection(d),
  ]
  main.replaceChildren(
    el("h2", {}, el("a", { href: "#/", text: "Queues" }), ` / ${d.queue}`),
    pills(s),
    sectionBar(sections, d),
    ...sections.flatMap((x) => (x === null ? [] : [x])),
  )
  tick()
}
