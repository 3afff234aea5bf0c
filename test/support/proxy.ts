/**
 * A TCP proxy between a test's clients and Redis, to cut, freeze, hold or drop what
 * passes: the network faults of the reliability suite, usable by any test.
 */
import { createServer, connect as netConnect, type Server, type Socket } from "node:net"
import { onCleanup, onCleanupFirst } from "./cleanup.ts"
import { redisUrl } from "./redis.ts"

/**
 * A TCP proxy on 127.0.0.1 in front of one Redis. `cut()` destroys every open
 * connection and refuses new ones (accepted sockets are destroyed at once) until
 * `heal()`; nothing is forwarded while cut. `dropReplies()` lets requests through but
 * swallows the answers (a reply lost on the way back). `freeze()` keeps connections
 * open but forwards nothing on them, either way (a half-open connection: a dropped NAT
 * entry, a hung middlebox). `hold()` keeps the requests back (a stalled path) and
 * `flush()` delivers them late, then the end of a connection its client closed meanwhile:
 * Redis runs what a closed client had sent, as it does for bytes that arrive late.
 */
export class TcpProxy {
  readonly #server: Server
  readonly #sockets = new Set<Socket>()
  /** Each proxied connection: its two sockets, and whether it is frozen (for good). */
  readonly #pairs = new Set<{ readonly client: Socket; readonly upstream: Socket; frozen: boolean }>()
  /** Requests held back by {@link hold}, per connection, and whether its client closed meanwhile. */
  readonly #held = new Map<Socket, { readonly chunks: Buffer[]; closed: boolean }>()
  #holding = false
  #frozen = false
  #cut = false
  #dropReplies = false
  /** Reply chunks still to let through before dropping ({@link dropReplies}'s `after`). */
  #passReplies = 0
  port = 0
  /** Replies swallowed so far by {@link dropReplies} (chunks): a test waits on it to know a call reached Redis. */
  droppedReplies = 0
  readonly target: { readonly host: string; readonly port: number }

  private constructor(target: { readonly host: string; readonly port: number }) {
    this.target = target
    this.#server = createServer((client) => {
      if (this.#cut) {
        client.destroy()
        return
      }
      const upstream = netConnect(target.port, target.host)
      const pair = { client, upstream, frozen: this.#frozen }
      this.#pairs.add(pair)
      client.on("close", () => this.#pairs.delete(pair))
      for (const s of [client, upstream]) {
        this.#sockets.add(s)
        s.on("close", () => this.#sockets.delete(s))
        s.on("error", () => {})
      }
      client.on("close", () => {
        const held = this.#held.get(upstream)
        if (held === undefined) upstream.destroy()
        else held.closed = true
      })
      upstream.on("close", () => client.destroy())
      client.on("data", (d: Buffer) => {
        if (pair.frozen) return
        if (!this.#holding) return void upstream.write(d)
        const held = this.#held.get(upstream) ?? { chunks: [], closed: false }
        held.chunks.push(d)
        this.#held.set(upstream, held)
      })
      upstream.on("data", (d: Buffer) => {
        if (this.#passReplies > 0 && --this.#passReplies === 0) {
          client.write(d)
          this.#dropReplies = true
          return
        }
        if (!this.#dropReplies && !pair.frozen) client.write(d)
        else if (this.#dropReplies) this.droppedReplies++
      })
    })
  }

  /** Start a proxy to `target` on a free port. */
  static async start(target: { readonly host: string; readonly port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target)
    await new Promise<void>((r) => proxy.#server.listen(0, "127.0.0.1", r))
    const address = proxy.#server.address()
    proxy.port = typeof address === "object" && address !== null ? address.port : 0
    // the test is over: what it made behind the proxy closes through it, not against a cut
    onCleanupFirst(() => proxy.heal())
    return proxy
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  /** Connections open through the proxy right now. */
  get connections(): number {
    return this.#sockets.size / 2
  }

  /** Stop forwarding: destroy every connection and refuse new ones. */
  cut(): void {
    this.#cut = true
    this.#dropReplies = false
    this.#passReplies = 0
    for (const s of this.#sockets) s.destroy()
  }

  /** Forward again (both ways) on new connections; frozen ones stay frozen. */
  heal(): void {
    this.#cut = false
    this.#dropReplies = false
    this.#frozen = false
  }

  /**
   * The local ports of the proxy's connections to Redis: what Redis shows as each
   * client's `addr` in `CLIENT LIST`, so a test can tell which connection is which.
   */
  upstreamPorts(): number[] {
    return [...this.#pairs].map((p) => p.upstream.localPort).filter((port): port is number => port !== undefined)
  }

  /**
   * Go silent without closing: the connections whose upstream local port is in
   * `upstreamPorts` (every open one when omitted) forward nothing more, either way,
   * for good, yet stay open. Without `upstreamPorts`, connections accepted from now on
   * are frozen too, until {@link heal}.
   */
  freeze(upstreamPorts?: ReadonlyArray<number>): void {
    if (upstreamPorts === undefined) this.#frozen = true
    for (const p of this.#pairs) {
      if (upstreamPorts === undefined || upstreamPorts.includes(p.upstream.localPort ?? -1)) p.frozen = true
    }
  }

  /** Keep every request back from Redis (a stalled path), until {@link flush}. */
  hold(): void {
    this.#holding = true
  }

  /** The requests held back so far, as text (to wait until a call was sent). */
  heldText(): string {
    return [...this.#held.values()].map((h) => Buffer.concat(h.chunks).toString("latin1")).join("")
  }

  /**
   * Deliver the requests held back, in order, and end each connection whose client closed
   * meanwhile once its requests are written (Redis runs them, then sees the end).
   */
  flush(): void {
    this.#holding = false
    for (const [upstream, held] of this.#held) {
      for (const chunk of held.chunks) upstream.write(chunk)
      if (held.closed) upstream.end()
    }
    this.#held.clear()
  }

  /**
   * Keep forwarding requests to Redis but drop its replies (until {@link cut} or {@link heal}),
   * after letting `after` more reply chunks through (default 0: drop from now; a small reply
   * is one chunk, so a client making one call at a time is cut after its `after + 1`-th call).
   */
  dropReplies(after = 0): void {
    if (after <= 0) this.#dropReplies = true
    else this.#passReplies = after
  }

  async close(): Promise<void> {
    this.cut()
    await new Promise<void>((r) => this.#server.close(() => r()))
  }
}

/** A {@link TcpProxy} in front of the suite's Redis, closed after the test (registered with onCleanup). */
export const proxyToSuiteRedis = async (): Promise<TcpProxy> => {
  const target = new URL(redisUrl())
  const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 6379) })
  onCleanup(() => proxy.close())
  return proxy
}
