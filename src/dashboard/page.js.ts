/**
 * The dashboard's browser script (plain JavaScript, served as /app.js). Every value from
 * Redis is put on the page with `textContent`, never as HTML, so a payload such as
 * `<img src=x onerror=…>` shows as text and runs nothing, and bidi controls (U+202E…) are
 * shown as their code point, so `"\u202Eevil"` cannot pass for "live". Readings stream
 * over `fetch` (not EventSource), so the token goes in a header when reads need it.
 */
export const SCRIPT = String.raw`
"use strict";
// bidi embeddings, overrides, isolates and marks: shown, never applied
const visible = (s) => String(s).replace(/[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g, (c) => "\u27E8U+" + c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0") + "\u27E9");
const $ = (tag, attrs, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") e.textContent = visible(v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, String(v));
  }
  for (const kid of kids) if (kid !== null && kid !== undefined) e.append(kid);
  return e;
};
const main = document.querySelector("main");
const status = document.getElementById("status");
const live = document.getElementById("live");
const token = (() => {
  const m = /^#token=([A-Za-z0-9_-]+)/.exec(location.hash);
  if (m) { sessionStorage.setItem("leaseq-token", m[1]); history.replaceState(null, "", location.pathname + "#/"); }
  return sessionStorage.getItem("leaseq-token");
})();
const api = (path, init) => fetch(path, { ...(init || {}), headers: { ...(token ? { "x-leaseq-token": token } : {}), ...((init && init.headers) || {}) } });
let source = null, offset = 0, rows = [], actions = false;
const ago = (ms) => ms < 1000 ? Math.round(ms) + " ms" : ms < 60000 ? (ms / 1000).toFixed(1) + " s" : ms < 3600000 ? Math.round(ms / 60000) + " min" : (ms / 3600000).toFixed(1) + " h";
const table = (id, head, body) => $("table", { id }, $("thead", {}, $("tr", {}, ...head.map(([t, c]) => $("th", { text: t, class: c || "" })))), $("tbody", {}, ...body));
const cell = (v, cls) => $("td", { text: v === null || v === undefined ? "–" : v, class: cls || "" });
const spark = (points) => {
  const ns = "http://www.w3.org/2000/svg", w = 120, h = 24, svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "spark"); svg.setAttribute("width", w); svg.setAttribute("height", h);
  svg.setAttribute("role", "img"); svg.setAttribute("aria-label", "completed per second, last hour");
  const max = Math.max(1, ...points.map((p) => p[1] + p[2]));
  const line = (i, color) => {
    if (points.length < 2) return;
    const pl = document.createElementNS(ns, "polyline");
    pl.setAttribute("fill", "none"); pl.setAttribute("stroke", color); pl.setAttribute("stroke-width", "1.5");
    pl.setAttribute("points", points.map((p, j) => (j / (points.length - 1)) * w + "," + (h - (p[i] / max) * (h - 2) - 1)).join(" "));
    svg.append(pl);
  };
  line(1, "var(--ok)"); line(2, "var(--bad)");
  return svg;
};

function overview(d) {
  const body = d.queues.map((q) => $("tr", { "data-queue": q.queue },
    $("td", {}, $("a", { href: "#/queue/" + encodeURIComponent(q.queue), text: q.queue })),
    cell(q.paused ? "paused" : "", "paused" + (q.paused ? " bad" : "")), cell(q.waiting, "num waiting"), cell(q.active, "num active"), cell(q.expired, "num expired" + (q.expired > 0 ? " bad" : "")),
    cell(q.delayed, "num delayed"), cell(q.dead, "num dead"), cell(q.workers, "num workers"), cell(q.waiting > 0 ? ago(q.oldestWaitingAgeMs) : "–", "num"),
    cell(q.counters.completed, "num completed"), $("td", {}, spark((d.rates[q.queue] || { points: [] }).points))));
  main.replaceChildren($("h2", { text: "Queues under " + d.prefix }),
    d.queues.length === 0 ? $("p", { class: "muted", text: "No queues yet." }) :
    table("queues", [["queue"], ["state"], ["waiting", "num"], ["active", "num"], ["expired, not swept", "num"], ["delayed", "num"], ["dead", "num"], ["workers", "num"], ["oldest waiting", "num"], ["completed", "num"], ["completed / failed per s"]], body),
    ...(d.unreadable || []).map((u) => $("p", { class: "bad unreadable", text: u.queue + ": cannot be read: " + u.reason })));
}

async function post(queue, action, target) {
  const res = await api("api/action", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ queue, action, ...target }) });
  const r = await res.json();
  status.textContent = res.ok ? action + ": " + r.count + " done" : "refused: " + r.error;
}
async function act(queue, action, target, count) {
  if (!confirm(action + " " + count + " dead job" + (count === 1 ? "" : "s") + " of " + queue + "?")) return;
  await post(queue, action, target);
}
// action buttons live outside main, rebuilt only when what they act on changes: a click
// must not be lost to a reading that replaces the button between mouse down and up
const controlsEl = document.getElementById("controls");
let controlsKey = "";
const controls = (key, build) => { if (key !== controlsKey) { controlsKey = key; controlsEl.replaceChildren(...build().filter(Boolean)); } };
const jobLink = (queue, id) => $("a", { href: "#/job/" + encodeURIComponent(queue) + "/" + encodeURIComponent(id), text: id });

// the dead letters are rebuilt only when they change: a checked box, or a click on Retry or
// Purge, must survive the readings that arrive every second meanwhile
let deadKey = "", deadNodes = [];
function deadSection(d) {
  const key = JSON.stringify([d.queue, d.dead, actions, token]);
  if (key !== deadKey) { deadKey = key; deadNodes = buildDead(d); }
  return deadNodes;
}
function buildDead(d) {
  const can = actions && token;
  const jobs = d.dead.jobs.map((j) => $("tr", { "data-id": j.id },
    can ? $("td", {}, $("input", { type: "checkbox", "aria-label": "select " + j.id, value: j.id })) : null,
    $("td", {}, jobLink(d.queue, j.id)), cell(new Date(j.diedAt).toISOString()), cell(j.reason), cell(j.message),
    $("td", {}, $("pre", { text: j.payload.text === null ? "" : j.payload.text + (j.payload.length > j.payload.text.length ? " … (" + j.payload.length + " chars)" : "") }))));
  const selected = () => [...document.querySelectorAll("#dead input:checked")].map((i) => i.value);
  const buttons = can ? $("p", {},
    $("button", { id: "retry-selected", text: "Retry selected", onclick: () => { const ids = selected(); if (ids.length) act(d.queue, "retry", { ids }, ids.length); } }),
    $("button", { id: "purge-selected", text: "Purge selected", onclick: () => { const ids = selected(); if (ids.length) act(d.queue, "purge", { ids }, ids.length); } }),
    $("button", { id: "retry-all", text: "Retry all (" + d.dead.total + ")", onclick: () => act(d.queue, "retry", { all: d.dead.total }, d.dead.total) }),
    $("button", { id: "purge-all", text: "Purge all (" + d.dead.total + ")", onclick: () => act(d.queue, "purge", { all: d.dead.total }, d.dead.total) })) :
    $("p", { class: "muted", text: "Read-only: start with --allow-actions and open the link it prints to retry or purge." });
  return [$("h3", { text: "Dead letters (" + d.dead.total + ", first " + d.dead.shown + " shown)" }),
    table("dead-groups", [["reason"], ["error"], ["jobs", "num"]], d.dead.groups.map((g) => $("tr", {}, cell(g.reason), cell(g.message), cell(g.count, "num")))),
    buttons, table("dead", [...(can ? [[""]] : []), ["job"], ["died"], ["reason"], ["error"], ["payload"]], jobs)];
}

function queue(d) {
  if (d.error) { main.replaceChildren($("p", { class: "bad", text: d.error })); return; }
  actions = d.actions;
  offset = d.leases.now - Date.now();
  const s = d.stats;
  controls("queue:" + d.queue + ":" + s.paused + ":" + actions, () => [actions && token ? $("button", { id: s.paused ? "resume" : "pause", text: s.paused ? "Resume queue" : "Pause queue", onclick: () => post(d.queue, s.paused ? "resume" : "pause", {}) }) : null]);
  rows = d.leases.leases.map((l) => ({ l, tr: $("tr", { "data-id": l.id }, $("td", {}, jobLink(d.queue, l.id)), cell(l.attempt + " of " + (l.maxAttempts ?? "?"), "num"), cell(l.token, "num"), cell("", "num left")) }));
  main.replaceChildren($("h2", {}, $("a", { href: "#/", text: "Queues" }), " / " + d.queue),
    $("p", {}, s.paused ? $("span", { class: "pill bad", id: "paused", text: "paused" }) : null,
      ...[["waiting", s.waiting], ["active", s.active], ["expired, not swept", s.expired], ["delayed", s.delayed], ["dead", s.dead], ["completed", s.counters.completed]].map(([k, v]) => $("span", { class: "pill", id: "count-" + k.split(",")[0], text: k + " " + v }))),
    $("h3", { text: "Leases by deadline (" + d.leases.total + " active" + (d.leases.total > rows.length ? ", first " + rows.length + " shown" : "") + ")" }),
    table("leases", [["job"], ["attempt", "num"], ["token", "num"], ["time left (Redis clock)", "num"]], rows.map((r) => r.tr)),
    $("h3", { text: "Workers (" + d.workers.length + ")" }),
    table("workers", [["worker"], ["host"], ["pid", "num"], ["state"], ["running", "num"], ["last seen", "num"], ["started"]], d.workers.map((w) => $("tr", { "data-worker": w.id },
      cell(w.id), cell(w.host), cell(w.pid, "num"), cell(w.state), cell(w.running + " of " + w.concurrency, "num"),
      cell(ago(Math.max(0, d.leases.now - w.lastSeenAt)) + " ago", "num"), cell(new Date(w.startedAt).toISOString())))),
    $("h3", { text: "Feed: lease losses, failures, deaths, cancels (newest first)" }),
    $("p", { class: "muted", text: "Self-fences " + s.counters.selfFenced + " · refused late acknowledgements " + s.counters.refused + " · lost leases " + s.counters.lostLeases + " (since the queue was created)" }),
    table("feed", [["when"], ["event"], ["job"], ["detail"]], d.feed.map((e) => $("tr", { "data-event": e.eventId },
      cell(new Date(e.at).toISOString()), cell(e.kind), cell(e.jobId),
      cell(e.kind === "lease-lost" ? "attempt " + e.attempt : e.kind === "failed" ? e.reason + (e.willRetry ? ", will retry" : ", no retry") : e.kind === "dead" ? e.reason : e.kind === "cancelled" ? "was " + e.was : "")))),
    ...deadSection(d),
    $("h3", { text: "Delayed (" + d.delayed.total + ")" }),
    table("delayed", [["job"], ["due in", "num"]], d.delayed.jobs.map((j) => $("tr", { "data-id": j.id }, cell(j.id), cell(ago(Math.max(0, j.dueAt - d.delayed.now)), "num")))));
  tick();
}

const jsonText = (v) => v === undefined || v === null ? "–" : typeof v === "string" ? v : JSON.stringify(v, null, 2);
const fulls = new Map();
function value(d, field, v) {
  if (!v) return $("pre", { id: "job-" + field, text: "–" });
  const key = d.queue + "/" + d.id + "/" + field, kept = fulls.get(key);
  const pre = $("pre", { id: "job-" + field, text: kept && kept.length === v.length ? kept.text : v.text });
  const cut = !v.hidden && v.length > pre.textContent.length;
  return $("div", {}, pre, cut ? $("button", { id: "all-" + field, text: "show all (" + v.length + " characters)", onclick: async (e) => {
    const res = await api("api/full?queue=" + encodeURIComponent(d.queue) + "&id=" + encodeURIComponent(d.id) + "&field=" + field);
    const r = await res.json();
    if (res.ok) { fulls.set(key, { length: v.length, text: r.text }); pre.textContent = visible(r.text); e.target.remove(); } else status.textContent = r.error;
  } }) : null);
}
const EVENT_DETAIL = { active: (e) => "token " + e.token + " · " + e.workerId, progress: (e) => jsonText(e.progress), failed: (e) => e.reason + " (attempt " + e.attempt + ")" + (e.willRetry ? ", will retry" : ", no retry"), "lease-lost": (e) => "attempt " + e.attempt, dead: (e) => e.reason, cancelled: (e) => "was " + e.was };
function job(d) {
  if (d.error) { main.replaceChildren($("p", { class: "bad", text: d.error })); return; }
  actions = d.actions;
  offset = d.now - Date.now();
  const head = $("h2", {}, $("a", { href: "#/", text: "Queues" }), " / ", $("a", { href: "#/queue/" + encodeURIComponent(d.queue), text: d.queue }), " / job " + d.id);
  const j = d.job;
  const can = actions && token;
  controls("job:" + d.queue + ":" + d.id + ":" + (j ? j.state : "") + ":" + actions, () => !j ? [] : [
    can && ["waiting", "delayed", "active"].includes(j.state) ? $("button", { id: "cancel-job", text: "Cancel job", onclick: () => { if (confirm("cancel job " + j.id + "?")) post(d.queue, "cancel", { ids: [j.id] }); } }) : null,
    can && j.state === "dead" ? $("button", { id: "retry-job", text: "Retry job", onclick: () => post(d.queue, "retry", { ids: [j.id] }) }) : null]);
  if (!j) { rows = []; main.replaceChildren(head, $("p", { id: "job-missing", class: "bad", text: "Not found: no job " + d.id + " in " + d.queue + " (never added, or finished and no longer kept)." })); return; }
  const when = (t) => t === undefined ? "–" : new Date(t).toISOString();
  const lease = j.lease ? $("tr", { "data-id": j.id }, cell(j.lease.token, "num"), cell(j.lease.workerId || "(not recorded)"), cell(when(j.lease.deadline)), cell("", "num left")) : null;
  rows = lease ? [{ l: j.lease, tr: lease }] : [];
  main.replaceChildren(...[head,
    $("p", {}, $("span", { class: "pill state-" + j.state, id: "job-state", text: j.state }), " ",
      $("span", { class: "pill", id: "job-attempt", text: "attempt " + j.attempt + " of " + j.maxAttempts }), " ",
      $("span", { class: "pill", id: "job-failures", text: "failures " + j.failures }), " ",
      $("span", { class: "pill", id: "job-lost", text: "lost leases " + j.lostLeases })),
    table("job-facts", [["added"], ["due"], ["finished"], ["dedupe key"], ["own timeout", "num"]], [$("tr", {}, cell(when(j.addedAt)), cell(when(j.dueAt)), cell(when(j.finishedAt)), cell(j.dedupeKey), cell(j.timeoutMs === undefined ? "–" : j.timeoutMs + " ms", "num"))]),
    $("h3", { text: "Lease" }),
    lease ? table("lease", [["token", "num"], ["worker"], ["deadline (Redis clock)"], ["time left", "num"]], [lease]) : $("p", { class: "muted", text: "No lease (the job is " + j.state + ")." }),
    $("h3", { text: "Progress" }), $("pre", { id: "job-progress", text: jsonText(j.progress) }),
    $("h3", { text: "Last error" }), value(d, "error", j.error), j.error && j.error.stack ? $("pre", { id: "job-stack", class: "stack", text: j.error.stack }) : null,
    $("h3", { text: "Payload" }), value(d, "payload", j.payload),
    $("h3", { text: "Result" }), value(d, "result", j.result),
    $("h3", { text: "Timeline (events stream: the " + d.limits.fromStart + " entries from the job's start and the newest " + d.limits.newest + ")" }),
    d.timelineGap ? $("p", { class: "muted", text: "Entries between the two reads were not read: the job's middle may be missing." }) : null,
    table("timeline", [["when (Redis clock)"], ["event"], ["detail"]], d.timeline.map((e) => $("tr", { "data-event": e.eventId, "data-kind": e.kind },
      cell(when(e.at)), cell(e.kind), cell(EVENT_DETAIL[e.kind] ? EVENT_DETAIL[e.kind](e) : ""))))].filter(Boolean));
  tick();
}

function tick() {
  const now = Date.now() + offset;
  for (const { l, tr } of rows) {
    const left = l.deadline - now;
    tr.classList.toggle("expired", left <= 0);
    tr.querySelector(".left").textContent = left > 0 ? (left / 1000).toFixed(1) + " s" : "expired " + ago(-left) + " ago";
  }
}
setInterval(tick, 200);

function workersPage(d) {
  const rowsOf = (q) => q.workers.map((w) => $("tr", { "data-worker": w.id, "data-queue": q.queue },
    $("td", {}, $("a", { href: "#/queue/" + encodeURIComponent(q.queue), text: q.queue })), cell(w.id), cell(w.host), cell(w.pid, "num"), cell(w.state),
    cell(w.running + " of " + w.concurrency, "num"), cell(ago(Math.max(0, q.now - w.lastSeenAt)) + " ago", "num"), cell(new Date(w.startedAt).toISOString())));
  const all = d.queues.flatMap(rowsOf);
  main.replaceChildren($("h2", {}, $("a", { href: "#/", text: "Queues" }), " / workers (" + all.length + ")"),
    all.length === 0 ? $("p", { class: "muted", text: "No live worker under " + d.prefix + "." }) :
    table("all-workers", [["queue"], ["worker"], ["host"], ["pid", "num"], ["state"], ["running", "num"], ["last seen", "num"], ["started"]], all));
}

// read the server-sent events of a view until ctl aborts, again 2 s after a stream ends or fails
async function watch(view, ctl, onData) {
  while (!ctl.signal.aborted) {
    try {
      const res = await api("api/stream?view=" + encodeURIComponent(view), { signal: ctl.signal });
      if (!res.ok) onData(await res.json().catch(() => ({ error: "HTTP " + res.status })));
      else {
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          for (let at = buf.indexOf("\n\n"); at >= 0; at = buf.indexOf("\n\n")) {
            const data = buf.slice(0, at).split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
            buf = buf.slice(at + 2);
            if (data) onData(JSON.parse(data));
          }
        }
      }
    } catch (e) { if (ctl.signal.aborted) return; }
    live.textContent = "reconnecting…";
    await new Promise((r) => setTimeout(r, 2000));
  }
}
function route() {
  if (source) source.abort();
  const m = /^#\/queue\/(.+)$/.exec(location.hash);
  const mj = /^#\/job\/([^/]+)\/(.+)$/.exec(location.hash);
  const mw = location.hash === "#/workers";
  const view = mj ? "job:" + decodeURIComponent(mj[1]) + ":" + decodeURIComponent(mj[2]) : m ? "queue:" + decodeURIComponent(m[1]) : mw ? "workers" : "overview";
  rows = [];
  controls("", () => []);
  main.replaceChildren($("p", { class: "muted", text: "Loading…" }));
  source = new AbortController();
  void watch(view, source, (d) => {
    // a failed reading (Redis unreachable…) replaces the view: no stale figures shown as live
    if (d.error) { live.textContent = "not live · " + new Date().toLocaleTimeString(); main.replaceChildren($("p", { class: "bad", text: d.error })); return; }
    live.textContent = "live · " + new Date().toLocaleTimeString(); (mj ? job : mw ? workersPage : d.kind === "queue" || m ? queue : overview)(d);
  });
}
document.getElementById("search").addEventListener("submit", async (e) => {
  e.preventDefault();
  const id = String(new FormData(e.target).get("id")).trim();
  const inView = /^#\/(?:queue|job)\/([^/]+)/.exec(location.hash);
  status.textContent = "looking for " + id + "…";
  const res = await api("api/find?id=" + encodeURIComponent(id) + (inView ? "&queue=" + inView[1] : ""));
  const r = await res.json();
  if (res.ok) location.hash = "#/job/" + encodeURIComponent(r.queue) + "/" + encodeURIComponent(r.id);
  else status.textContent = visible(res.status === 404 ? "not found: " + id : r.error);
});
window.addEventListener("hashchange", route);
route();
`
