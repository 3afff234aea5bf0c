/**
 * Find the queues that live under a key prefix: SCAN for their `meta` keys on
 * every master (one on a standalone server, each shard's master on a cluster).
 * Read-only, and bounded per call by SCAN's COUNT, so it never blocks Redis for long.
 */
import * as Effect from "effect/Effect"
import type { RedisClient } from "../../redis/Client.ts"
import { redisError } from "../calls/Replies.ts"
import { type InvalidOptions, type RedisError, RedisUnavailable } from "../model/Errors.ts"
import { metaPattern, queueFromMetaKey } from "../model/Keys.ts"
import { checkPrefix } from "../model/QueueName.ts"

/** Options of {@link discoverQueues}. */
export interface DiscoverOptions {
  /** SCAN's COUNT hint: keys looked at per SCAN call on each master. Default 1000. */
  readonly count?: number
  /** Called once per master with the number of SCAN calls made so far there (progress). */
  readonly onScan?: (master: string, calls: number, found: number) => void
}

/** Default SCAN COUNT hint. */
export const DEFAULT_SCAN_COUNT = 1000

/** Parse a SCAN reply `[cursor, [key, …]]`. */
const scanReply = (reply: unknown): { readonly cursor: string; readonly keys: ReadonlyArray<string> } => {
  if (!Array.isArray(reply) || reply.length !== 2 || !Array.isArray(reply[1])) {
    throw new Error(`unexpected SCAN reply: ${JSON.stringify(reply)?.slice(0, 200)}`)
  }
  return { cursor: String(reply[0]), keys: (reply[1] as ReadonlyArray<unknown>).map(String) }
}

/** SCAN one master to the end and add the queue names it holds to `into`. */
const scanMaster = (
  master: RedisClient,
  prefix: string,
  count: number,
  into: Set<string>,
  onScan: DiscoverOptions["onScan"],
): Effect.Effect<void, RedisError> =>
  Effect.gen(function* () {
    const pattern = metaPattern(prefix)
    let cursor = "0"
    let calls = 0
    do {
      const reply = yield* Effect.tryPromise({
        try: () => master.command("SCAN", [cursor, "MATCH", pattern, "COUNT", count]),
        catch: (e) => redisError(`SCAN on ${master.describe}`, e, master.describe, master.lastError?.()),
      })
      const page = yield* Effect.try({ try: () => scanReply(reply), catch: (e) => redisError("SCAN", e) })
      for (const key of page.keys) {
        const queue = queueFromMetaKey(prefix, key)
        if (queue !== undefined) into.add(queue)
      }
      cursor = page.cursor
      calls++
      onScan?.(master.describe, calls, into.size)
    } while (cursor !== "0")
  })

/**
 * The names of every queue under `prefix`, sorted, each once. A queue is found by
 * its `meta` key, which the first `add` creates; on a cluster every master is scanned
 * (replicas hold the same keys and are skipped).
 */
export const discoverQueues = (
  client: RedisClient,
  prefix: string,
  options: DiscoverOptions = {},
): Effect.Effect<ReadonlyArray<string>, RedisError | InvalidOptions> =>
  Effect.gen(function* () {
    yield* Effect.fromResult(checkPrefix(prefix))
    const count = options.count ?? DEFAULT_SCAN_COUNT
    if (client.isCluster) {
      // A cluster client knows its masters only once it has loaded the slot map.
      yield* Effect.tryPromise({ try: () => client.command("PING", []), catch: (e) => redisError("PING", e) })
    }
    const masters = yield* Effect.tryPromise({
      try: () => client.masters(),
      catch: (e) => redisError("CLUSTER NODES", e, client.describe, client.lastError?.()),
    })
    if (masters.length === 0) {
      return yield* Effect.fail(new RedisUnavailable({ reason: `no master known for ${client.describe}` }))
    }
    const found = new Set<string>()
    for (const master of masters) yield* scanMaster(master, prefix, count, found, options.onScan)
    return [...found].sort()
  })
