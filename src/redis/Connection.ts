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
import { whenWritable } from "./Writable.ts"

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
 * Why a call failed that was pending on a connection {@link connectionSlot}'s `renew` tore
 * down: no reply came on it, and none ever will; it may have run.
 */
const REPLACED =
  "no reply: the connection it was sent on was dropped as silent (half-open) and a new one opened; the call may have run"

/**
 * The ioredis connection behind a {@link RedisClient}, which `renew` may replace (a
 * silent one, see {@link RedisClient.commandWithin}). Owned connections are tracked for
 * the leak check and their last error kept; borrowed ones are never replaced.
 *
 * Each call on an owned connection is sent through `send`, which keeps it until it
 * settles, so that `renew` fails what is still pending on the connection it tears down.
 * ioredis does not always: a connection disconnected while it waits to reconnect emits no
 * further `close`, so its offline queue and the calls it keeps to send again after a
 * reconnect stay pending for ever (a reserve stranded so left its worker's slot spoken for
 * and a waiting job untaken).
 */
const connectionSlot = (initial: Redis | Cluster, owned: boolean, onError?: (e: Error) => void) => {
  let current = initial
  /** The calls pending on each owned connection not torn down yet (its reject functions). */
  const pending = new Map<Redis | Cluster, Set<(e: Error) => void>>()
  let lastError: string | undefined
  /** Set by close/disconnect: the connection is then no longer replaced. */
  let closed = false
  const track = (c: Redis | Cluster) => {
    live.add(c)
    pending.set(c, new Set())
    c.once("end", () => live.delete(c))
    c.on("error", (e: Error) => {
      lastError = redactText(e.message)
    })
    c.on("ready", () => {
      lastError = undefined
    })
  }
  if (owned) track(current)
  return {
    current: () => current,
    lastError: () => lastError,
    /**
     * Run `call` on `client` (taken from `current`), failing it if `renew` tears `client`
     * down before it settles; on a connection already torn down, fail at once.
     */
    send: <A>(client: Redis | Cluster, call: () => Promise<A>): Promise<A> => {
      if (!owned) return call()
      const calls = pending.get(client)
      if (calls === undefined) return Promise.reject(new Error(REPLACED))
      return new Promise<A>((resolve, reject) => {
        calls.add(reject)
        call().then(
          (value) => {
            calls.delete(reject)
            resolve(value)
          },
          (e: unknown) => {
            calls.delete(reject)
            reject(e)
          },
        )
      })
    },
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
      // a silent peer never answers the FIN that disconnect sends: destroy the socket now
      if (!(old instanceof ioredis().Cluster)) (old.stream as { destroy?: () => void } | undefined)?.destroy?.()
      // what was pending on it fails now: ioredis may never settle it (see above)
      const stranded = pending.get(old)
      pending.delete(old)
      for (const fail of stranded ?? []) fail(new Error(REPLACED))
    },
  }
}

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
        slot.send(client, () => client.call(name, [...args])),
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
      const client = slot.current()
      try {
        return await slot.send(client, () => client.call("evalsha", [script.sha, keys.length, ...keys, ...args]))
      } catch (e) {
        if (!isNoScript(e)) throw e
        return await slot.send(client, () => client.call("eval", [script.source, keys.length, ...keys, ...args]))
      }
    },
    command: (name, args) => {
      const client = slot.current()
      return slot.send(client, () => client.call(name, [...args]))
    },
    replaceSilent: () => {
      if (!owned) return false
      slot.renew()
      return true
    },
    scriptThenWait: (script, keys, args, replicas, timeoutMs) => {
      const client = slot.current()
      return slot.send(client, () => scriptThenWaitOn(client, script, keys, args, replicas, timeoutMs))
    },
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
