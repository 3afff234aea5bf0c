/**
 * One poller per view (the overview, or one queue), shared by every open page: Redis is
 * read once per interval for a view however many pages watch it, and not at all when
 * none does. Each reading goes to every subscriber as a server-sent event; a page that
 * opens gets the last reading at once.
 */

/**
 * True when a reading is the hub's own account of a failed read: `{"error": "<message>"}`
 * (a view's reading never starts with an `error` field).
 */
export const isErrorReading = (json: string): boolean => json.startsWith('{"error":')

/** A poller's subscriber: called with each reading's JSON text. */
export type Send = (json: string) => void

interface Poller {
  readonly subscribers: Set<Send>
  /** Not counted against `maxViews` (the overview, workers, a queue that exists: see `canWatch`). */
  free: boolean
  timer: ReturnType<typeof setTimeout> | undefined
  last: string | undefined
  reading: Promise<string> | undefined
}

/**
 * Free views cost no slot of `maxViews`: the overview, workers and a queue that exists (a
 * set bounded by the queues under the prefix), so a reader holding made-up job ids cannot
 * lock the operator's own pages out. Which views are free is the caller's to say.
 */
export const FREE_VIEWS = "overview, workers, queue:<a queue under the prefix>"

/** Default of the most views polled at once: each watched view costs its own reads every interval. */
export const DEFAULT_MAX_VIEWS = 100

/**
 * Make a hub over `read` (the reading of one view, as JSON text), polled every `intervalMs`;
 * at most `maxViews` views that are not free are watched at once (see `canWatch`).
 */
export const makeHub = (read: (view: string) => Promise<string>, intervalMs: number, maxViews = DEFAULT_MAX_VIEWS) => {
  const pollers = new Map<string, Poller>()
  let closed = false

  const readNow = (view: string, p: Poller): Promise<string> => {
    p.reading ??= read(view)
      .then(
        (json) => json,
        (e: unknown) => JSON.stringify({ error: e instanceof Error ? e.message : String(e) }),
      )
      .then((json) => {
        p.last = json
        p.reading = undefined
        if (!closed) for (const send of p.subscribers) send(json) // after close: no one (streams ended)
        // an unwatched view keeps nothing (one look-up per job id must not grow the map)
        if (p.subscribers.size === 0 && pollers.get(view) === p) pollers.delete(view)
        return json
      })
    return p.reading
  }

  const schedule = (view: string, p: Poller) => {
    if (closed || p.subscribers.size === 0) return
    p.timer = setTimeout(() => {
      p.timer = undefined
      void readNow(view, p).then(() => schedule(view, p))
    }, intervalMs)
  }

  const pollerOf = (view: string): Poller => {
    let p = pollers.get(view)
    if (p === undefined) {
      p = { subscribers: new Set(), free: false, timer: undefined, last: undefined, reading: undefined }
      pollers.set(view, p)
    }
    return p
  }

  const watched = () => [...pollers.values()].filter((p) => p.subscribers.size > 0 && !p.free).length

  return {
    /** True when `view` may be watched now: it is free (see {@link FREE_VIEWS}), watched already, or fewer than `maxViews` others are. */
    canWatch: (view: string, free = false): boolean =>
      free || (pollers.get(view)?.subscribers.size ?? 0) > 0 || watched() < maxViews,
    /** Watch a view (`free` as for `canWatch`): `send` gets the last reading now (if any) and every one after; the unsubscribe. */
    subscribe: (view: string, send: Send, free = false): (() => void) => {
      const p = pollerOf(view)
      if (p.subscribers.size === 0) p.free = free
      p.subscribers.add(send)
      if (p.last !== undefined) send(p.last)
      if (p.subscribers.size === 1) void readNow(view, p).then(() => schedule(view, p))
      return () => {
        p.subscribers.delete(send)
        if (p.subscribers.size === 0 && p.timer !== undefined) {
          clearTimeout(p.timer)
          p.timer = undefined
        }
        if (p.subscribers.size === 0 && p.reading === undefined && pollers.get(view) === p) pollers.delete(view)
      }
    },
    /** The latest reading of a view: the poller's if one runs, else one read now (shared by concurrent callers). */
    latest: (view: string): Promise<string> => {
      const p = pollerOf(view)
      if (p.subscribers.size > 0 && p.last !== undefined) return Promise.resolve(p.last)
      return readNow(view, p)
    },
    /** Read a view again at once (after an action), pushing the reading to its subscribers; nothing when unwatched. */
    refresh: (view: string): Promise<string | undefined> => {
      const p = pollers.get(view)
      return p === undefined || p.subscribers.size === 0 ? Promise.resolve(undefined) : readNow(view, p)
    },
    close: () => {
      closed = true
      for (const p of pollers.values()) if (p.timer !== undefined) clearTimeout(p.timer)
      pollers.clear()
    },
  }
}

/** A hub. */
export type Hub = ReturnType<typeof makeHub>
