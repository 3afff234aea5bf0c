/**
 * The Redis client the engine sees, {@link RedisClient} (run a script, send a command,
 * make a blocking twin, close), and {@link connect}, which makes one from a
 * `connection` option. Only `src/redis/` imports ioredis: `Interface.ts` (the
 * interface), `Connection.ts` (the connection behind a client), `Eval.ts` (running
 * scripts, WAIT), `Deadline.ts` (bounded calls), `Redact.ts` (no password in any
 * message), `Url.ts` (a URL checked before ioredis sees it).
 */
import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from "ioredis"
import { ioredis } from "./Ioredis.ts"

/**
 * ioredis' constructors with the options leaseq merged. ioredis' option types do not
 * check under `exactOptionalPropertyTypes` (its own RedisOptions and ClusterOptions do
 * not fit its constructors' overloads), so the options go through `never` here, once.
 */
const newRedis = (url: string | undefined, options: RedisOptions): Redis =>
  url === undefined ? new (ioredis().Redis)(options as never) : new (ioredis().Redis)(url, options as never)
const newCluster = (nodes: Array<string | ClusterNode>, options: ClusterOptions): Cluster =>
  new (ioredis().Cluster)(nodes, options as never)

import { attachErrorListener, wrap } from "./Connection.ts"
import { InvalidOptions } from "./Errors.ts"
import type { RedisClient } from "./Interface.ts"
import { redactText, redactUrl } from "./Redact.ts"
import { DEFAULT_REDIS_URL, redisUrlProblem } from "./Url.ts"

export { liveConnections } from "./Connection.ts"
export { type Deadline, NoAnswer, withDeadline } from "./Deadline.ts"
export type { RedisClient, WaitedReply } from "./Interface.ts"
export { redactText, redactUrl } from "./Redact.ts"
export { redisUrlProblem } from "./Url.ts"

/** What `connection` accepts: a URL, ioredis options, an ioredis client or cluster, or cluster nodes. */
export type ConnectionOption =
  | string
  | RedisOptions
  | Redis
  | Cluster
  | { readonly cluster: ReadonlyArray<string | ClusterNode>; readonly options?: ClusterOptions }

export { DEFAULT_REDIS_URL } from "./Url.ts"

/** Defaults applied to connections leaseq creates itself. */
const DEFAULTS: RedisOptions = {
  // leaseq batches explicitly (Batcher); ioredis auto-pipelining would hold each command
  // for a tick and keep only one pipeline in flight, which costs a round trip per job
  enableAutoPipelining: false,
  maxRetriesPerRequest: 20,
  connectTimeout: 5_000,
}

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

/** A connection leaseq creates from a redis:// or rediss:// URL. */
const connectUrl = (url: string, options: ConnectOptions, field: string): RedisClient => {
  const refuse = (reason: string) => new InvalidOptions({ field, value: redactUrl(url), reason })
  const problem = redisUrlProblem(url)
  if (problem !== undefined) throw refuse(problem)
  let client: Redis
  try {
    client = newRedis(url, { ...DEFAULTS, ...options.overrides, lazyConnect: false })
  } catch (e) {
    // ioredis' own errors (a TypeError whose `input` is the URL) never reach the caller
    throw refuse(`ioredis refused it: ${redactText(e instanceof Error ? e.message : String(e))}`)
  }
  attachErrorListener(client, options.onError)
  return wrap(client, true, redactUrl(url), options.onError)
}

/** A Cluster client leaseq creates from `{ cluster: [nodes], options }`. */
const connectCluster = (
  connection: { readonly cluster: unknown; readonly options?: ClusterOptions | undefined },
  options: ConnectOptions,
): RedisClient => {
  const nodes = connection.cluster as Array<string | ClusterNode>
  if (!Array.isArray(nodes) || nodes.length === 0) {
    throw new InvalidOptions({ field: "connection.cluster", value: nodes, reason: "give at least one cluster node" })
  }
  const clusterOptions: ClusterOptions = { enableAutoPipelining: false, ...connection.options }
  const client = newCluster(nodes, clusterOptions)
  attachErrorListener(client, options.onError)
  return wrap(client, true, "a Redis Cluster", options.onError)
}

/** A connection leaseq creates from ioredis options. */
const connectWithOptions = (redisOptions: RedisOptions, options: ConnectOptions): RedisClient => {
  const client = newRedis(undefined, { ...DEFAULTS, ...redisOptions, ...options.overrides })
  attachErrorListener(client, options.onError)
  return wrap(client, true, `${client.options.host}:${client.options.port}`, options.onError)
}

/**
 * Make a {@link RedisClient} from a `connection` option.
 * Default: `REDIS_URL`, else `redis://127.0.0.1:6379`.
 * A client passed in is borrowed: leaseq never closes it.
 */
export const connect = (connection: ConnectionOption | undefined, options: ConnectOptions = {}): RedisClient => {
  if (connection instanceof ioredis().Redis || connection instanceof ioredis().Cluster) {
    const describe =
      connection instanceof ioredis().Cluster
        ? "a Redis Cluster client"
        : `${connection.options.host}:${connection.options.port}`
    return wrap(connection, false, describe, options.onError)
  }
  if (connection === undefined || typeof connection === "string") {
    const fromEnv = connection === undefined && process.env.REDIS_URL !== undefined
    const url = connection ?? process.env.REDIS_URL ?? DEFAULT_REDIS_URL
    return connectUrl(url, options, fromEnv ? "connection (from REDIS_URL)" : "connection")
  }
  if (typeof connection === "object" && connection !== null && "cluster" in connection) {
    return connectCluster(connection, options)
  }
  if (typeof connection === "object" && connection !== null)
    return connectWithOptions(connection as RedisOptions, options)
  throw new InvalidOptions({
    field: "connection",
    value: connection,
    reason: "give a redis:// URL, ioredis options, an ioredis Redis or Cluster, or { cluster: [nodes] }",
  })
}
