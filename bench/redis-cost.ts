/**
 * Where Redis time per job goes, for comparing two source trees side by side (the
 * figures of docs/performance.md, "Where Redis time per job goes"). Adds `jobs` no-op
 * jobs, runs them through one Promise `Worker` at `concurrency`, and prints per job:
 * Redis main-thread CPU, then each command Redis ran inside the scripts (INFO
 * commandstats: calls and µs), and the script time not spent in a command (Lua and
 * argument conversion). A second drain logs every call (SLOWLOG at threshold 0) to split
 * the script time by script. Then the floor: the same jobs through two minimal scripts
 * (claim: RPOP, HMGET, ZADD, HSET; ack: ZREM, HDEL, HDEL) at the same jobs per call, with
 * as many jobs in flight as the worker's concurrency.
 *
 *   node bench/redis-cost.ts <tree> <redis port> [jobs=40000] [concurrency=100]
 *
 * `PAYLOAD=<bytes>` (default 32) sets the length of each payload's string (10240: the
 * bench's 10 KB scenario); `KEEP=<n>` sets the completed retention count first (default:
 * the queue's default, 1,000). The first drain also prints its jobs/s (wall clock: it moves with
 * the load).
 *
 * `<tree>`: a checkout of leaseq (its src/index.ts and lua/ are used). The Redis at
 * `<port>` is FLUSHALLed. Alternate the trees, and read the CPU figures (µs per job):
 * wall-clock time moves with whatever else the machine does.
 */
import { readdirSync } from "node:fs"
import { resolve } from "node:path"
import { Redis } from "ioredis"
import { info } from "./lib/redis.ts"

const [tree = ".", port = "6379", jobsArg = "40000", concurrencyArg = "100"] = process.argv.slice(2)
const jobs = Number(jobsArg)
const concurrency = Number(concurrencyArg)
const payloadBytes = Number(process.env.PAYLOAD ?? 32)
const connection = `redis://127.0.0.1:${port}`
const admin = new Redis(connection)
admin.on("error", () => {})

const leaseq = await import(resolve(tree, "src/index.ts"))
const { loadScript } = await import(resolve(tree, "src/engine/scripts/Script.ts"))
/** sha1 of each expanded script of the tree -> its name. */
const names = new Map<string, string>()
for (const f of readdirSync(resolve(tree, "lua"))) {
  if (f.endsWith(".lua")) names.set(loadScript(f.slice(0, -4)).sha, f.slice(0, -4))
}

const cpuUs = async () => {
  const c = await info(admin, "cpu")
  return (Number(c.used_cpu_user_main_thread) + Number(c.used_cpu_sys_main_thread)) * 1e6
}
/** INFO commandstats as command -> {calls, usec}. */
const commandStats = async (): Promise<Map<string, { calls: number; usec: number }>> => {
  const out = new Map<string, { calls: number; usec: number }>()
  for (const [k, v] of Object.entries(await info(admin, "commandstats"))) {
    const m = /calls=(\d+),usec=(\d+)/.exec(v)
    if (m) out.set(k.replace(/^cmdstat_/, ""), { calls: Number(m[1]), usec: Number(m[2]) })
  }
  return out
}

/** Wall ms of the last drain. */
let drainMs = 0

/** Fill the queue, drain it through one worker; `before` runs once the jobs wait. Redis CPU µs of the drain. */
const drain = async (before: () => Promise<unknown>): Promise<number> => {
  await admin.flushall()
  const queue = new leaseq.Queue("redis-cost", { connection })
  if (process.env.KEEP !== undefined) await queue.setRetention({ completed: { count: Number(process.env.KEEP) } })
  for (let i = 0; i < jobs; i += 1000) {
    const batch = Array.from({ length: Math.min(1000, jobs - i) }, (_, k) => ({
      payload: { n: i + k, s: "x".repeat(payloadBytes) },
    }))
    await queue.addBulk(batch)
  }
  let done = 0
  let allDone: () => void = () => {}
  const finished = new Promise<void>((r) => {
    allDone = r
  })
  await before()
  const cpu0 = await cpuUs()
  const t0 = performance.now()
  const worker = new leaseq.Worker("redis-cost", async () => {}, { connection, concurrency })
  worker.on("completed", () => {
    if (++done === jobs) allDone()
  })
  await finished
  drainMs = performance.now() - t0
  const cpu = (await cpuUs()) - cpu0
  await worker.close()
  await queue.close()
  return cpu
}

const per = (x: number) => (x / jobs).toFixed(2)

/** The drain with commandstats: each command inside the scripts, per job. */
const byCommand = async (): Promise<number> => {
  const cpu = await drain(() => admin.config("RESETSTAT"))
  const stats = await commandStats()
  const script = stats.get("evalsha") ?? { calls: 0, usec: 0 }
  const skip = new Set(["evalsha", "info", "config|resetstat", "bzpopmin", "hello", "quit", "type", "client|setname"])
  const rows = [...stats].filter(([k]) => !skip.has(k)).sort((a, b) => b[1].usec - a[1].usec)
  const inner = rows.reduce((s, [, v]) => s + v.usec, 0)
  const rate = Math.round(jobs / (drainMs / 1000))
  console.log(
    `${tree} c${concurrency}: Redis CPU ${per(cpu)} us/job; script calls/job ${per(script.calls)}; ${rate} jobs/s`,
  )
  console.log(
    `  in scripts ${per(script.usec)} us/job: commands ${per(inner)}, Lua and arguments ${per(script.usec - inner)}`,
  )
  for (const [k, v] of rows)
    console.log(`    ${k.padEnd(12)} ${per(v.calls).padStart(6)} calls/job ${per(v.usec).padStart(6)} us/job`)
  return script.calls
}

/** The drain with every call logged: the script time by script, per job. */
const byScript = async (): Promise<void> => {
  await admin.config("SET", "slowlog-max-len", "1000000")
  await drain(async () => {
    await admin.config("SET", "slowlog-log-slower-than", "0")
    await admin.slowlog("RESET")
  })
  await admin.config("SET", "slowlog-log-slower-than", "10000")
  const entries = (await admin.slowlog("GET", "-1")) as Array<[number, number, number, string[], string]>
  const totals = new Map<string, { calls: number; us: number }>()
  for (const e of entries) {
    if (String(e[3]?.[0]).toLowerCase() !== "evalsha") continue
    const name = names.get(String(e[3][1])) ?? "other"
    const t = totals.get(name) ?? { calls: 0, us: 0 }
    totals.set(name, { calls: t.calls + 1, us: t.us + e[2] })
  }
  await admin.slowlog("RESET")
  for (const [k, v] of [...totals].sort((a, b) => b[1].us - a[1].us)) {
    console.log(
      `  script ${k.padEnd(10)} ${per(v.calls)} calls/job, ${(v.us / v.calls).toFixed(1)} us/call, ${per(v.us)} us/job`,
    )
  }
}

const CLAIM = `local ids = redis.call('RPOP', KEYS[1], ARGV[1])
if not ids then return {} end
local t = redis.call('TIME')
local deadline = tonumber(t[1]) * 1000 + 30000
local z, l = {}, {}
for i, id in ipairs(ids) do z[2 * i - 1], z[2 * i], l[2 * i - 1], l[2 * i] = deadline, id, id, i end
redis.call('ZADD', KEYS[2], unpack(z))
redis.call('HSET', KEYS[3], unpack(l))
return {ids, redis.call('HMGET', KEYS[4], unpack(ids))}`
const ACK = `redis.call('ZREM', KEYS[1], unpack(ARGV))
redis.call('HDEL', KEYS[2], unpack(ARGV))
redis.call('HDEL', KEYS[3], unpack(ARGV))
return 1`

/** The floor: the same jobs claimed and acknowledged by two minimal scripts, `size` a call. */
const floor = async (size: number): Promise<void> => {
  await admin.flushall()
  const keys = ["f:wait", "f:active", "f:lease", "f:data"]
  for (let i = 0; i < jobs; i += 1000) {
    const ids = Array.from({ length: Math.min(1000, jobs - i) }, (_, k) => `job-${i + k}`)
    await admin.lpush(keys[0]!, ...ids)
    await admin.hset(keys[3]!, ...ids.flatMap((id) => [id, JSON.stringify({ s: "x".repeat(payloadBytes) })]))
  }
  const [claim, ack] = [(await admin.script("LOAD", CLAIM)) as string, (await admin.script("LOAD", ACK)) as string]
  const cpu0 = await cpuUs()
  // as many jobs in flight as the worker holds (`concurrency`): a batch is acknowledged
  // once the batches claimed after it fill the slots
  const held: string[][] = []
  for (;;) {
    const [ids] = (await admin.evalsha(claim, 4, ...keys, size)) as [string[]?]
    if (ids && ids.length > 0) held.push(ids)
    if (held.length > 0 && (held.length * size > concurrency || !ids || ids.length === 0)) {
      await admin.evalsha(ack, 3, keys[1]!, keys[2]!, keys[3]!, ...held.shift()!)
    } else if (!ids || ids.length === 0) break
  }
  const cpu = (await cpuUs()) - cpu0
  console.log(
    `  floor (two minimal scripts, ${size} jobs a call, ${concurrency} in flight): Redis CPU ${per(cpu)} us/job`,
  )
}

const calls = await byCommand()
await byScript()
await floor(Math.max(1, Math.round(jobs / Math.max(1, calls))))
admin.disconnect()
