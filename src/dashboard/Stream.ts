/**
 * One server-sent-events stream of a view, respecting backpressure: while the socket has
 * not taken the last reading (`res.write` said to wait for `drain`), newer readings are not
 * queued in the process: only the newest one is kept and written at `drain`. A viewer that
 * never reads costs at most the reading it is stuck on and the newest one (a reference to
 * the string every viewer shares), however long it stays; a viewer stuck for
 * {@link STUCK_READINGS} readings in a row is dropped (its browser reconnects on its own).
 */
import type { ServerResponse } from "node:http"
import type { Hub } from "./Hub.ts"

/** Readings a viewer may miss in a row (its socket not draining) before its stream is ended. */
export const STUCK_READINGS = 60

/** Open the stream of `view` on `res` (`free`: see the hub's `canWatch`); `streams` holds the open ones (ended at close). */
export const openStream = (
  res: ServerResponse,
  view: string,
  hub: Hub,
  streams: Set<ServerResponse>,
  free = false,
): void => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive" })
  res.write("retry: 2000\n\n")
  streams.add(res)
  let pending: string | undefined
  let missed = 0
  const write = (data: string) => {
    // ended by the server (its close, a stuck reader) before its `close` event unsubscribed
    // it: a write now would be an `error` on the response, uncaught in the host process
    if (res.writableEnded || res.destroyed) return
    // three writes, so the reading buffered for a slow socket is the hub's own string, not a copy
    res.write("data: ")
    res.write(data)
    res.write("\n\n")
  }
  const onDrain = () => {
    missed = 0
    if (pending === undefined) return
    const next = pending
    pending = undefined
    write(next)
  }
  res.on("drain", onDrain)
  const off = hub.subscribe(
    view,
    (data) => {
      if (!res.writableNeedDrain) return write(data)
      pending = data
      if (++missed >= STUCK_READINGS) res.destroy()
    },
    free,
  )
  res.on("close", () => {
    off()
    pending = undefined
    streams.delete(res)
  })
}
