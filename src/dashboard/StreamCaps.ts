/**
 * How many server-sent-event streams one dashboard holds open: at most `maxStreams` in all
 * and `maxStreamsPerClient` from one client address. Each stuck viewer can hold about one
 * reading in the process until it is dropped (Stream.ts), so the count is what bounds that
 * memory; the per-address cap keeps one client (or one reconnecting loop) from taking them
 * all. A stream past either cap is answered 503 with a `Retry-After`.
 */
import type { ServerResponse } from "node:http"

/** Default of the most streams open at once. */
export const DEFAULT_MAX_STREAMS = 200

/** Default of the most streams open at once from one client address (a browser opens at most 6 per host). */
export const DEFAULT_MAX_STREAMS_PER_CLIENT = 20

/** Seconds a refused stream is told to wait (`Retry-After`). */
export const STREAM_RETRY_AFTER_S = 5

/** Make the caps: `take` a slot for a new stream, released when its response closes. */
export const makeStreamCaps = (maxStreams: number, perClient: number) => {
  const byClient = new Map<string, number>()
  let open = 0
  return {
    /** Take a slot for `res` from `client` (its address), or why there is none; the slot frees when `res` closes. */
    take: (client: string, res: ServerResponse): string | undefined => {
      if (open >= maxStreams) return `${maxStreams} streams are open already (maxStreams): try again later`
      const mine = byClient.get(client) ?? 0
      if (mine >= perClient)
        return `${perClient} streams are open from ${client} already (maxStreamsPerClient): close a page and try again`
      open++
      byClient.set(client, mine + 1)
      res.once("close", () => {
        open--
        const left = (byClient.get(client) ?? 1) - 1
        if (left <= 0) byClient.delete(client)
        else byClient.set(client, left)
      })
      return undefined
    },
    /** Streams open now. */
    open: (): number => open,
  }
}

/** Answer a stream refused by a cap: 503, `Retry-After`, the reason as JSON. */
export const refuseStream = (res: ServerResponse, reason: string): void => {
  res.writeHead(503, {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    "retry-after": String(STREAM_RETRY_AFTER_S),
  })
  res.end(JSON.stringify({ error: reason }))
}
