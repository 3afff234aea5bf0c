/**
 * Waiting for a connection to be writable: a call made while its connection is not up yet
 * waits for `ready` (or its own timeout, or the connection's end) and starts a lazy
 * connection. However many calls wait, a connection is watched by one set of listeners.
 */
import type { Cluster, Redis } from "ioredis"

/** The calls waiting for one connection to be writable, and how to stop watching it. */
interface Watch {
  readonly waiters: Set<(refused?: Error) => void>
  readonly stop: () => void
}

/** The watch of each connection someone waits for: one set of listeners a connection, however many calls wait. */
const watches = new WeakMap<Redis | Cluster, Watch>()

/**
 * The watch of `client`, made on first use: its `ready`, `end` and handshake refusal
 * (a ReplyError: WRONGPASS, NOAUTH, LOADING…) end every wait at once, and the watch with
 * them. Sixteen calls made before the connection is up add three listeners, not 48 (past
 * ten of a kind Node warns of a listener leak).
 */
const watchOf = (client: Redis | Cluster): Watch => {
  const known = watches.get(client)
  if (known) return known
  const waiters = new Set<(refused?: Error) => void>()
  const stop = () => {
    watches.delete(client)
    client.off("ready", onReady)
    client.off("end", onEnd)
    client.off("error", onError)
  }
  const all = (refused?: Error) => {
    stop()
    for (const w of [...waiters]) w(refused)
  }
  const onReady = () => all()
  const onEnd = () => all()
  const onError = (e: Error) => {
    if (e.name === "ReplyError") all(e)
  }
  client.on("ready", onReady)
  client.on("end", onEnd)
  client.on("error", onError)
  const watch = { waiters, stop }
  watches.set(client, watch)
  return watch
}

/**
 * Wait until `writable()` (or `timeoutMs`, or the connection's end); a lazy connection is
 * started. Rejects with the server's answer when it refuses the connection's handshake
 * (WRONGPASS, NOAUTH, LOADING…): waiting longer would not help the call.
 */
export const whenWritable = (client: Redis | Cluster, writable: () => boolean, timeoutMs: number): Promise<boolean> => {
  if (writable()) return Promise.resolve(true)
  if (client.status === "end" || timeoutMs <= 0) return Promise.resolve(false)
  if (client.status === "wait") client.connect().catch(() => undefined)
  return new Promise<boolean>((resolve, reject) => {
    const watch = watchOf(client)
    const finish = (refused?: Error) => {
      clearTimeout(timer)
      watch.waiters.delete(finish)
      // the last wait given up on its own: nobody listens any more
      if (watch.waiters.size === 0) watch.stop()
      if (refused) reject(refused)
      else resolve(writable())
    }
    const timer = setTimeout(finish, timeoutMs)
    watch.waiters.add(finish)
  })
}
