/**
 * The only module that imports ioredis. The engine sees {@link RedisClient}: run a
 * script, send a command, make a blocking twin, close.
 */
import { Cluster, type ClusterNode, type ClusterOptions, Redis, type RedisOptions } from "ioredis"

/**
 * ioredis' constructors with the options leaseq merged. ioredis' option types do not
 * check under `exactOptionalPropertyTypes` (its own RedisOptions and ClusterOptions do
 * not fit its constructors' overloads), so the options go through `never` here, once.
 */
const newRedis = (url: string | undefined, options: RedisOptions): Redis =>
  url === undefined ? new Redis(options as never) : new Redis(url, options as never)
const newCluster = (nodes: Array<string | ClusterNode>, options: ClusterOptions): Cluster =>
  new Cluster(nodes, options as never)

import { InvalidOptions } from "../engine/Errors.ts"
import type { Script } from "../engine/scripts/Script.ts"
import { keySlot } from "./Slot.ts"

/** What `connection` accepts: a URL, ioredis options, an ioredis client or cluster, or cluster nodes. */
export type ConnectionOption =
  | string
  | RedisOptions
  | Redis
  | Cluster
  | { readonly cluster: ReadonlyArray<string | ClusterNode>; readonly options?: ClusterOptions }

/** A small Redis client: everything the engine needs and nothing more. */
export interface RedisClient {
  /** EVALSHA; on NOSCRIPT (after a restart or failover) EVAL once, which loads it again. */
  readonly script: (
    script: Script,
    keys: ReadonlyArray<string>,
    args: ReadonlyArray<string | number>,
  ) => Promise<unknown>
  /** Any Redis command. */
  readonly command: (name: string, args: ReadonlyArray<string | number>) => Promise<unknown>
  /** A new connection to the same server(s), for blocking commands. Closed with its own `close`. */
  readonly duplicate: () => RedisClient
  /** One client per master (itself when standalone): for SCAN and INFO over a cluster. */
  readonly masters: () => Promise<ReadonlyArray<RedisClient>>
  /**
   * Run a script, then `WAIT replicas timeoutMs` on the same connection of the node that
   * ran it (on a cluster: the master of the slot of `keys[0]`, following MOVED). Never
   * throws for WAIT itself: its failure is in `waitError`. Used by the `durability` option.
   */
  readonly scriptThenWait: (
    script: Script,
    keys: ReadonlyArray<string>,
    args: ReadonlyArray<string | number>,
    replicas: number,
    timeoutMs: number,
  ) => Promise<WaitedReply>
  /** True for a Redis Cluster client. */
  readonly isCluster: boolean
  /** "ready" once connected; other ioredis states otherwise. */
  readonly status: () => string
  /** Where it connects to, without any password (for messages). */
  readonly describe: string
  /**
   * Why the connection last failed (a TLS certificate refused, ECONNREFUSED, WRONGPASS…),
   * redacted, until it is ready again; undefined when it is fine or borrowed. A command
   * that fails while disconnected only says "Connection is closed": this says why.
   */
  readonly lastError?: () => string | undefined
  /**
   * True when a command sent now is written to the socket at once, not parked in
   * ioredis' offline queue to be written whenever the connection comes back.
   * (On a cluster: the cluster client is ready; its nodes may still queue.)
   */
  readonly writable: () => boolean
  /**
   * Resolves true once {@link writable} (starting a lazy connection if needed), false if not
   * within `timeoutMs`; rejects with the server's refusal of the handshake (WRONGPASS, LOADING…).
   */
  readonly whenWritable: (timeoutMs: number) => Promise<boolean>
  /**
   * A command that must answer within `deadlineMs` (a blocking command: its own timeout
   * plus a slack). When no reply came by then, the connection is taken for silent
   * (half-open): it is torn down at once (what was pending on it fails), a new one is
   * opened in its place, and the call rejects saying so. Borrowed clients are not replaced.
   */
  readonly commandWithin: (name: string, args: ReadonlyArray<string | number>, deadlineMs: number) => Promise<unknown>
  /** QUIT gracefully (bounded by `timeoutMs`), then force-disconnect. Never rejects. Borrowed clients are left open. */
  readonly close: (timeoutMs?: number) => Promise<void>
  /** Tear the socket down at once. Borrowed clients are left open. */
  readonly disconnect: () => void
}

/** What {@link RedisClient.scriptThenWait} answers. */
export interface WaitedReply {
  readonly reply: unknown
  /** Replicas that acknowledged the write (WAIT's answer); 0 when WAIT failed. */
  readonly acknowledged: number
  /** The node that ran the script, `host:port`. */
  readonly node: string
  readonly waitError?: string
}

/** Cluster errors after which a script did not run and may be sent again (to the slot's new owner). */
const REROUTE = /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN)\b/
const MAX_REROUTES = 16

/** A refusal reply (`{'CODE', …}`): the script wrote nothing, so there is nothing to wait for. */
const isRefusal = (reply: unknown): boolean => Array.isArray(reply) && typeof reply[0] === "string"

/** EVALSHA then WAIT, written back to back on one connection; on NOSCRIPT, EVAL then WAIT. */
const evalThenWait = async (
  node: Redis,
  script: Script,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<string | number>,
  replicas: number,
  timeoutMs: number,
): Promise<{ reply: unknown; acknowledged: number; waitError?: string }> => {
  const waitOn = () =>
    node.call("WAIT", replicas, timeoutMs).then(
      (n) => ({ acknowledged: Number(n) }),
      (e: unknown) => ({ acknowledged: 0, waitError: e instanceof Error ? e.message : String(e) }),
    )
  let written = node.evalsha(script.sha, keys.length, ...keys, ...args)
  let waited = waitOn()
  const reply = await written.catch(async (e: unknown) => {
    if (!isNoScript(e)) throw e
    await waited
    written = node.eval(script.source, keys.length, ...keys, ...args)
    waited = waitOn()
    return await written
  })
  const w = await waited
  return isRefusal(reply) ? { reply, acknowledged: replicas } : { reply, ...w }
}

/** The pool connection of the master that serves `key`'s slot, per the client's slot map. */
const masterFor = (cluster: Cluster, key: string): Redis | undefined => {
  const nodeKey = cluster.slots[keySlot(key)]?.[0]
  return cluster.nodes("master").find((n) => `${n.options.host}:${n.options.port}` === nodeKey)
}

const refreshSlots = (cluster: Cluster): Promise<void> =>
  new Promise((resolve) => cluster.refreshSlotsCache(() => resolve()))

/** Defaults applied to connections leaseq creates itself. */
const DEFAULTS: RedisOptions = {
  // leaseq batches explicitly (Batcher); ioredis auto-pipelining would hold each command
  // for a tick and keep only one pipeline in flight, which costs a round trip per job
  enableAutoPipelining: false,
  maxRetriesPerRequest: 20,
  connectTimeout: 5_000,
}

/** Strip the password from a Redis URL: `redis://user:***@host:port/db`. */
export const redactUrl = (url: string): string => {
  try {
    const u = new URL(url)
    if (u.password) u.password = "***"
    return u.toString()
  } catch {
    return url.replace(/\/\/[^@/]*@/, "//***@")
  }
}

/** Mask any `user:password@` in a message. */
export const redactText = (text: string): string =>
  text.replace(/(rediss?:\/\/)([^@\s/]*)@/g, (_m, s: string, cred: string) => {
    const user = cred.includes(":") ? cred.slice(0, cred.indexOf(":")) : ""
    return `${s}${user ? `${user}:` : ""}***@`
  })

/** Connections leaseq opened and has not closed yet (the test suite's leak check reads this). */
const live = new Set<Redis | Cluster>()

/** How many Redis connections leaseq opened and has not closed yet. */
export const liveConnections = (): number => live.size

const isNoScript = (e: unknown): boolean => e instanceof Error && e.message.startsWith("NOSCRIPT")

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

const attachErrorListener = (c: Redis | Cluster, onError?: (e: Error) => void) => {
  c.on("error", (e: Error) => onError?.(e))
}

/** Run a script then WAIT (see {@link RedisClient.scriptThenWait}); on a cluster, on the slot's master, following MOVED. */
const scriptThenWaitOn = async (
  client: Redis | Cluster,
  script: Script,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<string | number>,
  replicas: number,
  timeoutMs: number,
): Promise<WaitedReply> => {
  if (!(client instanceof Cluster)) {
    const r = await evalThenWait(client, script, keys, args, replicas, timeoutMs)
    return { ...r, node: `${client.options.host}:${client.options.port}` }
  }
  for (let attempt = 0; ; attempt++) {
    if (client.status !== "ready" || client.slots.length === 0) await client.call("PING")
    const node = masterFor(client, keys[0] ?? "")
    try {
      if (!node) throw new Error(`CLUSTERDOWN no known master for slot ${keySlot(keys[0] ?? "")}`)
      const r = await evalThenWait(node, script, keys, args, replicas, timeoutMs)
      return { ...r, node: `${node.options.host}:${node.options.port}` }
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e)
      if (!REROUTE.test(message) || attempt >= MAX_REROUTES) throw e
      await refreshSlots(client)
      await new Promise((resolve) => setTimeout(resolve, Math.min(500, 20 * 2 ** attempt)))
    }
  }
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
  return {
    current: () => current,
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
      current = old instanceof Cluster ? old.duplicate() : old.duplicate()
      attachErrorListener(current, onError)
      track(current)
      live.delete(old)
      old.disconnect()
      // a silent peer never answers the FIN that disconnect sends: destroy the socket now
      if (!(old instanceof Cluster)) (old.stream as { destroy?: () => void } | undefined)?.destroy?.()
    },
  }
}

/** True when a command sent now on `client` is written at once (see {@link RedisClient.writable}). */
const isWritable = (client: Redis | Cluster): boolean =>
  client instanceof Cluster
    ? client.status === "ready"
    : client.status === "ready" && (client.stream as { writable?: boolean } | undefined)?.writable === true

const wrap = (
  initial: Redis | Cluster,
  owned: boolean,
  describe: string,
  onError?: (e: Error) => void,
): RedisClient => {
  const slot = connectionSlot(initial, owned, onError)
  const writable = () => isWritable(slot.current())
  const self: RedisClient = {
    isCluster: initial instanceof Cluster,
    describe,
    lastError: slot.lastError,
    status: () => slot.current().status,
    writable,
    whenWritable: (timeoutMs) => whenWritable(slot.current(), writable, timeoutMs),
    commandWithin: (name, args, deadlineMs) => {
      const client = slot.current()
      const wasReady = client.status === "ready"
      return settleBy(client.call(name, ...args), deadlineMs, () => {
        slot.renew()
        const why = wasReady
          ? "the connection went silent (half-open)"
          : `the connection was not ready (${client.status === "end" ? "closed" : "connecting"})`
        return new Error(`no reply to ${name} within ${deadlineMs} ms: ${why}; it was dropped and a new one opened`)
      })
    },
    script: async (script, keys, args) => {
      const client = slot.current()
      try {
        return await client.evalsha(script.sha, keys.length, ...keys, ...args)
      } catch (e) {
        if (!isNoScript(e)) throw e
        return await client.eval(script.source, keys.length, ...keys, ...args)
      }
    },
    command: (name, args) => slot.current().call(name, ...args),
    scriptThenWait: (script, keys, args, replicas, timeoutMs) =>
      scriptThenWaitOn(slot.current(), script, keys, args, replicas, timeoutMs),
    duplicate: () => {
      const client = slot.current()
      const twin: Redis | Cluster = client instanceof Cluster ? client.duplicate() : client.duplicate()
      attachErrorListener(twin, onError)
      return wrap(twin, true, describe, onError)
    },
    masters: async () => {
      const client = slot.current()
      if (!(client instanceof Cluster)) return [self]
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

/**
 * A call bounded by {@link withDeadline} got no answer. `sent: false`: it was never handed
 * to the connection (none was ready in time), so nothing will be written later.
 * `sent: true`: it was written, and no reply came in time or the connection broke after
 * it: it may have run, and ioredis may still write it again after a reconnect.
 */
export class NoAnswer extends Error {
  override readonly name = "NoAnswer"
  readonly command: string
  readonly sent: boolean
  constructor(command: string, sent: boolean, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause })
    this.command = command
    this.sent = sent
  }
}

/** The deadline of {@link withDeadline}: each call gets `timeoutMs`, and none ends after `until` (a `performance.now()` time). */
export interface Deadline {
  readonly timeoutMs: number
  readonly until?: number | undefined
}

/** Redis answered (an error reply), or leaseq's own layer decided: the outcome is known. */
const answered = (e: unknown): boolean => e instanceof Error && (e.name === "ReplyError" || "_tag" in e)

/** A bounded call in flight: its deadline (a `performance.now()` time) and what to do when it passes. */
interface Pending {
  readonly end: number
  readonly expire: () => void
}

/**
 * The deadlines of every bounded call in flight, watched by ONE timer set for the
 * earliest: a call costs a Set insert and delete, not a timer of its own (a producer
 * makes thousands of calls a second, nearly all answered long before their deadline).
 * The timer keeps the process alive only while a call is in flight.
 */
const inFlight = new Set<Pending>()
let timer: NodeJS.Timeout | undefined
let timerAt = Number.POSITIVE_INFINITY

const armFor = (end: number) => {
  if (timer !== undefined && timerAt <= end) return
  if (timer !== undefined) clearTimeout(timer)
  timerAt = end
  timer = setTimeout(onTimer, Math.max(0, end - performance.now()))
}

/**
 * The timer fired: after one more turn of I/O (setImmediate, so a reply that arrived
 * while the process was stalled is read before its deadline is called missed), expire
 * the calls past their deadline and set the timer for the next one.
 */
const onTimer = () => {
  timer = undefined
  timerAt = Number.POSITIVE_INFINITY
  setImmediate(() => {
    const now = performance.now()
    let next = Number.POSITIVE_INFINITY
    for (const p of inFlight) {
      if (p.end <= now) {
        inFlight.delete(p)
        p.expire()
      } else if (p.end < next) next = p.end
    }
    if (next < Number.POSITIVE_INFINITY) armFor(next)
  })
}

/** Settle as `pending` does, or, if it has not by `end` (a `performance.now()` time), reject with `late()`. */
const settleByEnd = <A>(
  pending: Promise<A>,
  end: number,
  late: () => unknown,
  failed: (e: unknown) => unknown,
): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    const entry: Pending = { end, expire: () => reject(late()) }
    if (inFlight.size === 0) timer?.ref()
    inFlight.add(entry)
    armFor(end)
    const done = (): boolean => {
      if (!inFlight.delete(entry)) return false
      if (inFlight.size === 0) timer?.unref()
      return true
    }
    pending.then(
      (value) => {
        if (done()) resolve(value)
      },
      (e: unknown) => {
        if (done()) reject(failed(e))
      },
    )
  })

/** The deadline of {@link withDeadline}: each call gets `timeoutMs`, and none ends after `until` (a `performance.now()` time). */
export interface Deadline {
  readonly timeoutMs: number
  readonly until?: number | undefined
}

/** Run `send` on `base` once it is writable, bounded by `deadline` (see {@link withDeadline}). */
const bounded = <A>(base: RedisClient, deadline: Deadline, what: string, send: () => Promise<A>): Promise<A> => {
  const now = performance.now()
  const end =
    deadline.until === undefined ? now + deadline.timeoutMs : Math.min(now + deadline.timeoutMs, deadline.until)
  const sent = (): Promise<A> =>
    settleByEnd(
      send(),
      end,
      () => new NoAnswer(what, true, `sent, but no reply came within ${deadline.timeoutMs} ms`),
      (e) => {
        if (answered(e)) return e
        const text = redactText(e instanceof Error ? e.message : String(e))
        return new NoAnswer(what, true, `sent, then the connection failed before a reply came: ${text}`, e)
      },
    )
  // written now, synchronously: the connection is ready
  if (base.writable()) return sent()
  return base.whenWritable(end - performance.now()).then((ready) => {
    if (!(ready && base.writable())) {
      throw new NoAnswer(what, false, `not sent: no connection to Redis was ready within ${deadline.timeoutMs} ms`)
    }
    return sent()
  })
}

/**
 * `base` with every call bounded: a call is written only once the connection is ready
 * (never parked in ioredis' offline queue, to be written after the caller gave up), and
 * rejects with {@link NoAnswer} when it was not written in time (`sent: false`), or was
 * written and no reply came in time or the connection broke after it (`sent: true`).
 */
export const withDeadline = (base: RedisClient, deadline: Deadline): RedisClient => ({
  ...base,
  script: (script, keys, args) =>
    bounded(base, deadline, `${script.name} script`, () => base.script(script, keys, args)),
  command: (name, args) => bounded(base, deadline, name, () => base.command(name, args)),
  scriptThenWait: (script, keys, args, replicas, timeoutMs) =>
    bounded(base, deadline, `${script.name} script`, () =>
      base.scriptThenWait(script, keys, args, replicas, timeoutMs),
    ),
})

/** Options for {@link connect}. */
export interface ConnectOptions {
  /** Called with every connection error (ioredis reconnects by itself). Default: ignore. */
  readonly onError?: (error: Error) => void
  /**
   * ioredis options laid over leaseq's defaults (and over what a URL says) for
   * connections leaseq creates from a URL or from ioredis options. Default: none.
   * The CLI uses it to fail fast: `{ maxRetriesPerRequest: 1, retryStrategy: () => null, connectTimeout: 3000 }`.
   */
  readonly overrides?: RedisOptions
}

/**
 * Make a {@link RedisClient} from a `connection` option.
 * Default: `REDIS_URL`, else `redis://127.0.0.1:6379`.
 * A client passed in is borrowed: leaseq never closes it.
 */
export const connect = (connection: ConnectionOption | undefined, options: ConnectOptions = {}): RedisClient => {
  const { onError, overrides } = options
  if (connection instanceof Redis || connection instanceof Cluster) {
    const describe =
      connection instanceof Cluster ? "a Redis Cluster client" : `${connection.options.host}:${connection.options.port}`
    return wrap(connection, false, describe, onError)
  }
  if (connection === undefined || typeof connection === "string") {
    const url = connection ?? process.env.REDIS_URL ?? "redis://127.0.0.1:6379"
    if (!/^rediss?:\/\//.test(url)) {
      throw new InvalidOptions({
        field: "connection",
        value: redactUrl(url),
        reason: "a URL must start with redis:// or rediss://",
      })
    }
    const client = newRedis(url, { ...DEFAULTS, ...overrides, lazyConnect: false })
    attachErrorListener(client, onError)
    return wrap(client, true, redactUrl(url), onError)
  }
  if (typeof connection === "object" && connection !== null && "cluster" in connection) {
    const nodes = connection.cluster as Array<string | ClusterNode>
    if (!Array.isArray(nodes) || nodes.length === 0) {
      throw new InvalidOptions({ field: "connection.cluster", value: nodes, reason: "give at least one cluster node" })
    }
    const clusterOptions: ClusterOptions = { enableAutoPipelining: false, ...connection.options }
    const client = newCluster(nodes, clusterOptions)
    attachErrorListener(client, onError)
    return wrap(client, true, "a Redis Cluster", onError)
  }
  if (typeof connection === "object" && connection !== null) {
    const client = newRedis(undefined, { ...DEFAULTS, ...(connection as RedisOptions), ...overrides })
    attachErrorListener(client, onError)
    return wrap(client, true, `${client.options.host}:${client.options.port}`, onError)
  }
  throw new InvalidOptions({
    field: "connection",
    value: connection,
    reason: "give a redis:// URL, ioredis options, an ioredis Redis or Cluster, or { cluster: [nodes] }",
  })
}
