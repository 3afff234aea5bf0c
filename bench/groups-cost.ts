/**
 * What 1,000 fair groups cost Redis, for comparing source trees side by side (issue 33
 * point 4). For each tree and each mode ("plain": jobs without a group; "g1000": the same
 * jobs over 1,000 groups, no group limits), alternating within each round, on a
 * redis-server of its own (from PATH):
 *
 * - add: the jobs added in bulks of 1,000: Redis CPU µs and commands per job;
 * - drain: `jobs` no-op jobs through one Promise `Worker` at concurrency 16: jobs/s, Redis
 *   main-thread CPU µs per job, Redis commands per job (INFO commandstats, the commands a
 *   script runs counted, EVALSHA not), and per command its calls and µs per job;
 * - calls: with 16,000 jobs waiting, 20 direct reserve calls of 16 jobs, then one complete
 *   call of each call's 16: the Redis commands each call runs (commandstats delta).
 *
 *   node bench/groups-cost.ts <tree> [<tree> …] [--jobs 32000] [--rounds 3]
 *
 * `<tree>`: a checkout of leaseq (its src/ and lua/ are used). Prints the medians per tree
 * and mode, and the per-command table of the last tree's drains; read the CPU figures:
 * wall-clock time moves with whatever else the machine does (report `uptime`).
 */
import { resolve } from "node:path"
import { parseArgs } from "node:util"
import * as Effect from "effect/Effect"
import { startRedisServer } from "../src/testing/RedisServer.ts"
import { connect, info } from "./lib/redis.ts"

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { jobs: { type: "string" }, rounds: { type: "string" } },
})
const JOBS = Number(values.jobs ?? 32_000)
const ROUNDS = Number(values.rounds ?? 3)
const GROUPS = 1000
const trees = positionals.length > 0 ? positionals : ["."]
const server = await startRedisServer()
const admin = connect(server.url)
const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)

interface Tree {
  readonly dir: string
  // biome-ignore lint/suspicious/noExplicitAny: another tree's module, typed by its own source
  readonly lq: any
  // biome-ignore lint/suspicious/noExplicitAny: likewise
  readonly makeCommands: any
  // biome-ignore lint/suspicious/noExplicitAny: likewise
  readonly queueKeys: any
  // biome-ignore lint/suspicious/noExplicitAny: likewise
  readonly connectClient: any
}
const load = async (dir: string): Promise<Tree> => ({
  dir,
  lq: await import(resolve(dir, "src/index.ts")),
  makeCommands: (await import(resolve(dir, "src/engine/calls/Commands.ts"))).makeCommands,
  queueKeys: (await import(resolve(dir, "src/engine/model/Keys.ts"))).queueKeys,
  connectClient: (await import(resolve(dir, "src/redis/Client.ts"))).connect,
})

const cpuUs = async () => {
  const c = await info(admin, "cpu")
  return (Number(c.used_cpu_user_main_thread) + Number(c.used_cpu_sys_main_thread)) * 1e6
}
type Stats = Map<string, { calls: number; usec: number }>
const commandStats = async (): Promise<Stats> => {
  const out: Stats = new Map()
  for (const [k, v] of Object.entries(await info(admin, "commandstats"))) {
    const m = /calls=(\d+),usec=(\d+)/.exec(v)
    if (m) out.set(k.replace(/^cmdstat_/, ""), { calls: Number(m[1]), usec: Number(m[2]) })
  }
  return out
}
/** after - before, per command, without the bench's own (INFO, EVALSHA, FLUSHALL…). */
const delta = (before: Stats, after: Stats): Stats => {
  const out: Stats = new Map()
  for (const [k, v] of after) {
    if (["info", "evalsha", "evalsha_ro", "eval", "flushall", "client|setname", "client|setinfo"].includes(k)) continue
    const b = before.get(k) ?? { calls: 0, usec: 0 }
    if (v.calls > b.calls) out.set(k, { calls: v.calls - b.calls, usec: v.usec - b.usec })
  }
  return out
}
const total = (s: Stats) => [...s.values()].reduce((a, v) => a + v.calls, 0)

const fill = async (t: Tree, name: string, n: number, groups: number) => {
  const queue = new t.lq.Queue(name, { connection: server.url })
  for (let from = 0; from < n; from += 1000) {
    const jobs = []
    for (let i = from; i < Math.min(n, from + 1000); i++) {
      jobs.push({ payload: { n: i }, ...(groups > 0 ? { options: { group: `tenant-${i % groups}` } } : {}) })
    }
    await queue.addBulk(jobs)
  }
  await queue.close()
}

interface Drain {
  rate: number
  cpu: number
  cmds: number
  stats: Stats
  /** The fill (addBulk of 1,000): Redis CPU µs and commands per job added. */
  addCpu: number
  addCmds: number
}
const drain = async (t: Tree, groups: number): Promise<Drain> => {
  await admin.flushall()
  const a0 = await commandStats()
  const acpu0 = await cpuUs()
  await fill(t, "groups-cost", JOBS, groups)
  const addCpu = ((await cpuUs()) - acpu0) / JOBS
  const addCmds = total(delta(a0, await commandStats())) / JOBS
  let done = 0
  let first = 0
  let allDone: (at: number) => void = () => {}
  const finished = new Promise<number>((r) => {
    allDone = r
  })
  const s0 = await commandStats()
  const cpu0 = await cpuUs()
  const worker = new t.lq.Worker(
    "groups-cost",
    async () => {
      if (first === 0) first = performance.now()
    },
    { connection: server.url, concurrency: 16 },
  )
  worker.on("completed", () => {
    if (++done === JOBS) allDone(performance.now())
  })
  const end = await finished
  const cpu = (await cpuUs()) - cpu0
  const stats = delta(s0, await commandStats())
  await worker.close()
  return { rate: JOBS / ((end - first) / 1000), cpu: cpu / JOBS, cmds: total(stats) / JOBS, stats, addCpu, addCmds }
}

/** Commands per reserve call of 16 and per complete call of 16, with 16,000 jobs waiting. */
const calls = async (t: Tree, groups: number): Promise<{ reserve: number; complete: number }> => {
  await admin.flushall()
  await fill(t, "groups-calls", 16_000, groups)
  const client = t.connectClient(server.url)
  const c = t.makeCommands(client, t.queueKeys("groups-calls"))
  let reserve = 0
  let complete = 0
  for (let i = 0; i < 20; i++) {
    const s0 = await commandStats()
    const { jobs } = (await run(c.reserve(16, 30_000, 0))) as { jobs: Array<{ id: string; token: number }> }
    const s1 = await commandStats()
    await run(c.complete(jobs.map((j) => ({ id: j.id, token: j.token, result: "" }))))
    const s2 = await commandStats()
    reserve += total(delta(s0, s1))
    complete += total(delta(s1, s2))
  }
  await client.close()
  return { reserve: reserve / 20, complete: complete / 20 }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2
    ? (s[(s.length - 1) / 2] as number)
    : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2
}

const loaded = await Promise.all(trees.map(load))
const modes = [
  { id: "plain", groups: 0 },
  { id: "g1000", groups: GROUPS },
]
const results = new Map<string, { drains: Drain[]; reserve: number; complete: number }>()
for (let round = 0; round < ROUNDS; round++) {
  for (const t of loaded) {
    for (const m of modes) {
      const key = `${t.dir} ${m.id}`
      const r = results.get(key) ?? { drains: [], reserve: 0, complete: 0 }
      r.drains.push(await drain(t, m.groups))
      if (round === 0) Object.assign(r, await calls(t, m.groups))
      results.set(key, r)
      const d = r.drains[r.drains.length - 1] as Drain
      console.log(
        `round ${round + 1} ${key}: ${d.rate.toFixed(0)} jobs/s, ${d.cpu.toFixed(1)} µs/job, ${d.cmds.toFixed(2)} cmds/job`,
      )
    }
  }
}
console.log(
  "\ntree mode | jobs/s | Redis µs/job | cmds/job | cmds/reserve(16) | cmds/complete(16) | add: Redis µs/job | add: cmds/job   (medians)",
)
for (const [key, r] of results) {
  const med = (f: (d: Drain) => number) => median(r.drains.map(f))
  console.log(
    `${key} | ${med((d) => d.rate).toFixed(0)} | ${med((d) => d.cpu).toFixed(1)} | ${med((d) => d.cmds).toFixed(2)} | ${r.reserve.toFixed(1)} | ${r.complete.toFixed(1)} | ${med((d) => d.addCpu).toFixed(1)} | ${med((d) => d.addCmds).toFixed(2)}`,
  )
}
for (const t of loaded) {
  const p = results.get(`${t.dir} plain`)
  const g = results.get(`${t.dir} g1000`)
  if (!p || !g) continue
  const rate = median(g.drains.map((d) => d.rate)) / median(p.drains.map((d) => d.rate))
  const cpu = median(g.drains.map((d) => d.cpu)) / median(p.drains.map((d) => d.cpu))
  console.log(`${t.dir}: g1000/plain jobs/s ${rate.toFixed(2)}×, Redis µs/job ${cpu.toFixed(2)}×`)
}
for (const t of loaded) {
  for (const m of modes) {
    const r = results.get(`${t.dir} ${m.id}`)
    if (!r) continue
    const last = r.drains[r.drains.length - 1] as Drain
    console.log(`\n${t.dir} ${m.id}, the last drain, per job: command | calls | µs`)
    const rows = [...last.stats].sort((a, b) => b[1].usec - a[1].usec)
    for (const [k, v] of rows) console.log(`${k} | ${(v.calls / JOBS).toFixed(3)} | ${(v.usec / JOBS).toFixed(2)}`)
  }
}
admin.disconnect()
await server.stop()
process.exit(0)
