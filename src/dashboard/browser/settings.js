// @ts-check
/** The queue page's settings: its schedules with their next run (Redis clock). */
import { ago, cell, el, table } from "./dom.js"

/** @import { QueueView, RetentionBounds, ScheduleRow } from "./types.js" */

/**
 * When a schedule runs: "every 5.0 s" or "cron 0 * * * * (Europe/Paris)".
 * @param {ScheduleRow} s
 */
const timing = (s) => {
  if (s.notLoaded) return `(not loaded: the schedule is ${s.payload.length} bytes)`
  return s.every !== undefined ? `every ${ago(s.every)}` : `cron ${s.cron} (${s.tz})`
}

/**
 * A schedule's payload: its start, and its length when cut.
 * @param {ScheduleRow} s
 */
const payloadText = (s) => {
  const p = s.payload
  if (s.notLoaded) return "–"
  if (p.text === null) return p.length > 0 ? `(hidden: ${p.length} bytes)` : "–"
  return p.text + (p.length > p.text.length ? ` … (${p.length} bytes)` : "")
}

/**
 * The schedules of `d`: each one's timing, next run (Redis clock) and how long until it.
 * @param {QueueView} d
 */
export const schedulesSection = (d) => {
  const s = d.schedules
  const shown = s.rows.length
  return el(
    "section",
    { id: "schedules-section" },
    el("h3", { text: `Schedules (${s.total}${s.total > shown ? `, first ${shown} by next run shown` : ""})` }),
    s.total === 0
      ? el("p", { class: "muted", id: "no-schedules", text: "No schedules." })
      : table(
          "schedules",
          [["schedule"], ["when"], ["next run (Redis clock)"], ["in", "num"], ["attempts", "num"], ["payload"]],
          s.rows.map((r) =>
            el(
              "tr",
              { "data-schedule": r.name },
              cell(r.name),
              cell(timing(r)),
              cell(new Date(r.nextRunAt).toISOString()),
              cell(r.nextRunAt > s.now ? ago(r.nextRunAt - s.now) : "due", "num next-in"),
              cell(r.maxAttempts, "num"),
              el("td", {}, el("pre", { text: payloadText(r) })),
            ),
          ),
        ),
  )
}

/**
 * A rate limit as text: "100 per 1.0 s".
 * @param {{ readonly max: number, readonly perMs: number } | null} r
 */
const rateText = (r) => (r === null ? "none" : `${r.max} per ${ago(r.perMs)}`)

/**
 * A group's limits as text: "2 active at most · 10 per 1.0 s", or "none".
 * @param {QueueView["groupDefaults"]} g
 */
const groupText = (g) => {
  if (g === null) return "none"
  const parts = [
    g.concurrency === undefined ? null : `${g.concurrency} active at most`,
    g.max === undefined || g.perMs === undefined ? null : `${g.max} per ${ago(g.perMs)}`,
  ].filter((p) => p !== null)
  return parts.length === 0 ? "none" : parts.join(" · ")
}

/**
 * The flow limits of `d` (rate limit, concurrency cap, a handler's hold) and how often each
 * held the queue back, as the queue's stats give them.
 * @param {QueueView} d
 */
export const limitsSection = (d) => {
  const s = d.stats
  const c = s.counters
  const l = s.limits
  /** @type {Array<readonly [string, string, string]>} */
  const rows = [
    ["rate", "rate limit (all workers)", rateText(l.rateLimit)],
    [
      "concurrency",
      "concurrency cap (all workers)",
      l.concurrency === null ? "none" : `${l.concurrency} active at most`,
    ],
    ["held", "held by a handler's RateLimited", l.heldMs > 0 ? `for ${ago(l.heldMs)} more` : "no"],
    [
      "limited",
      "reserves held back (since the queue was created)",
      `by the rate limit ${c.limitedRate} · by the cap ${c.limitedConcurrency} · by RateLimited ${c.limitedHeld}`,
    ],
    ["handler", "jobs snoozed · rate-limited by their handler", `${c.snoozed} · ${c.rateLimited}`],
    ["groups", "each group's default (setGroupLimits)", groupText(d.groupDefaults)],
  ]
  return el(
    "section",
    { id: "limits-section" },
    el("h3", { text: "Flow limits" }),
    table(
      "limits",
      [["limit"], ["setting"]],
      rows.map(([k, title, v]) => el("tr", { "data-limit": k }, cell(title), cell(v))),
    ),
  )
}

/**
 * One kind's retention as text: "the newest 1000, for 1.0 h", "unbounded".
 * @param {RetentionBounds} b
 */
const keptText = (b) => {
  if (b.count === undefined && b.ageMs === undefined) return "kept until retried or purged (no bound)"
  const count = b.count === undefined ? "all" : b.count === 0 ? "none" : `the newest ${b.count}`
  return b.ageMs === undefined || b.count === 0 ? count : `${count}, for ${ago(b.ageMs)} after they finish`
}

/**
 * The retention policy of `d` (`setRetention`): how many finished jobs of each kind are
 * kept, and how long; and how many completed jobs are kept now.
 * @param {QueueView} d
 */
export const retentionSection = (d) => {
  const r = d.retention
  /** @type {Array<readonly [string, RetentionBounds]>} */
  const kinds = [
    ["completed", r.completed],
    ["cancelled", r.cancelled],
    ["dead", r.dead],
  ]
  return el(
    "section",
    { id: "retention-section" },
    el("h3", { text: `Retention (completed jobs kept now: ${d.stats.retained})` }),
    table(
      "retention",
      [["finished jobs"], ["kept"]],
      kinds.map(([k, b]) => el("tr", { "data-kind": k }, cell(k), cell(keptText(b)))),
    ),
  )
}
