/**
 * `npm run demo`: leaseq's main job on a fresh machine. Starts a local redis-server
 * when REDIS_URL is unset, adds jobs, runs worker processes, SIGKILLs one mid-job,
 * and shows the sweep hand its jobs to the others: every job completed, 0 lost.
 *
 * Options (env): DEMO_JOBS (default 3000), DEMO_WORKERS (default 4).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { createInterface } from "node:readline"
import { Queue } from "../index.ts"
import { redactUrl } from "../redis/Client.ts"
import { type LocalRedis, startRedisServer } from "../testing/RedisServer.ts"

const JOBS = Number(process.env.DEMO_JOBS ?? 3000)
const WORKERS = Number(process.env.DEMO_WORKERS ?? 4)
const tty = process.stdout.isTTY === true
const log = (line: string) => process.stdout.write(`${tty ? "\r\x1b[K" : ""}${line}\n`)

interface DemoWorker {
  readonly label: string
  readonly child: ChildProcess
  readonly running: Set<string>
  /** Resolves once everything it printed has been read. */
  readonly closed: Promise<void>
  done: number
}

/** The worker killed mid-run, and the jobs it was running then. */
interface Killed {
  readonly label: string
  readonly holding: string[]
}

/** Start one worker process (src/demo/worker.ts); count each job it starts in `runs`. */
const spawnWorker = (label: string, redis: string, name: string, runs: Map<string, number>): DemoWorker => {
  const file = new URL(`./worker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url).pathname
  const child = spawn(process.execPath, [file, redis, name, label], { stdio: ["ignore", "pipe", "inherit"] })
  const lines = createInterface({ input: child.stdout })
  const closed = new Promise<void>((resolve) => lines.once("close", () => resolve()))
  const w: DemoWorker = { label, child: child as ChildProcess, running: new Set<string>(), done: 0, closed }
  lines.on("line", (line) => {
    const [what, id] = line.split(" ")
    if (what === "started" && id) {
      w.running.add(id)
      runs.set(id, (runs.get(id) ?? 0) + 1)
    } else if (what === "done" && id) {
      w.running.delete(id)
      w.done++
    }
  })
  return w
}

/** SIGKILL `victim` and say which jobs its handlers were running. */
const kill = async (victim: DemoWorker): Promise<Killed> => {
  victim.child.kill("SIGKILL")
  await victim.closed // read everything it printed before it died
  const holding = [...victim.running]
  log(
    `killed ${victim.label} (pid ${victim.child.pid}) with SIGKILL while its handlers were running ${holding.length} jobs`,
  )
  return { label: victim.label, holding }
}

/** Show progress until every job is settled (or 120 s pass); kill the first worker 30% of the way. */
const watch = async (queue: Queue<{ n: number }>, workers: ReadonlyArray<DemoWorker>, started: number) => {
  let killed: Killed | undefined
  let last = ""
  for (let tick = 0; ; tick++) {
    const s = await queue.stats()
    const completed = s.counters.completed
    if (!killed && completed >= JOBS * 0.3) killed = await kill(workers[0]!)
    const line = `completed ${completed}/${JOBS}  waiting ${s.waiting}  active ${s.active}  expired ${s.expired}  reclaimed ${s.counters.lostLeases}  dead ${s.dead}`
    if (tty) process.stdout.write(`\r\x1b[K${line}`)
    else if (line !== last && tick % 4 === 0) log(line) // about once a second when not a terminal
    last = line
    if (completed + s.dead >= JOBS && s.active === 0 && s.waiting === 0 && s.delayed === 0) return killed
    if (Date.now() - started > 120_000) {
      log("gave up after 120 s")
      return killed
    }
    await new Promise((r) => setTimeout(r, 250))
  }
}

/** Print the figures; the exit code: 0 when no job was lost and verify is clean. */
const summary = async (
  queue: Queue<{ n: number }>,
  runs: Map<string, number>,
  killed: Killed | undefined,
  started: number,
) => {
  const s = await queue.stats()
  const verify = await queue.verify()
  const reclaimedRan = killed ? killed.holding.filter((id) => (runs.get(id) ?? 0) >= 2).length : 0
  const lost = JOBS - s.counters.completed - s.dead
  const twice = [...runs.values()].filter((n) => n > 1).length
  log("")
  log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  log(`  jobs added           ${JOBS}`)
  log(`  completed            ${s.counters.completed}`)
  log(`  dead                 ${s.dead}`)
  if (killed) {
    log(
      `  killed mid-job       ${killed.holding.length} jobs; run again after the sweep reclaimed them: ${reclaimedRan}`,
    )
  }
  log(`  leases reclaimed     ${s.counters.lostLeases} (every lease the killed worker held, started or not)`)
  log(`  jobs started twice   ${twice} (only jobs whose worker died)`)
  log(`  verify               ${verify.violations === 0 ? "clean" : `${verify.violations} violations`}`)
  log(`  lost                 ${lost}`)
  return lost === 0 && verify.violations === 0 ? 0 : 1
}

const main = async (): Promise<number> => {
  const local: LocalRedis | undefined = process.env.REDIS_URL ? undefined : await startRedisServer()
  const redis = local?.url ?? process.env.REDIS_URL!
  log(`leaseq demo — Redis at ${redactUrl(redis)}${local ? " (started for this demo)" : ""}`)
  const name = `demo-${randomBytes(3).toString("hex")}`
  const queue = new Queue<{ n: number }>(name, { connection: redis })
  const ids: string[] = []
  for (let i = 0; i < JOBS; i += 1000) {
    const n = Math.min(1000, JOBS - i)
    ids.push(...(await queue.addBulk(Array.from({ length: n }, (_, k) => ({ payload: { n: i + k } })))))
  }
  log(`added ${ids.length} jobs to queue ${name}`)

  const runs = new Map<string, number>()
  const workers = Array.from({ length: WORKERS }, (_, i) => spawnWorker(`worker-${i + 1}`, redis, name, runs))
  log(`started ${WORKERS} worker processes (concurrency 8, lease 1500 ms, in-process sweeps)`)
  const started = Date.now()
  const killed = await watch(queue, workers, started)
  const code = await summary(queue, runs, killed, started)
  for (const w of workers.slice(1)) w.child.kill("SIGTERM")
  await Promise.all(
    workers.slice(1).map((w) => new Promise((r) => (w.child.exitCode !== null ? r(null) : w.child.once("exit", r)))),
  )
  await queue.close()
  await local?.stop()
  return code
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`demo failed: ${e instanceof Error ? e.message : String(e)}\n`)
    process.exit(1)
  },
)
