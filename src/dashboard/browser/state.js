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
export const state = { offset: Number.NEGATIVE_INFINITY, rows: [], actions: false }

/**
 * Take a reading's Redis clock (`redisNow`, ms). Each reading is a lower bound on Redis's
 * time now (it was read before the reply travelled), so the largest offset seen is the best
 * estimate: taking each reading as it comes would move the clock back by that reading's
 * latency, and a lease row just past its deadline would flip back from expired to "0.0 s".
 * A jump of more than 5 s either way (our clock was reset) starts over from this reading.
 * @param {number} redisNow
 */
export const redisClock = (redisNow) => {
  const offset = redisNow - Date.now()
  state.offset = Math.abs(offset - state.offset) > 5000 ? offset : Math.max(state.offset, offset)
}

/** Count every lease row's time left down to now (Redis clock). */
export const tick = () => {
  const now = Date.now() + (Number.isFinite(state.offset) ? state.offset : 0)
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
