/**
 * The ioredis connection behind a {@link RedisClient}: {@link wrap} makes the client
 * from an ioredis Redis or Cluster. It tracks the connections leaseq opened (the leak
 * check), keeps the last connection error, replaces a connection gone silent, and
 * closes gracefully within a bound.
 */
import type { Cluster, Redis } from "ioredis"
import { isNoScript, scriptThenWaitOn } from "./Eval.ts"
import type { RedisClient } from "./Interface.ts"
import { ioredis } from "./Ioredis.ts"
import { redactText } from "./Redact.ts"

/** Connections leaseq opened and has not closed yet (the test suite's leak check reads this). */
const live = new Set<Redis | Cluster>()

/** How many Redis connections leaseq opened and has not closed yet. */
export const liveConnections = (): number => live.size

/**
 * Settle as `pending` does, or, if it has not by `ms`, reject with `late()`. The check
 * runs after one more turn of I/O (setImmediate), so a reply that arrived while the
 * process was stalled is read before the deadline is called missed. `pending` keeps
 * its handler: a later rejection is never unhandled.
 */
const settleBy = <A>(
  pending: Promise<A>,
  ms: number,
  late: () => unknown,
  failed: (e: unknown) => unknown = (e) => e,
): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    let done = false
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (done) return
          done = true
          reject(late())
        }),
      Math.max(0, ms),
    )
    pending.then(
      (value) => {
        if (done) return
        done = true
        clearTimeout(timer)
        resolve(value)
      },
      (e: unknown) => {
        if (done) return
        done = true
        clearTimeout(timer)
        reject(failed(e))
      },
    )
  })

/**
 * Wait until `writable()` (or `timeoutMs`, or the connection's end); a lazy connection is
 * started. Rejects with the server's answer when it refuses the connection's handshake
 * (WRONGPASS, NOAUTH, LOADING…): waiting longer would not help the call.
 */
const whenWritable = (client: Redis | Cluster, writable: () => boolean, timeoutMs: number): Promise<boolean> => {
  if (writable()) return Promise.resolve(true)
  if (client.status === "end" || timeoutMs <= 0) return Promise.resolve(false)
  if (client.status === "wait") client.connect().catch(() => undefined)
  return new Promise<boolean>((resolve, reject) => {
    const finish = (refused?: Error) => {
      clearTimeout(timer)
      client.off("ready", onReady)
      client.off("end", onEnd)
      client.off("error", onError)
      if (refused) reject(refused)
      else resolve(writable())
    }
    const onReady = () => finish()
    const onEnd = () => finish()
    const onError = (e: Error) => {
      if (e.name === "ReplyError") finish(e)
    }
    const timer = setTimeout(finish, timeoutMs)
    client.on("ready", onReady)
    client.on("end", onEnd)
    client.on("error", onError)
  })
}

export const attachErrorListener = (c: Redis | Cluster, onError?: (e: Error) => void) => {
  c.on("error", (e: Error) => onError?.(e))
}

/** QUIT, bounded by `timeoutMs`, then disconnect; a connection that is not ready is just disconnected. */
const quitThenDisconnect = async (client: Redis | Cluster, timeoutMs: number): Promise<void> => {
  if (client.status === "end") return
  if (client.status !== "ready") {
    client.disconnect()
    return
  }
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    client.quit().catch(() => undefined),
    new Promise((resolve) => {
      timer = setTimeout(resolve, timeoutMs)
    }),
  ])
  if (timer) clearTimeout(timer)
  client.disconnect()
}

/**
 * The ioredis connection behind a {@link RedisClient}, which `renew` may replace (a
 * silent one, see {@link RedisClient.commandWithin}). Owned connections are tracked for
 * the leak check and their last error kept; borrowed ones are never replaced.
 */
const connectionSlot = (initial: Redis | Cluster, owned: boolean, onError?: (e: Error) => void) => {
  let current = initial
  let lastError: string | undefined
  /** Set by close/disconnect: the connection is then no longer replaced. */
  let closed = false
  const track = (c: Redis | Cluster) => {
    live.add(c)
    c.once("end", () => live.delete(c))
    c.on("error", (e: Error) => {
      lastError = redactText(e.message)
    })
    c.on("ready", () => {
      lastError = undefined
    })
  }
  if (owned) track(current)
  /**
   * The calls in flight on a Cluster connection, each with how to fail it: a replaced
   * Cluster does not always fail them itself (ioredis 6 leaves the commands it queued while
   * reconnecting unanswered for ever once it is disconnected), so `renew` fails them. A
   * plain connection needs none: its torn-down socket fails what was pending on it.
   */
  let inFlight: Set<(e: Error) => void> | undefined
  return {
    current: () => current,
    /** `call` sent on the current connection; failed, if still unanswered, when that connection is replaced. */
    guard: <A>(call: (c: Redis | Cluster) => Promise<A>): Promise<A> => {
      const c = current
      if (!owned || !(c instanceof ioredis().Cluster)) return call(c)
      const calls = inFlight ?? new Set<(e: Error) => void>()
      inFlight = calls
      return new Promise<A>((resolve, reject) => {
        calls.add(reject)
        call(c).then(
          (v) => {
            calls.delete(reject)
            resolve(v)
          },
          (e: unknown) => {
            calls.delete(reject)
            reject(e)
          },
        )
      })
    },
    lastError: () => lastError,
    /** Stop replacing and stop counting it as live (it is being closed). */
    release: () => {
      closed = true
      live.delete(current)
    },
    /** Open a new connection in place of the current one and tear the old one down at once. */
    renew: () => {
      if (!owned || closed) return
      const old = current
      current = old instanceof ioredis().Cluster ? old.duplicate() : old.duplicate()
      attachErrorListener(current, onError)
      track(current)
      live.delete(old)
      old.disconnect()
      // what was sent on the old one fails as a dropped connection does (the caller may resend)
      const stranded = inFlight
      inFlight = undefined
      for (const fail of stranded ?? []) fail(new Error(REPLACED))
      // a silent peer never answers the FIN that disconnect sends: destroy the socket now
      if (!(old instanceof ioredis().Cluster)) (old.stream as { destroy?: () => void } | undefined)?.destroy?.()
    },
  }
}

/** The error of a call in flight on a connection that was replaced (as ioredis words a dropped one). */
const REPLACED = "Connection is closed: it was replaced (gone silent), before an answer to this call"

/** True when a command sent now on `client` is written at once (see {@link RedisClient.writable}). */
const isWritable = (client: Redis | Cluster): boolean =>
  client instanceof ioredis().Cluster
    ? client.status === "ready"
    : client.status === "ready" && (client.stream as { writable?: boolean } | undefined)?.writable === true

/**
 * A {@link RedisClient} over `initial`. `owned`: leaseq opened it, tracks it for the leak
 * check, closes it and may replace it; otherwise it is borrowed and left alone.
 */
export const wrap = (
  initial: Redis | Cluster,
  owned: boolean,
  describe: string,
  onError?: (e: Error) => void,
): RedisClient => {
  const slot = connectionSlot(initial, owned, onError)
  const writable = () => isWritable(slot.current())
  const self: RedisClient = {
    isCluster: initial instanceof ioredis().Cluster,
    describe,
    lastError: slot.lastError,
    status: () => slot.current().status,
    writable,
    whenWritable: (timeoutMs) => whenWritable(slot.current(), writable, timeoutMs),
    commandWithin: (name, args, deadlineMs) => {
      const client = slot.current()
      const wasReady = client.status === "ready"
      return settleBy(
        slot.guard((c) => c.call(name, [...args])),
        deadlineMs,
        () => {
          slot.renew()
          const why = wasReady
            ? "the connection went silent (half-open)"
            : `the connection was not ready (${client.status === "end" ? "closed" : "connecting"})`
          return new Error(`no reply to ${name} within ${deadlineMs} ms: ${why}; it was dropped and a new one opened`)
        },
      )
    },
    script: async (script, keys, args) => {
      try {
        return await slot.guard((c) => c.call("evalsha", [script.sha, keys.length, ...keys, ...args]))
      } catch (e) {
        if (!isNoScript(e)) throw e
        return await slot.guard((c) => c.call("eval", [script.source, keys.length, ...keys, ...args]))
      }
    },
    command: (name, args) => slot.guard((c) => c.call(name, [...args])),
    replaceSilent: () => {
      if (!owned) return false
      slot.renew()
      return true
    },
    scriptThenWait: (script, keys, args, replicas, timeoutMs) =>
      slot.guard((c) => scriptThenWaitOn(c, script, keys, args, replicas, timeoutMs)),
    duplicate: () => {
      const client = slot.current()
      const twin: Redis | Cluster = client instanceof ioredis().Cluster ? client.duplicate() : client.duplicate()
      attachErrorListener(twin, onError)
      return wrap(twin, true, describe, onError)
    },
    masters: async () => {
      const client = slot.current()
      if (!(client instanceof ioredis().Cluster)) return [self]
      return client.nodes("master").map((node) => wrap(node, false, `${node.options.host}:${node.options.port}`))
    },
    close: async (timeoutMs = 1_000) => {
      if (!owned) return
      slot.release()
      await quitThenDisconnect(slot.current(), timeoutMs)
    },
    disconnect: () => {
      if (!owned) return
      slot.release()
      slot.current().disconnect()
    },
  }
  return self
}
