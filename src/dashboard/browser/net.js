// @ts-check
/**
 * How the dashboard talks to its server: every request carries the token in the
 * `x-leaseq-token` header when the page has one (from the link's `#token=…`, kept in
 * sessionStorage, never in a URL sent to the server), and readings stream over `fetch`
 * (not EventSource, which cannot send a header).
 */
import { live, status, visible } from "./dom.js"

/** @import { Failed, Reading } from "./types.js" */

/** The token, taken from the link's `#token=…` once (then removed from the address bar), or null. */
export const token = (() => {
  const m = /^#token=([A-Za-z0-9_-]+)/.exec(location.hash)
  if (m?.[1] !== undefined) {
    sessionStorage.setItem("leaseq-token", m[1])
    history.replaceState(null, "", `${location.pathname}#/`)
  }
  return sessionStorage.getItem("leaseq-token")
})()

/**
 * `fetch(path, init)` with the token's header added.
 * @param {string} path
 * @param {RequestInit & { headers?: Record<string, string> }} [init]
 */
export const api = (path, init = {}) =>
  fetch(path, { ...init, headers: { ...(token ? { "x-leaseq-token": token } : {}), ...(init.headers ?? {}) } })

/**
 * The JSON body of `res`, or, when it has none, an error naming the status.
 * @param {Response} res
 * @returns {Promise<Record<string, unknown>>}
 */
export const bodyOf = (res) => res.json().catch(() => ({ error: `HTTP ${res.status}` }))

/**
 * What a refused request (a reading answered 503, 401…) says went wrong.
 * @param {Response} res
 * @returns {Promise<Failed>}
 */
const failedOf = async (res) => {
  const r = await bodyOf(res)
  return { error: typeof r.error === "string" ? r.error : `HTTP ${res.status}` }
}

/**
 * Run `action` on `target` of `queue` (POST api/action) and say in the status line how it went.
 * @param {string} queue
 * @param {string} action
 * @param {{ readonly ids?: ReadonlyArray<string>, readonly all?: number, readonly state?: string, readonly olderThanMs?: number }} target
 */
export const post = async (queue, action, target) => {
  const res = await api("api/action", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ queue, action, ...target }),
  })
  const r = await bodyOf(res)
  status.textContent = res.ok ? `${action}: ${r.count} done` : `refused: ${r.error}`
}

/** What the status line says of an action done on one job. */
const DONE = /** @type {Readonly<Record<string, string>>} */ ({
  cancel: "cancelled",
  retry: "queued again",
  promote: "promoted: it runs now",
  purge: "deleted",
})

/**
 * Run `action` on job `id` of `queue` and say in the status line what came of it: done, the
 * job not found (or no longer in a state the action applies to), or the refusal.
 * @param {string} queue
 * @param {string} action
 * @param {string} id
 */
export const postJob = async (queue, action, id) => {
  const res = await api("api/action", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ queue, action, ids: [id] }),
  })
  const r = await bodyOf(res)
  const refused = Array.isArray(r.refused) && typeof r.refused[0] === "string" ? r.refused[0] : undefined
  status.textContent = visible(
    !res.ok
      ? `refused: ${r.error}`
      : refused !== undefined
        ? refused
        : r.count === 1
          ? `job ${id} ${DONE[action] ?? "done"}`
          : `${action} job ${id}: not done (not found, or its state changed)`,
  )
}

/**
 * {@link post}, once the user confirms acting on `count` dead jobs.
 * @param {string} queue
 * @param {string} action
 * @param {{ readonly ids?: ReadonlyArray<string>, readonly all?: number }} target
 * @param {number} count
 */
export const act = async (queue, action, target, count) => {
  if (!confirm(`${action} ${count} dead job${count === 1 ? "" : "s"} of ${queue}?`)) return
  await post(queue, action, target)
}

/**
 * Each server-sent event's data in `body`, parsed, given to `onData`.
 * @param {ReadableStream<Uint8Array<ArrayBuffer>>} body
 * @param {(d: Reading) => void} onData
 */
const readEvents = async (body, onData) => {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader()
  let buf = ""
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return
    buf += value
    for (let at = buf.indexOf("\n\n"); at >= 0; at = buf.indexOf("\n\n")) {
      const lines = buf.slice(0, at).split("\n")
      const data = lines
        .filter((l) => l.startsWith("data: "))
        .map((l) => l.slice(6))
        .join("\n")
      buf = buf.slice(at + 2)
      if (data) onData(JSON.parse(data))
    }
  }
}

/**
 * Read the server-sent events of `view` until `ctl` aborts, again 2 s after a stream ends or fails.
 * @param {string} view
 * @param {AbortController} ctl
 * @param {(d: Reading) => void} onData
 */
export const watch = async (view, ctl, onData) => {
  while (!ctl.signal.aborted) {
    try {
      const res = await api(`api/stream?view=${encodeURIComponent(view)}`, { signal: ctl.signal })
      if (!res.ok || res.body === null) onData(await failedOf(res))
      else await readEvents(res.body, onData)
    } catch {
      if (ctl.signal.aborted) return
    }
    live.textContent = "reconnecting…"
    await new Promise((r) => setTimeout(r, 2000))
  }
}
