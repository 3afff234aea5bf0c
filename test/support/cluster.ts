/**
 * A real local Redis Cluster for tests, started from the redis-server binary on PATH:
 * N masters (and optionally one replica each), `cluster-enabled yes`, each node on free
 * loopback ports (client and bus) in its own temp dir, joined with
 * `redis-cli --cluster create … --cluster-yes`. Ready when every node says
 * `cluster_state:ok` and every master has its replicas online (polled; no fixed sleeps).
 */
import { spawn, spawnSync } from "node:child_process"
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

/** True when `redis-cli` can be run (it joins the nodes into a cluster). */
export const hasRedisCli = (): boolean => spawnSync("redis-cli", ["--version"], { stdio: "ignore" }).status === 0

const run = (cmd: string, args: ReadonlyArray<string>): Promise<{ code: number | null; output: string }> =>
  new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString()
    })
    child.stderr.on("data", (d: Buffer) => {
      output += d.toString()
    })
    child.on("close", (code) => resolve({ code, output }))
  })

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
    const create = await run("redis-cli", [
      "--cluster",
      "create",
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      "--cluster-replicas",
      String(replicas),
      "--cluster-yes",
    ])
    if (create.code !== 0) throw new Error(`redis-cli --cluster create failed:\n${create.output}`)
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
