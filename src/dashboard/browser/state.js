// @ts-check
/**
 * What the views share: the leases whose time left is counted down (by the Redis clock),
 * whether actions are on, and the action buttons outside `main`.
 */
import { ago, byId } from "./dom.js"

/** @import { Lease } from "./types.js" */

/**
 * `offset`: the Redis clock minus ours (ms); `rows`: the lease rows counted down;
 * `actions`: whether the server allows actions.
 * @type {{ offset: number, rows: Array<{ readonly l: Lease, readonly tr: HTMLTableRowElement }>, actions: boolean }}
 */
export const state = { offset: 0, rows: [], actions: false }

/** Count every lease row's time left down to now (Redis clock). */
export const tick = () => {
  const now = Date.now() + state.offset
  for (const { l, tr } of state.rows) {
    const left = l.deadline - now
    tr.classList.toggle("expired", left <= 0)
    const cell = tr.querySelector(".left")
    if (cell !== null) cell.textContent = left > 0 ? `${(left / 1000).toFixed(1)} s` : `expired ${ago(-left)} ago`
  }
}

// action buttons live outside main, rebuilt only when what they act on changes: a click
// must not be lost to a reading that replaces the button between mouse down and up
const controlsEl = byId("controls")
let controlsKey = ""

/**
 * Show the buttons `build` makes, rebuilt only when `key` changes.
 * @param {string} key
 * @param {() => ReadonlyArray<HTMLElement | null | false>} build
 */
export const controls = (key, build) => {
  if (key === controlsKey) return
  controlsKey = key
  controlsEl.replaceChildren(...build().filter((b) => b !== null && b !== false))
}
