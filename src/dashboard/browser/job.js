// @ts-check
/** The job page: its state, facts, lease, progress, values (with "show all") and timeline. */
import { cell, el, main, queueLink, status, table, visible, when } from "./dom.js"
import { flowSection } from "./flow.js"
import { api, bodyOf, postJob, token } from "./net.js"
import { controls, redisClock, state, tick } from "./state.js"

/** @import { JobShown, JobView, Shown } from "./job-readings.js" */
/** @import { StreamEvent } from "./types.js" */

/**
 * A value as text: a string as it is, anything else as pretty JSON, none as "–".
 * @param {unknown} v
 */
const jsonText = (v) => (v === undefined || v === null ? "–" : typeof v === "string" ? v : JSON.stringify(v, null, 2))

/**
 * Values read in full by "show all", by queue/id/field, with the length they had then.
 * @type {Map<string, { readonly length: number, readonly text: string }>}
 */
const fulls = new Map()

/**
 * The values shown of the job on the page, by field: the same node while the value does not
 * change, so a click on its "show all" is not lost to a reading that would replace the button.
 * @type {{ job: string, nodes: Map<string, { readonly sig: string, readonly node: HTMLElement }> }}
 */
const shownValues = { job: "", nodes: new Map() }

/**
 * {@link build} of a value, or the node built for it before when it has not changed.
 * @param {JobView} d
 * @param {"payload" | "result" | "error"} field
 * @param {Shown | undefined} v
 */
const value = (d, field, v) => {
  const job = `${d.queue}/${d.id}`
  if (shownValues.job !== job) shownValues.nodes = new Map()
  shownValues.job = job
  const sig = JSON.stringify([v, fulls.get(`${job}/${field}`)?.length])
  const known = shownValues.nodes.get(field)
  if (known?.sig === sig) return known.node
  const node = build(d, field, v)
  shownValues.nodes.set(field, { sig, node })
  return node
}

/**
 * A payload, result or error of the job of `d`, with a "show all" button when it is cut.
 * @param {JobView} d
 * @param {"payload" | "result" | "error"} field
 * @param {Shown | undefined} v
 */
const build = (d, field, v) => {
  if (!v) return el("pre", { id: `job-${field}`, text: "–" })
  const key = `${d.queue}/${d.id}/${field}`
  const kept = fulls.get(key)
  const pre = el("pre", { id: `job-${field}`, text: kept && kept.length === v.length ? kept.text : v.text })
  const cut = !v.hidden && v.length > (pre.textContent ?? "").length
  /** @param {MouseEvent} e */
  const showAll = async (e) => {
    const q = `queue=${encodeURIComponent(d.queue)}&id=${encodeURIComponent(d.id)}&field=${field}`
    const res = await api(`api/full?${q}`)
    const r = await bodyOf(res)
    if (res.ok && typeof r.text === "string") {
      fulls.set(key, { length: v.length, text: r.text })
      pre.textContent = visible(r.text)
      if (e.target instanceof Element) e.target.remove()
    } else status.textContent = visible(r.error)
  }
  const button = el("button", { id: `all-${field}`, text: `show all (${v.length} characters)`, onclick: showAll })
  return el("div", {}, pre, cut ? button : null)
}

/**
 * What the timeline says of each kind of event besides its kind.
 * @type {Readonly<Record<string, (e: StreamEvent) => string | undefined>>}
 */
const EVENT_DETAIL = {
  active: (e) => `token ${e.token} · ${e.workerId}`,
  progress: (e) => jsonText(e.progress),
  failed: (e) => `${e.reason} (attempt ${e.attempt})${e.willRetry ? ", will retry" : ", no retry"}`,
  "lease-lost": (e) => `attempt ${e.attempt}`,
  dead: (e) => e.reason,
  cancelled: (e) => `was ${e.was}`,
}

/**
 * The actions of the job page: which states each applies to, and what the confirmation asks.
 * @type {ReadonlyArray<{ readonly action: string, readonly id: string, readonly text: string, readonly states: ReadonlyArray<string>, readonly ask: (id: string) => string }>}
 */
const JOB_ACTIONS = [
  {
    action: "promote",
    id: "promote-job",
    text: "Promote job",
    states: ["delayed"],
    ask: (id) => `run delayed job ${id} now?`,
  },
  {
    action: "cancel",
    id: "cancel-job",
    text: "Cancel job",
    states: ["waiting", "delayed", "active"],
    ask: (id) => `cancel job ${id}?`,
  },
  {
    action: "retry",
    id: "retry-job",
    text: "Retry job",
    states: ["completed", "cancelled", "dead"],
    ask: (id) => `run job ${id} again, with fresh attempts?`,
  },
  {
    action: "purge",
    id: "delete-job",
    text: "Delete job",
    states: ["dead"],
    ask: (id) => `delete dead job ${id} and its data? This cannot be undone.`,
  },
]

/**
 * The action buttons of job `j` of `d` fitting its state (when actions are on and the page
 * has the token): each asks first, then says in the status line how it went.
 * @param {JobView} d
 * @param {JobShown | null} j
 */
const jobControls = (d, j) => {
  const can = state.actions && Boolean(token)
  controls(`job:${d.queue}:${d.id}:${j ? j.state : ""}:${state.actions}`, () =>
    !j || !can
      ? []
      : JOB_ACTIONS.filter((a) => a.states.includes(j.state)).map((a) =>
          el("button", {
            id: a.id,
            text: a.text,
            onclick: () => {
              if (confirm(a.ask(j.id))) void postJob(d.queue, a.action, j.id)
            },
          }),
        ),
  )
}

/**
 * The job's state, attempt, failures and lost leases as pills, and its facts.
 * @param {JobShown} j
 */
const facts = (j) => [
  el(
    "p",
    {},
    el("span", { class: `pill state-${j.state}`, id: "job-state", text: j.state }),
    " ",
    j.name === undefined ? null : el("span", { class: "pill", id: "job-name", text: `name ${j.name}` }),
    j.name === undefined ? null : " ",
    el("span", { class: "pill", id: "job-attempt", text: `attempt ${j.attempt} of ${j.maxAttempts}` }),
    " ",
    el("span", { class: "pill", id: "job-failures", text: `failures ${j.failures}` }),
    " ",
    el("span", { class: "pill", id: "job-lost", text: `lost leases ${j.lostLeases}` }),
    " ",
    el("span", { class: "pill", id: "job-priority", text: `priority ${j.priority ?? 0}` }),
  ),
  table(
    "job-facts",
    [["added"], ["due"], ["finished"], ["dedupe key"], ["own timeout", "num"]],
    [
      el(
        "tr",
        {},
        cell(when(j.addedAt)),
        cell(when(j.dueAt)),
        cell(when(j.finishedAt)),
        cell(j.dedupeKey),
        cell(j.timeoutMs === undefined ? "–" : `${j.timeoutMs} ms`, "num"),
      ),
    ],
  ),
]

/**
 * Each failed attempt's error (River UI's per-attempt list), and the job's log lines.
 * @param {JobShown} j
 */
const history = (j) => [
  el("h3", { text: `Errors per attempt (${j.errors?.length ?? 0}; the newest 10 are kept)` }),
  j.errors?.length
    ? table(
        "job-errors",
        [["attempt", "num"], ["when (Redis clock)"], ["reason"], ["error"], ["message"], ["fields"]],
        j.errors.map((e) =>
          el(
            "tr",
            { "data-attempt": String(e.attempt) },
            cell(e.attempt, "num"),
            cell(when(e.at)),
            cell(e.reason ?? "failed"),
            cell(e.tag ?? e.name ?? ""),
            cell(e.message ?? ""),
            cell(e.fields === undefined ? "" : JSON.stringify(e.fields)),
          ),
        ),
      )
    : el("p", { class: "muted", text: "No attempt of this job failed." }),
  el("h3", { text: `Log (${j.logs?.length ?? 0} lines; job.log keeps the newest 100)` }),
  j.logs?.length
    ? el("pre", { id: "job-logs", text: j.logs.join("\n") })
    : el("p", { class: "muted", text: "No log lines (the handler's job.log(line) writes them)." }),
]

/**
 * The job's timeline, from its events stream.
 * @param {JobView} d
 */
const timeline = (d) => [
  el("h3", {
    text: `Timeline (events stream: the ${d.limits.fromStart} entries from the job's start and the newest ${d.limits.newest})`,
  }),
  d.timelineGap
    ? el("p", { class: "muted", text: "Entries between the two reads were not read: the job's middle may be missing." })
    : null,
  table(
    "timeline",
    [["when (Redis clock)"], ["event"], ["detail"]],
    d.timeline.map((e) =>
      el(
        "tr",
        { "data-event": e.eventId, "data-kind": e.kind },
        cell(when(e.at)),
        cell(e.kind),
        cell(EVENT_DETAIL[e.kind] ? EVENT_DETAIL[e.kind]?.(e) : ""),
      ),
    ),
  ),
]

/**
 * Show the page of one job.
 * @param {JobView} d
 */
export const job = (d) => {
  state.actions = d.actions
  redisClock(d.now)
  const head = el("h2", {}, el("a", { href: "#/", text: "Queues" }), " / ", queueLink(d.queue), ` / job ${d.id}`)
  const j = d.job
  jobControls(d, j)
  if (!j) {
    state.rows = []
    const text = `Not found: no job ${d.id} in ${d.queue} (never added, or finished and no longer kept).`
    main.replaceChildren(head, el("p", { id: "job-missing", class: "bad", text }))
    return
  }
  const l = j.lease
  const lease = l
    ? el(
        "tr",
        { "data-id": j.id },
        cell(l.token, "num"),
        cell(l.workerId || "(not recorded)"),
        cell(when(l.deadline)),
        cell("", "num left"),
      )
    : null
  state.rows = l && lease ? [{ l, tr: lease }] : []
  const parts = [
    head,
    ...facts(j),
    flowSection(d),
    el("h3", { text: "Lease" }),
    lease
      ? table("lease", [["token", "num"], ["worker"], ["deadline (Redis clock)"], ["time left", "num"]], [lease])
      : el("p", { class: "muted", text: `No lease (the job is ${j.state}).` }),
    el("h3", { text: "Progress" }),
    el("pre", { id: "job-progress", text: jsonText(j.progress) }),
    el("h3", { text: "Last error" }),
    value(d, "error", j.error),
    j.error?.stack ? el("pre", { id: "job-stack", class: "stack", text: j.error.stack }) : null,
    el("h3", { text: "Payload" }),
    value(d, "payload", j.payload),
    el("h3", { text: "Result" }),
    value(d, "result", j.result),
    ...history(j),
    ...timeline(d),
  ]
  main.replaceChildren(...parts.filter((p) => p !== null))
  tick()
}
