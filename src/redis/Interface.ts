/**
 * The interface the engine programs against: {@link RedisClient}. Its implementation is
 * in Connection.ts (made by `connect` in Client.ts); the engine imports it from Client.ts.
 */
import type { Script } from "./Script.ts"

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
  /**
   * Take the connection for silent (half-open: a call sent on it while it was ready got no
   * reply in time): a new one is opened in its place and this one torn down at once (what
   * was pending on it fails). Answers false, doing nothing, for a borrowed client.
   */
  readonly replaceSilent?: () => boolean
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
