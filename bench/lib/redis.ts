/**
 * Admin-side Redis helpers for the benchmark harness: a plain ioredis client,
 * FLUSHALL, INFO memory, and a server-side probe built on SLOWLOG (threshold 0,
 * so every command is logged with its own execution time) and INFO commandstats.
 */
import { createHash } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { Redis } from "ioredis"

export const connect = (url: string): Redis => {
  const r = new Redis(url, { maxRetriesPerRequest: null, lazyConnect: false })
  r.on("error", () => {})
  return r
}

export const info = async (r: Redis, section: string): Promise<Record<string, string>> => {
  const text = (await r.info(section)) as string
  const out: Record<string, string> = {}
  for (const line of text.split("\r\n")) {
    const i = line.indexOf(":")
    if (i > 0 && !line.startsWith("#")) out[line.slice(0, i)] = line.slice(i + 1)
  }
  return out
}

export const usedMemory = async (r: Redis): Promise<number> => Number((await info(r, "memory")).used_memory)

/**
 * Bytes per key (MEMORY USAGE, every element counted) of the keys whose name contains
 * `part`, at most `limit` keys (undefined when there are more: a key per job).
 */
export const memoryByKey = async (r: Redis, part: string, limit = 64): Promise<Map<string, number> | undefined> => {
  const keys: string[] = []
  let cursor = "0"
  do {
    const [next, found] = await r.scan(cursor, "MATCH", `*${part}*`, "COUNT", 1000)
    cursor = next
    keys.push(...found)
    if (keys.length > limit) return undefined
  } while (cursor !== "0")
  const out = new Map<string, number>()
  for (const k of keys) out.set(k, Number(await r.memory("USAGE", k, "SAMPLES", 0)))
  return out
}

export const flushAll = async (r: Redis): Promise<void> => {
  await r.flushall()
}

/** sha1 → a readable name for every Lua script of the peers and of leaseq. */
export const scriptNames = async (root: string): Promise<Map<string, string>> => {
  const m = new Map<string, string>()
  const sha = (text: string) => createHash("sha1").update(text).digest("hex")
  const addDir = (dir: string, lib: string) => {
    let files: string[] = []
    try {
      files = readdirSync(dir)
    } catch {
      return
    }
    for (const f of files)
      if (f.endsWith(".lua")) m.set(sha(readFileSync(join(dir, f), "utf8")), `${lib}:${f.slice(0, -4)}`)
  }
  addDir(join(root, "lua"), "leaseq")
  addDir(join(root, "node_modules/bee-queue/lib/lua"), "beequeue")
  const bullDir = join(root, "node_modules/bullmq/dist/esm/scripts")
  for (const f of readdirSync(bullDir)) {
    if (!f.endsWith(".js") || f === "index.js") continue
    const mod = (await import(pathToFileURL(join(bullDir, f)).href)) as Record<
      string,
      { name?: string; content?: string } | undefined
    >
    for (const v of Object.values(mod)) if (v?.content && v.name) m.set(sha(v.content), `bullmq:${v.name}`)
  }
  return m
}

export interface SlowEntry {
  readonly us: number
  readonly label: string
}

export interface ProbeResult {
  /** Every top-level command (not those inside scripts) the server ran in the window, with its own execution time (slowlog mode only). */
  readonly entries: ReadonlyArray<SlowEntry>
  /** The longest single command (µs) and what it was (slowlog mode only). */
  readonly maxUs: number
  readonly maxLabel: string
  /** Sum of the execution times of the top-level commands (µs; slowlog mode only). */
  readonly sumUs: number
  /** Commands executed, counting those run inside scripts (INFO stats total_commands_processed). */
  readonly commands: number
  /** CPU time of Redis's main thread over the window, user + system (µs): parsing, networking, execution. */
  readonly cpuUs: number
  /** Per label: count, total µs, max µs (slowlog mode only). */
  readonly byLabel: Record<string, { count: number; totalUs: number; maxUs: number }>
  /** True when SLOWLOG overflowed its max length (entries incomplete). */
  readonly truncated: boolean
}

const ADMIN = new Set(["slowlog", "config", "info"])
const SLOWLOG_MAX = 200_000

/** Redis's main-thread CPU so far (`INFO cpu`), in µs: the figure every Redis-cost measure here takes the difference of. */
export const cpuUs = async (r: Redis): Promise<number> => {
  const c = await info(r, "cpu")
  return Math.round((Number(c.used_cpu_user_main_thread) + Number(c.used_cpu_sys_main_thread)) * 1e6)
}
const commandsProcessed = async (r: Redis): Promise<number> => Number((await info(r, "stats")).total_commands_processed)

/** The slowlog part of a ProbeResult. */
type SlowlogSummary = Pick<ProbeResult, "entries" | "maxUs" | "maxLabel" | "sumUs" | "byLabel" | "truncated">

const EMPTY_SLOWLOG: SlowlogSummary = { entries: [], maxUs: 0, maxLabel: "", sumUs: 0, byLabel: {}, truncated: false }

/** Log every command from now on (slowlog threshold 0), starting from an empty slowlog. */
const startSlowlog = async (admin: Redis): Promise<void> => {
  await admin.config("SET", "slowlog-max-len", String(SLOWLOG_MAX))
  await admin.config("SET", "slowlog-log-slower-than", "0")
  await admin.slowlog("RESET")
}

type RawSlowEntry = [number, number, number, string[]]

/** The label of a slowlog entry (a script by its name), or undefined for entries not to count. */
const slowEntryLabel = (e: RawSlowEntry, names: ReadonlyMap<string, string>): string | undefined => {
  // Commands run inside a script are logged too, with client "?:0": the script's own entry already counts them.
  if (String((e as unknown[])[4]) === "?:0") return undefined
  const args = e[3] ?? []
  const cmd = String(args[0] ?? "").toLowerCase()
  if (ADMIN.has(cmd)) return undefined
  if (cmd === "evalsha") return names.get(String(args[1])) ?? `evalsha:${String(args[1]).slice(0, 8)}`
  return cmd
}

/** Sums the slowlog entries: all of them, per label, and the longest. */
const summariseSlowlog = (raw: ReadonlyArray<RawSlowEntry>, names: ReadonlyMap<string, string>): SlowlogSummary => {
  const entries: SlowEntry[] = []
  const byLabel: Record<string, { count: number; totalUs: number; maxUs: number }> = {}
  let maxUs = 0
  let maxLabel = ""
  let sumUs = 0
  for (const e of raw) {
    const label = slowEntryLabel(e, names)
    if (label === undefined) continue
    const us = Number(e[2])
    entries.push({ us, label })
    sumUs += us
    const b = byLabel[label] ?? { count: 0, totalUs: 0, maxUs: 0 }
    b.count++
    b.totalUs += us
    b.maxUs = Math.max(b.maxUs, us)
    byLabel[label] = b
    if (us > maxUs) {
      maxUs = us
      maxLabel = label
    }
  }
  return { entries, maxUs, maxLabel, sumUs, byLabel, truncated: raw.length >= SLOWLOG_MAX }
}

/** Reads and sums the slowlog, then puts the threshold back to 10 ms and empties it. */
const readSlowlog = async (admin: Redis, names: ReadonlyMap<string, string>): Promise<SlowlogSummary> => {
  const raw = (await admin.call("SLOWLOG", "GET", String(SLOWLOG_MAX))) as RawSlowEntry[]
  const summary = summariseSlowlog(raw, names)
  await admin.config("SET", "slowlog-log-slower-than", "10000")
  await admin.slowlog("RESET")
  return summary
}

/**
 * Measure what the server does while `fn` runs. `slowlog: false` keeps the
 * slowlog off (cheaper, for throughput runs) and only reads counters.
 */
export const probe = async <A>(
  admin: Redis,
  names: ReadonlyMap<string, string>,
  fn: () => Promise<A>,
  options: { slowlog?: boolean } = {},
): Promise<{ value: A; server: ProbeResult }> => {
  const useSlowlog = options.slowlog ?? true
  if (useSlowlog) await startSlowlog(admin)
  const cpu0 = await cpuUs(admin)
  const cmd0 = await commandsProcessed(admin)
  let value: A
  try {
    value = await fn()
  } finally {
    if (useSlowlog) await admin.config("SET", "slowlog-log-slower-than", "-1")
  }
  const cpu1 = await cpuUs(admin)
  const cmd1 = await commandsProcessed(admin)
  const slowlog = useSlowlog ? await readSlowlog(admin, names) : EMPTY_SLOWLOG
  return { value, server: { ...slowlog, commands: cmd1 - cmd0, cpuUs: cpu1 - cpu0 } }
}
