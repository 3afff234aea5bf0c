/**
 * A real local Redis Cluster for tests, started from the redis-server binary on PATH:
 * N masters (and optionally one replica each), `cluster-enabled yes`, each node on free
 * loopback ports (client and bus) in its own temp dir, joined with cluster commands as
 * `redis-cli --cluster create` would join them, without its process and its fixed waits
 * (`join`). Ready when every node says
 * `cluster_state:ok` and every master has its replicas online (polled; no fixed sleeps).
 */
import { spawnSync } from "node:child_process"
import { Redis } from "ioredis"
import { freePort, type LocalRedis, startRedisServer } from "../../src/testing/RedisServer.ts"

/** One master as `CLUSTER NODES` describes it. */
export interface MasterInfo {
  readonly id: string
  readonly port: number
  readonly slots: ReadonlyArray<readonly [number, number]>
  /** Ports of its replicas. */
  readonly replicas: ReadonlyArray<number>
}

/** A running local cluster. */
export interface LocalCluster {
  readonly nodes: ReadonlyArray<LocalRedis>
  /** Startup nodes, for `connection: { cluster: startup }`. */
  readonly startup: ReadonlyArray<{ readonly host: string; readonly port: number }>
  /** A raw client to one node (not counted by the leak check; closed by `stop`). */
  readonly raw: (port: number) => Redis
  /** The masters and their slots and replicas, as the node at `port` (default: the first) sees them. */
  readonly masters: (port?: number) => Promise<ReadonlyArray<MasterInfo>>
  /** The port of the master serving `slot`. */
  readonly masterOfSlot: (slot: number) => Promise<number>
  /** Poll until every node reports `cluster_state:ok` and agrees on the masters, and replicas are online. */
  readonly waitHealthy: () => Promise<void>
  /**
   * Fail over `masterPort` to its replica with `CLUSTER FAILOVER [mode]` sent to the replica;
   * resolves (with the new master's port) once every node agrees and the cluster is ok.
   */
  readonly failover: (masterPort: number, mode?: "" | "FORCE" | "TAKEOVER") => Promise<number>
  readonly stop: () => Promise<void>
}

/** Options of {@link startCluster}. */
export interface ClusterOptions {
  /** Masters. Default 3. */
  readonly masters?: number
  /** Replicas per master. Default 0. */
  readonly replicas?: number
  /** Give up waiting for a healthy cluster after this many ms. Default 30 000. */
  readonly timeoutMs?: number
}

/** True when `redis-cli` can be run (the cluster files skip without redis-tools beside redis-server). */
export const hasRedisCli = (): boolean => spawnSync("redis-cli", ["--version"], { stdio: "ignore" }).status === 0

/** The slot ranges of `masters` masters, split as `redis-cli --cluster create` splits them. */
export const slotRanges = (masters: number): Array<readonly [number, number]> => {
  const per = 16384 / masters
  const out: Array<readonly [number, number]> = []
  let first = 0
  for (let i = 0; i < masters; i++) {
    const last = i === masters - 1 ? 16383 : Math.max(first, Math.min(16383, Math.round(per * (i + 1) - 1)))
    out.push([first, last])
    first = last + 1
  }
  return out
}

/** Free ports, all different. */
const ports = async (n: number): Promise<number[]> => {
  const out = new Set<number>()
  while (out.size < n) out.add(await freePort())
  return [...out]
}

/** Parse `CLUSTER NODES` into masters with their slots and replicas. */
export const parseNodes = (text: string): MasterInfo[] => {
  const rows = text
    .trim()
    .split("\n")
    .map((line) => line.split(" "))
  const portOf = (addr: string) => Number(addr.split("@")[0]!.split(":").pop())
  const live = rows.filter((r) => !r[2]!.includes("fail") && !r[2]!.includes("noaddr"))
  return live
    .filter((r) => r[2]!.includes("master"))
    .map((r) => ({
      id: r[0]!,
      port: portOf(r[1]!),
      slots: r
        .slice(8)
        .filter((s) => !s.startsWith("["))
        .map((s) => {
          const [a, b] = s.split("-").map(Number)
          return [a!, b ?? a!] as const
        }),
      replicas: live.filter((x) => x[2]!.includes("slave") && x[3] === r[0]).map((x) => portOf(x[1]!)),
    }))
}

const poll = async (what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> => {
  const until = Date.now() + timeoutMs
  while (!(await check().catch(() => false))) {
    if (Date.now() > until) throw new Error(`local cluster: timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/**
 * Join fresh nodes into a cluster: the first `masterCount` are masters (a config epoch each,
 * so none has to be resolved, and the slots split in order), the rest replicas, one round of
 * them per master. What `redis-cli --cluster create … --cluster-yes` does, without its
 * process and its one-second waits; `waitHealthy` then waits for every node to agree (a
 * master says `cluster_state:ok` no sooner than 2 s after it started: Redis's own delay).
 */
const join = async (
  nodes: ReadonlyArray<LocalRedis>,
  busPorts: ReadonlyArray<number>,
  masterCount: number,
  raw: (port: number) => Redis,
  timeoutMs: number,
): Promise<void> => {
  const ids = await Promise.all(nodes.map(async (n) => String(await raw(n.port).call("CLUSTER", "MYID"))))
  const ranges = slotRanges(masterCount)
  await Promise.all(
    nodes.slice(0, masterCount).map(async (n, i) => {
      await raw(n.port).call("CLUSTER", "SET-CONFIG-EPOCH", String(i + 1))
      await raw(n.port).call("CLUSTER", "ADDSLOTSRANGE", String(ranges[i]![0]), String(ranges[i]![1]))
    }),
  )
  // each node meets every node before it: each pair shakes hands at once (their slots and
  // ids with it), instead of learning of the others from the gossip of one
  await Promise.all(
    nodes.flatMap((n, i) =>
      nodes
        .slice(0, i)
        .map((m, j) => raw(n.port).call("CLUSTER", "MEET", "127.0.0.1", String(m.port), String(busPorts[j]!))),
    ),
  )
  await Promise.all(
    nodes.slice(masterCount).map(async (n, i) => {
      const master = ids[i % masterCount]!
      // a replica can follow its master once the gossip has told it of the master
      await poll(`node ${n.port} to learn of master ${master}`, timeoutMs, async () =>
        String(await raw(n.port).call("CLUSTER", "NODES")).includes(master),
      )
      await raw(n.port).call("CLUSTER", "REPLICATE", master)
    }),
  )
}

/** Start a local cluster. Stop it with `stop()` (in `afterAll`). */
export const startCluster = async (options: ClusterOptions = {}): Promise<LocalCluster> => {
  const masterCount = options.masters ?? 3
  const replicas = options.replicas ?? 0
  const timeoutMs = options.timeoutMs ?? 30_000
  const total = masterCount * (1 + replicas)
  const free = await ports(total * 2)
  const nodes: LocalRedis[] = []
  const clients = new Map<number, Redis>()
  const raw = (port: number): Redis => {
    let c = clients.get(port)
    if (!c) {
      c = new Redis(port, "127.0.0.1", { maxRetriesPerRequest: 1, lazyConnect: false })
      c.on("error", () => {})
      clients.set(port, c)
    }
    return c
  }
  const stop = async () => {
    for (const c of clients.values()) c.disconnect()
    await Promise.all(nodes.map((n) => n.stop()))
  }
  try {
    const started = await Promise.all(
      Array.from({ length: total }, (_, i) =>
        startRedisServer({
          port: free[i]!,
          args: [
            ...["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"],
            ...[
              "--cluster-port",
              String(free[total + i]!),
              "--cluster-node-timeout",
              "3000",
              "--repl-diskless-sync-delay",
              "0",
            ],
          ],
        }),
      ),
    )
    nodes.push(...started)
    await join(nodes, free.slice(total), masterCount, raw, timeoutMs)
  } catch (e) {
    await stop()
    throw e
  }

  const masters = async (port = nodes[0]!.port) => parseNodes(String(await raw(port).call("CLUSTER", "NODES")))
  const masterOfSlot = async (slot: number) => {
    const m = (await masters()).find((x) => x.slots.some(([a, b]) => slot >= a && slot <= b))
    if (!m) throw new Error(`no master serves slot ${slot}`)
    return m.port
  }
  /** What node `port` says serves which slots; undefined while it is not ok or lacks a master or replica. */
  const viewOf = async (port: number): Promise<string | undefined> => {
    const info = String(await raw(port).call("CLUSTER", "INFO"))
    if (!info.includes("cluster_state:ok") || !info.includes("cluster_slots_ok:16384")) return undefined
    const serving = (await masters(port)).filter((m) => m.slots.length > 0)
    if (serving.length !== masterCount || serving.some((m) => m.replicas.length < replicas)) return undefined
    return JSON.stringify(serving.map((m) => [m.port, m.slots] as const).sort((x, y) => x[0] - y[0]))
  }
  /** Every master serving slots has `replicas` replicas online. */
  const replicasOnline = async () => {
    for (const m of await masters()) {
      if (m.slots.length === 0) continue
      const repl = String(await raw(m.port).call("INFO", "replication"))
      if ((repl.match(/state=online/g) ?? []).length < replicas) return false
    }
    return true
  }
  const waitHealthy = () =>
    poll("a healthy cluster", timeoutMs, async () => {
      const views = new Set<string | undefined>()
      for (const n of nodes) views.add(await viewOf(n.port))
      if (views.size !== 1 || views.has(undefined)) return false
      return replicas === 0 || (await replicasOnline())
    })

  const failover = async (masterPort: number, mode: "" | "FORCE" | "TAKEOVER" = "") => {
    const master = (await masters(masterPort)).find((m) => m.port === masterPort)
    const replica = master?.replicas[0]
    if (replica === undefined) throw new Error(`master ${masterPort} has no replica to fail over to`)
    await raw(replica).call("CLUSTER", "FAILOVER", ...(mode ? [mode] : []))
    await poll(`replica ${replica} to take over from ${masterPort}`, timeoutMs, async () => {
      for (const n of nodes) {
        const ms = await masters(n.port)
        if (!ms.some((m) => m.port === replica && m.slots.length > 0)) return false
        if (ms.some((m) => m.port === masterPort && m.slots.length > 0)) return false
      }
      return true
    })
    await waitHealthy()
    return replica
  }

  await waitHealthy().catch(async (e) => {
    await stop()
    throw e
  })
  return {
    nodes,
    startup: nodes.slice(0, 1).map((n) => ({ host: "127.0.0.1", port: n.port })),
    raw,
    masters,
    masterOfSlot,
    waitHealthy,
    failover,
    stop,
  }
}
