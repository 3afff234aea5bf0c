/**
 * Everything a scenario needs, made once per run and passed to every scenario:
 * the configuration, the Redis it measures (a throw-away redis-server unless
 * REDIS_URL is set), an admin connection, the libraries' adapters and the
 * results model. Nothing of a run lives in module-level variables.
 */
import { spawnSync } from "node:child_process"
import { availableParallelism, cpus, loadavg, totalmem } from "node:os"
import type { Redis } from "ioredis"
import { startRedisServer } from "../src/testing/RedisServer.ts"
import { createAdapter, type DisposableAdapter } from "./adapters/index.ts"
import { leaseqUnavailable } from "./adapters/leaseq.ts"
import type { LibName } from "./adapters/types.ts"
import type { BenchConfig } from "./config.ts"
import { connect, info, scriptNames } from "./lib/redis.ts"
import { ROOT } from "./paths.ts"
import { makeResults, type Results } from "./results.ts"

/** The machine and the code measured, stored with every result. */
export interface Machine {
  readonly nproc: number
  readonly cpu: string
  readonly memoryGiB: number
  readonly redis: string
  readonly redisUrl: string
  readonly node: string
  readonly loadAverage1mAtStart: number
  /** The leaseq commit measured (short hash). */
  readonly commit: string
  /** Whether src/ or lua/ had uncommitted changes when the run started. */
  readonly uncommittedEngineChanges: boolean
  /**
   * The Redis's `zset-max-listpack-entries` (default 128): below a queue's jobs in flight it
   * makes `active` a skip list, which changes the processing figures (docs/operations.md).
   * Absent in records written before 2026-12-03.
   */
  readonly zsetMaxListpackEntries?: number
}

export interface BenchContext {
  readonly config: BenchConfig
  /** The Redis every library talks to. */
  readonly url: string
  /** The harness's own connection: FLUSHALL, INFO, SLOWLOG. */
  readonly admin: Redis
  /** sha1 of every Lua script (leaseq and the peers) → a readable name, for per-call figures. */
  readonly scriptNames: ReadonlyMap<string, string>
  /** The libraries that could be loaded, in `config.libs` order. */
  readonly adapters: ReadonlyMap<LibName, DisposableAdapter>
  /** Libraries asked for that cannot be measured, with the reason. */
  readonly unavailable: ReadonlyMap<LibName, string>
  readonly results: Results
  readonly machine: Machine
  readonly log: (line: string) => void
  /** Disconnect, dispose the adapters, stop the redis-server the harness started. */
  close(): Promise<void>
}

const git = (args: string[]): string => {
  const r = spawnSync("git", args, { cwd: ROOT, encoding: "utf8" })
  return r.status === 0 ? r.stdout.trim() : "unknown"
}

const describeMachine = async (admin: Redis, ownRedis: boolean): Promise<Machine> => {
  const server = await info(admin, "server")
  // undefined where CONFIG is not allowed (a managed Redis) or says nothing
  const zsetEntries = await admin.config("GET", "zset-max-listpack-entries").then(
    (reply) => Number((reply as string[])[1] ?? Number.NaN),
    () => Number.NaN,
  )
  // BENCH_COMMIT: set when running from an exported snapshot of a commit (no .git there).
  const exported = process.env.BENCH_COMMIT
  return {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model ?? "unknown",
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    redis: server.redis_version ?? "unknown",
    redisUrl: ownRedis ? "local redis-server started by the harness" : "REDIS_URL",
    node: process.version,
    loadAverage1mAtStart: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    commit: exported ?? git(["rev-parse", "--short", "HEAD"]),
    uncommittedEngineChanges: exported ? false : git(["status", "--porcelain", "--", "src", "lua"]) !== "",
    ...(Number.isFinite(zsetEntries) ? { zsetMaxListpackEntries: zsetEntries } : {}),
  }
}

const loadAdapters = async (
  config: BenchConfig,
  url: string,
  log: (line: string) => void,
): Promise<{ adapters: Map<LibName, DisposableAdapter>; unavailable: Map<LibName, string> }> => {
  const adapters = new Map<LibName, DisposableAdapter>()
  const unavailable = new Map<LibName, string>()
  for (const lib of config.libs) {
    const why = lib === "leaseq" ? await leaseqUnavailable() : undefined
    if (why) {
      unavailable.set(lib, why)
      log(`leaseq: not measured — ${why}`)
      continue
    }
    adapters.set(lib, await createAdapter(lib, url))
  }
  return { adapters, unavailable }
}

const printHeader = (config: BenchConfig, m: Machine, log: (line: string) => void): void => {
  const { sizes } = config
  log(`leaseq bench (${config.mode}): ${m.nproc} cores, ${m.memoryGiB} GiB, ${m.cpu}, redis ${m.redis}, node ${m.node}`)
  log(
    `leaseq at ${m.commit}${m.uncommittedEngineChanges ? " + uncommitted changes in src/ or lua/" : ""}; libraries: ${config.libs.join(", ")}; ${sizes.reps} repetitions (${sizes.inFlightReps} for the in-flight scenarios); FLUSHALL between runs`,
  )
  if (m.zsetMaxListpackEntries !== undefined && m.zsetMaxListpackEntries !== 128)
    log(`redis zset-max-listpack-entries ${m.zsetMaxListpackEntries} (default 128): processing figures differ`)
  if (m.loadAverage1mAtStart > m.nproc * 0.5)
    log(
      `warning: load average ${m.loadAverage1mAtStart.toFixed(2)} on ${m.nproc} cores before the run: other processes share the CPU, figures will be noisy`,
    )
}

/** Start (or reach) Redis, connect, load the adapters. The caller closes the context. */
export const openContext = async (config: BenchConfig, log: (line: string) => void): Promise<BenchContext> => {
  const own = process.env.REDIS_URL ? undefined : await startRedisServer()
  const url = process.env.REDIS_URL ?? own?.url ?? ""
  if (!/^redis:\/\/(127\.0\.0\.1|localhost)(:\d+)?/.test(url)) {
    await own?.stop()
    throw new Error(`REDIS_URL must point at 127.0.0.1 (the bench FLUSHALLs it): ${url}`)
  }
  const admin = connect(url)
  const machine = await describeMachine(admin, own !== undefined)
  const names = await scriptNames(ROOT)
  printHeader(config, machine, log)
  const { adapters, unavailable } = await loadAdapters(config, url, log)
  return {
    config,
    url,
    admin,
    scriptNames: names,
    adapters,
    unavailable,
    results: makeResults(log),
    machine,
    log,
    async close() {
      for (const a of adapters.values()) await a.dispose().catch(() => {})
      admin.disconnect()
      await own?.stop()
    },
  }
}
