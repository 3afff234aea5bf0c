/**
 * The CLI's connection to Redis: fail fast and clearly (one try, a 3 s connect
 * timeout, no reconnect loop), find out whether the server is a cluster, close
 * everything on the way out; and the per-queue steps every command shares.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { discoverQueues } from "../engine/admin/Discovery.ts"
import { type Commands, makeCommands } from "../engine/calls/Commands.ts"
import { redisError } from "../engine/calls/Replies.ts"
import { queueKeys } from "../engine/model/Keys.ts"
import { parsePartitionName } from "../engine/model/QueueName.ts"
import type { QueueApi } from "../engine/queue/QueueApi.ts"
import { connect, type RedisClient, redactUrl } from "../redis/Client.ts"
import { CliFailure, ExitCode, type Progress, plural, toFailure } from "./Output.ts"

/** How long the CLI waits for a TCP/TLS connection before giving up. */
export const CONNECT_TIMEOUT_MS = 3_000

/** ioredis options for a CLI run: one try per command, no reconnects, a short connect timeout. */
export const cliOverrides = {
  maxRetriesPerRequest: 1,
  retryStrategy: () => null,
  connectTimeout: CONNECT_TIMEOUT_MS,
} as const

interface Opened {
  readonly client: RedisClient
  readonly lastError: () => Error | undefined
}

/** Open a client in the current scope; it is closed when the scope closes. */
const acquire = (make: (onError: (e: Error) => void) => RedisClient): Effect.Effect<Opened, CliFailure, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: (): Opened => {
        let last: Error | undefined
        const client = make((e) => {
          last = e
        })
        return { client, lastError: () => last }
      },
      catch: (e) => toFailure(e),
    }),
    ({ client }) => Effect.promise(() => client.close()),
  )

/** Send one command; a failure becomes "cannot reach Redis at <url>: <why>" (exit 1). */
const probe = (opened: Opened, name: string, args: ReadonlyArray<string | number>) =>
  Effect.tryPromise({
    try: () => opened.client.command(name, args),
    catch: (e) => {
      const cause = opened.lastError() ?? e
      const why = cause instanceof Error ? cause.message : String(cause)
      return new CliFailure({
        exitCode: ExitCode.redis,
        reason: `cannot reach Redis at ${opened.client.describe}: ${why}`,
      })
    },
  })

/**
 * Cluster connection options for a node URL. `failFast` (the default, for one-shot
 * commands): no retries, a short timeout. Without it (a long-running exporter), ioredis'
 * own reconnects and slot refreshes.
 */
export const clusterStartup = (url: string, failFast = true) => {
  const u = new URL(url)
  const decode = (s: string) => (s === "" ? undefined : decodeURIComponent(s))
  const auth = {
    username: decode(u.username),
    password: decode(u.password),
    ...(u.protocol === "rediss:" ? { tls: {} } : {}),
  }
  const node = { host: u.hostname.replace(/^\[|\]$/g, ""), port: u.port === "" ? 6379 : Number(u.port) }
  if (!failFast) return { cluster: [node], options: { redisOptions: auth } }
  return {
    cluster: [node],
    options: {
      enableAutoPipelining: true,
      clusterRetryStrategy: () => null,
      slotsRefreshTimeout: CONNECT_TIMEOUT_MS,
      redisOptions: { ...auth, connectTimeout: CONNECT_TIMEOUT_MS, maxRetriesPerRequest: 1 },
    },
  }
}

/**
 * Connect to `url` for the length of the current scope. PINGs first, so an
 * unreachable server fails here (exit 1) with a redacted one-line reason. When the
 * server is a cluster node (`INFO cluster` says `cluster_enabled:1`), reconnects as a
 * cluster client so scripts reach every slot and discovery sees every master.
 */
export const connectCli = (url: string): Effect.Effect<RedisClient, CliFailure, Scope.Scope> =>
  Effect.gen(function* () {
    const single = yield* acquire((onError) => connect(url, { onError, overrides: cliOverrides }))
    yield* probe(single, "PING", [])
    const info = yield* Effect.tryPromise(() => single.client.command("INFO", ["cluster"])).pipe(
      // A user without INFO rights (ACL) gets the standalone client.
      Effect.orElseSucceed(() => ""),
    )
    if (!/cluster_enabled:1/.test(String(info))) return single.client
    yield* Effect.promise(() => single.client.close())
    const cluster = yield* acquire((onError) => {
      const client = connect(clusterStartup(url), { onError })
      return { ...client, describe: `the Redis Cluster at ${redactUrl(url)}` }
    })
    yield* probe(cluster, "PING", [])
    return cluster.client
  })

/** Run `use` with a connected client, closing it afterwards whatever happens. */
export const withRedis = <A, E>(
  url: string,
  use: (client: RedisClient) => Effect.Effect<A, E>,
): Effect.Effect<A, E | CliFailure> => Effect.scoped(Effect.flatMap(connectCli(url), use))

/**
 * The queues a command works on: those named by `--queue`, else every queue found
 * under the prefix on every master.
 */
export const targetQueues = (
  client: RedisClient,
  prefix: string,
  named: ReadonlyArray<string> | undefined,
  progress?: Progress,
): Effect.Effect<ReadonlyArray<string>, CliFailure> => {
  const discovered = discoverQueues(client, prefix, {
    onScan: (master, calls, found) =>
      progress?.update(`scanning ${master} for queues under ${prefix}: ${found} found (${plural(calls, "SCAN call")})`),
  }).pipe(Effect.mapError((e) => toFailure(e, `finding queues under prefix ${prefix}`)))
  if (named === undefined || named.length === 0) return discovered
  return Effect.gen(function* () {
    // a named queue that exists is used as is; only a name with no queue behind it is
    // looked up (one SCAN) as a partitioned queue, standing for <name>~0, <name>~1, …
    // (TYPE, which the documented ACL already grants for `open`, tells whether meta exists)
    const exists = yield* Effect.forEach(named, (name) =>
      Effect.tryPromise({
        try: () => client.command("TYPE", [queueKeys(name, prefix).meta]),
        catch: (e) => toFailure(redisError(`TYPE on ${client.describe}`, e), `looking up queue ${name}`),
      }).pipe(Effect.map((type) => String(type) !== "none")),
    )
    if (exists.every(Boolean)) return named
    const all = yield* discovered
    return named.flatMap((name, i) => {
      if (exists[i]) return [name]
      const partitions = all.filter((q) => parsePartitionName(q)?.queue === name)
      return partitions.length > 0 ? partitions : [name]
    })
  })
}

/**
 * The commands of one queue, after `open` has checked its key types and layout
 * (WrongKeyType / LayoutMismatch fail here, before any other script runs).
 */
export const openQueue = (client: RedisClient, prefix: string, queue: string) =>
  Effect.gen(function* () {
    const keys = yield* Effect.try({ try: () => queueKeys(queue, prefix), catch: (e) => toFailure(e) })
    const commands: Commands = makeCommands(client, keys)
    yield* commands.open
    return commands
  })

/**
 * The queue `--queue` names, as the library's queue ({@link QueueApi}): the queue itself,
 * or, when no queue has that name, the partitioned queue whose partitions `<name>~0`,
 * `<name>~1`, … are found (as `stats` and `sweep` find them; a partition never written
 * to reads as empty). Each queue found is opened first (key types and layout checked).
 * `partitions` names the partitions found, and is empty for a plain queue.
 */
export const openQueueApi = (client: RedisClient, prefix: string, queue: string) =>
  Effect.gen(function* () {
    const names = yield* targetQueues(client, prefix, [queue])
    yield* Effect.forEach(names, (q) => openQueue(client, prefix, q), { discard: true })
    // the library's queue is imported here: sweep, stats, verify and workers need only openQueue
    const [{ makeQueueCore, resolveQueueOptions }, { makePartitionedCore }] = yield* Effect.promise(() =>
      Promise.all([import("../engine/queue/QueueCore.ts"), import("../engine/partition/Producer.ts")]),
    )
    const settings = yield* Effect.try({ try: () => resolveQueueOptions({ prefix }), catch: (e) => toFailure(e) })
    const partitions = names.length === 1 && names[0] === queue ? [] : names
    const count = Math.max(...partitions.map((p) => (parsePartitionName(p)?.index ?? 0) + 1))
    const api: QueueApi =
      partitions.length === 0
        ? makeQueueCore(client, queue, settings)
        : makePartitionedCore(client, queue, settings, count)
    return { api, partitions }
  })
