// @ts-check
/**
 * How the dashboard puts things on the page. Every value from Redis goes in as
 * `textContent`, never as HTML, so a payload such as `<img src=x onerror=…>` shows as
 * text and runs nothing, and bidi controls (U+202E…) are shown as their code point, so
 * `"\u202Eevil"` cannot pass for "live".
 */

/** Bidi embeddings, overrides, isolates and marks: shown, never applied. */
const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g

/**
 * `s` as text with every bidi control replaced by its visible code point (⟨U+202E⟩).
 * @param {unknown} s
 * @returns {string}
 */
export const visible = (s) =>
  String(s).replace(BIDI, (c) => `\u27E8U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}\u27E9`)

/**
 * Attributes of {@link el}: `text` (shown visibly, as text), `on<event>` (a listener), any
 * other an attribute (as a string).
 * @typedef {{ readonly text?: unknown } & { readonly [name: string]: unknown }} Attrs
 */

/** @typedef {Node | string | null | undefined | false} Kid a child; null, undefined and false are left out */

/**
 * A new element `tag` with `attrs` and the children `kids`.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs]
 * @param {...Kid} kids
 * @returns {HTMLElementTagNameMap[K]}
 */
export const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") e.textContent = visible(v)
    else if (k.startsWith("on") && typeof v === "function")
      e.addEventListener(k.slice(2), /** @type {EventListener} */ (v))
    else e.setAttribute(k, String(v))
  }
  // a string child is shown through visible() too, like `text`: a heading built from a
  // link's id (`/ job ${id}`) must not carry a raw bidi override
  for (const kid of kids)
    if (kid !== null && kid !== undefined && kid !== false) e.append(typeof kid === "string" ? visible(kid) : kid)
  return e
}

/**
 * The element of id `id`, which the page always has (Page.ts).
 * @param {string} id
 * @returns {HTMLElement}
 */
export const byId = (id) => {
  const e = document.getElementById(id)
  if (e === null) throw new Error(`the page has no #${id}`)
  return e
}

/** The view's place, and the header's status line and live indicator. */
export const main = (() => {
  const e = document.querySelector("main")
  if (e === null) throw new Error("the page has no <main>")
  return e
})()
export const status = byId("status")
export const live = byId("live")

/**
 * `ms` as a short duration: 250 ms, 1.5 s, 3 min, 1.2 h.
 * @param {number} ms
 */
export const ago = (ms) =>
  ms < 1000
    ? `${Math.round(ms)} ms`
    : ms < 60000
      ? `${(ms / 1000).toFixed(1)} s`
      : ms < 3600000
        ? `${Math.round(ms / 60000)} min`
        : `${(ms / 3600000).toFixed(1)} h`

/**
 * A table of id `id`: `head` its columns as [title, class?], `body` its rows.
 * @param {string} id
 * @param {ReadonlyArray<readonly [string, string?]>} head
 * @param {ReadonlyArray<HTMLTableRowElement>} body
 */
export const table = (id, head, body) =>
  el(
    "table",
    { id },
    el("thead", {}, el("tr", {}, ...head.map(([t, c]) => el("th", { text: t, class: c ?? "" })))),
    el("tbody", {}, ...body),
  )

/**
 * A cell showing `v` ("–" when there is none).
 * @param {unknown} v
 * @param {string} [cls]
 */
export const cell = (v, cls) => el("td", { text: v === null || v === undefined ? "–" : v, class: cls ?? "" })

/**
 * `t` (ms since the epoch) as an ISO time, or "–".
 * @param {number | undefined} t
 */
export const when = (t) => (t === undefined ? "–" : new Date(t).toISOString())

/**
 * A link to the job page of `id` in `queue`.
 * @param {string} queue
 * @param {string} id
 */
export const jobLink = (queue, id) =>
  el("a", { href: `#/job/${encodeURIComponent(queue)}/${encodeURIComponent(id)}`, text: id })

/**
 * A link to the page of `queue`.
 * @param {string} queue
 */
export const queueLink = (queue) => el("a", { href: `#/queue/${encodeURIComponent(queue)}`, text: queue })

/**
 * A sparkline of completed (green) and failed (red) per second.
 * @param {ReadonlyArray<readonly [number, number, number]>} points [time, completed/s, failed/s]
 */
export const spark = (points) => {
  const ns = "http://www.w3.org/2000/svg"
  const [w, h] = [120, 24]
  const svg = document.createElementNS(ns, "svg")
  svg.setAttribute("class", "spark")
  svg.setAttribute("width", String(w))
  svg.setAttribute("height", String(h))
  svg.setAttribute("role", "img")
  svg.setAttribute("aria-label", "completed per second, last hour")
  const max = Math.max(1, ...points.map((p) => p[1] + p[2]))
  /** @param {1 | 2} i @param {string} color */
  const line = (i, color) => {
    if (points.length < 2) return
    const pl = document.createElementNS(ns, "polyline")
    pl.setAttribute("fill", "none")
    pl.setAttribute("stroke", color)
    pl.setAttribute("stroke-width", "1.5")
    const xy = points.map((p, j) => `${(j / (points.length - 1)) * w},${h - (p[i] / max) * (h - 2) - 1}`)
    pl.setAttribute("points", xy.join(" "))
    svg.append(pl)
  }
  line(1, "var(--ok)")
  line(2, "var(--bad)")
  return svg
}
