// @ts-check
/** The queue page's settings: its schedules with their next run (Redis clock). */
import { ago, cell, el, table } from "./dom.js"

/** @import { QueueView, ScheduleRow } from "./types.js" */

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
