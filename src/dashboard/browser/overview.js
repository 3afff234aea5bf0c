// @ts-check
/** The overview (every queue under the prefix) and the workers page (every live worker). */
import { ago, cell, el, main, queueLink, spark, table } from "./dom.js"

/** @import { Overview, Stats, Workers, WorkerInfo } from "./types.js" */

/**
 * One queue's row of the overview.
 * @param {Stats} q
 * @param {Overview["rates"]} rates
 */
const queueRow = (q, rates) =>
  el(
    "tr",
    { "data-queue": q.queue },
    el("td", {}, queueLink(q.queue)),
    cell(q.paused ? "paused" : "", `paused${q.paused ? " bad" : ""}`),
    cell(q.waiting, "num waiting"),
    cell(q.active, "num active"),
    cell(q.expired, `num expired${q.expired > 0 ? " bad" : ""}`),
    cell(q.delayed, "num delayed"),
    cell(q.dead, "num dead"),
    cell(q.workers, "num workers"),
    cell(q.waiting > 0 ? ago(q.oldestWaitingAgeMs) : "–", "num"),
    cell(q.counters.completed, "num completed"),
    el("td", {}, spark(rates[q.queue]?.points ?? [])),
  )

/** @type {ReadonlyArray<readonly [string, string?]>} */
const QUEUE_COLUMNS = [
  ["queue"],
  ["state"],
  ["waiting", "num"],
  ["active", "num"],
  ["expired, not swept", "num"],
  ["delayed", "num"],
  ["dead", "num"],
  ["workers", "num"],
  ["oldest waiting", "num"],
  ["completed", "num"],
  ["completed (green) / failed (red) per s"],
]

/**
 * Show the overview.
 * @param {Overview} d
 */
export const overview = (d) => {
  main.replaceChildren(
    el("h2", { text: `Queues under ${d.prefix}` }),
    d.queues.length === 0
      ? el("p", { class: "muted", text: "No queues yet." })
      : table(
          "queues",
          QUEUE_COLUMNS,
          d.queues.map((q) => queueRow(q, d.rates)),
        ),
    ...(d.unreadable ?? []).map((u) =>
      el("p", { class: "bad unreadable", text: `${u.queue}: cannot be read: ${u.reason}` }),
    ),
  )
}

/**
 * One worker's row of a workers table (`queue`: its queue, shown in a first column when given).
 * @param {WorkerInfo} w
 * @param {number} now the Redis clock when read
 * @param {string} [queue]
 */
export const workerRow = (w, now, queue) =>
  el(
    "tr",
    queue === undefined ? { "data-worker": w.id } : { "data-worker": w.id, "data-queue": queue },
    queue === undefined ? null : el("td", {}, queueLink(queue)),
    cell(w.id),
    cell(w.host),
    cell(w.pid, "num"),
    cell(w.state),
    cell(`${w.running} of ${w.concurrency}`, "num"),
    cell(`${ago(Math.max(0, now - w.lastSeenAt))} ago`, "num"),
    cell(new Date(w.startedAt).toISOString()),
  )

/**
 * Show every queue's live workers.
 * @param {Workers} d
 */
export const workersPage = (d) => {
  const all = d.queues.flatMap((q) => q.workers.map((w) => workerRow(w, q.now, q.queue)))
  main.replaceChildren(
    el("h2", {}, el("a", { href: "#/", text: "Queues" }), ` / workers (${all.length})`),
    all.length === 0
      ? el("p", { class: "muted", text: `No live worker under ${d.prefix}.` })
      : table(
          "all-workers",
          [
            ["queue"],
            ["worker"],
            ["host"],
            ["pid", "num"],
            ["state"],
            ["running", "num"],
            ["last seen", "num"],
            ["started"],
          ],
          all,
        ),
  )
}
