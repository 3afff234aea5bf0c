/**
 * leaseq needs Redis never to evict its keys. Under an `allkeys-*` `maxmemory-policy`, a
 * full Redis deletes any key to make room — a queue's `wait` list or its payload hash can
 * vanish, and the jobs in them with it, without an error anywhere. The `volatile-*`
 * policies evict only keys that have a TTL; leaseq sets none, so for leaseq's keys such a
 * server behaves like `noeviction` (a full Redis refuses writes): no warning then.
 *
 * So, on first use, each client leaseq uses (a queue's, a worker's) reads `INFO memory`
 * (from every master of a cluster) and, if the policy may evict leaseq's keys (any policy
 * but `noeviction` and `volatile-*`), emits one process warning: `process.emitWarning(message, { type: "LeaseqWarning", code:
 * "LEASEQ_EVICTION_POLICY" })`. Nothing is refused: the warning names the server, the
 * policy and what to set. When `INFO` is not allowed (an ACL without `+info`) or fails,
 * the check is skipped silently. It runs at most once per client.
 */
import * as Effect from "effect/Effect"
import type { RedisClient } from "../../redis/Client.ts"

/** How to recognise leaseq's eviction-policy warning in a `process.on("warning")` listener. */
export const EvictionPolicyWarning = {
  /** `warning.name` */
  type: "LeaseqWarning",
  /** `warning.code` */
  code: "LEASEQ_EVICTION_POLICY",
} as const

/** One server whose policy may evict keys. */
export interface EvictingServer {
  readonly node: string
  readonly policy: string
}

/**
 * True when `policy` may evict keys without a TTL, such as leaseq's: every policy but
 * `noeviction` and the `volatile-*` ones (`volatile-lru`, `volatile-lfu`, `volatile-random`,
 * `volatile-ttl`), which only evict keys that have a TTL.
 */
export const evictsLeaseqKeys = (policy: string): boolean => policy !== "noeviction" && !policy.startsWith("volatile-")

/** The servers behind `client` whose `maxmemory-policy` may evict leaseq's keys (reads `INFO memory`). */
export const evictingServers = async (client: RedisClient): Promise<ReadonlyArray<EvictingServer>> => {
  const found: EvictingServer[] = []
  for (const node of await client.masters()) {
    const info = String(await node.command("INFO", ["memory"]))
    const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1]
    if (policy !== undefined && evictsLeaseqKeys(policy)) found.push({ node: node.describe, policy })
  }
  return found
}

/** The warning's text for `servers`. */
export const evictionMessage = (servers: ReadonlyArray<EvictingServer>): string => {
  const where = servers.map((s) => `${s.node} has maxmemory-policy ${s.policy}`).join("; ")
  return `Redis ${where}: when memory is full, Redis may evict leaseq's keys and the jobs in them are lost without an error. Set maxmemory-policy noeviction (CONFIG SET maxmemory-policy noeviction, and in redis.conf); a full Redis then refuses new writes instead.`
}

const checked = new WeakSet<RedisClient>()
const CHECK_TIMEOUT_MS = 2_000

/**
 * Warn once per client when its Redis may evict keys (see the module doc). Never fails,
 * never waits more than 2 s.
 */
export const warnIfEvicting = (client: RedisClient): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (checked.has(client)) return Effect.void
    checked.add(client)
    return Effect.promise(async () => {
      try {
        const servers = await evictingServers(client)
        if (servers.length > 0) {
          process.emitWarning(evictionMessage(servers), {
            type: EvictionPolicyWarning.type,
            code: EvictionPolicyWarning.code,
          })
        }
      } catch {
        // INFO denied by an ACL (NOPERM), or Redis gone again: skip silently
      }
    }).pipe(Effect.timeoutOption(CHECK_TIMEOUT_MS), Effect.asVoid)
  })
