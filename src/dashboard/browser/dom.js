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
 * A round number at or above `x` for a scale's top: 1, 2 or 5 times a power of ten.
 * @param {number} x
 */
export const niceMax = (x) => {
  if (!(x > 0)) return 1
  const p = 10 ** Math.floor(Math.log10(x))
  return (x <= p ? 1 : x <= 2 * p ? 2 : x <= 5 * p ? 5 : 10) * p
}

/**
 * A small chart of completed (green) and failed (red) per second over time, with its axes:
 * the y scale from 0 to a round top (per second, said on the axis), and the x axis from the
 * oldest point's age to "now".
 * @param {ReadonlyArray<readonly [number, number, number]>} points [time, completed/s, failed/s]
 */
export const spark = (points) => {
  const ns = "http://www.w3.org/2000/svg"
  const [w, h, left, bottom] = [200, 54, 34, 12]
  const [pw, ph] = [w - left - 2, h - bottom - 4]
  /**
   * @param {string} tag
   * @param {Record<string, string | number>} attrs
   * @param {string} [text]
   */
  const svgEl = (tag, attrs, text) => {
    const e = document.createElementNS(ns, tag)
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v))
    if (text !== undefined) e.textContent = text
    return e
  }
  const svg = svgEl("svg", { class: "spark", width: w, height: h, role: "img" })
  const top = niceMax(Math.max(0, ...points.map((p) => Math.max(p[1], p[2]))))
  const first = points[0]?.[0] ?? 0
  const last = points[points.length - 1]?.[0] ?? 0
  const span = Math.max(1, last - first)
  svg.setAttribute(
    "aria-label",
    `completed and failed per second, scale 0 to ${top}/s, over the last ${ago(span)}${points.length < 2 ? " (no points yet)" : ""}`,
  )
  const x = (/** @type {number} */ t) => left + ((t - first) / span) * pw
  const y = (/** @type {number} */ v) => 2 + ph - (v / top) * ph
  svg.append(
    svgEl("line", { class: "axis", x1: left, y1: 2, x2: left, y2: 2 + ph, stroke: "var(--line)" }),
    svgEl("line", { class: "axis", x1: left, y1: 2 + ph, x2: left + pw, y2: 2 + ph, stroke: "var(--line)" }),
    svgEl("text", { class: "y-max", x: left - 3, y: 9, "text-anchor": "end" }, `${top}/s`),
    svgEl("text", { class: "y-min", x: left - 3, y: 2 + ph, "text-anchor": "end" }, "0"),
    svgEl("text", { class: "x-start", x: left, y: h - 1 }, points.length < 2 ? "no points yet" : `−${ago(span)}`),
    svgEl("text", { class: "x-end", x: left + pw, y: h - 1, "text-anchor": "end" }, "now"),
  )
  /** @param {1 | 2} i @param {string} color */
  const line = (i, color) => {
    if (points.length < 2) return
    const xy = points.map((p) => `${x(p[0]).toFixed(1)},${y(p[i]).toFixed(1)}`)
    svg.append(
      svgEl("polyline", { fill: "none", stroke: color, "stroke-width": 1.5, class: `rate-${i}`, points: xy.join(" ") }),
    )
  }
  line(1, "var(--ok)")
  line(2, "var(--bad)")
  return svg
}
