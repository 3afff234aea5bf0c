/**
 * Scenario 1 — worker crashes. Thousands of jobs, several worker processes; a random
 * worker is SIGKILLed every few hundred ms and a replacement started. At the end every
 * job is completed (each id retained in `done`), none lost, verify is clean, and every
 * job that ran more than once had been held by a worker that was killed: duplicates are
 * at most the leases the killed workers held, lost leases at most kills × concurrency.
 * The second test races heartbeats (every 20 ms) against completes.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { AUTO_PREFETCH_UPTO } from "../../src/engine/worker/Prefetch.ts"
import { type LocalRedis, startRedisServer } from "../../src/testing/RedisServer.ts"
import { onCleanup } from "../support/cleanup.ts"
import { queueNamer, rawClient } from "../support/redis.ts"
import { useQueue, useWorker } from "../support/use.ts"
import { type Child, report, size, startWorkerChild, summary, until } from "./support.ts"

const name = queueNamer("rel-crash")
const JOBS = size(20_000, 100_000)
const WORKERS = 4
const LEASE_MS = 3_000
const CONCURRENCY = 32
const WORK = "work:5"
/** The chaos schedule (not a synchronisation): a kill every 300–700 ms (see startChaos). */
const KILL_EVERY_MS = [300, 700] as const

let server: LocalRedis
let raw: Redis
beforeAll(async () => {
  server = await startRedisServer()
  raw = rawClient(server.url)
})
afterAll(async () => {
  raw?.disconnect()
  await server?.stop()
})

/** One start of a job: the worker process and the lease's token. */
interface Run {
  readonly child: Child
  readonly token: number
}

/** Who ran what, from the children's output: the starts of each job, where each was acknowledged, lease-lost lines. */
const runsOf = (children: ReadonlyArray<Child>) => {
  const starts = new Map<string, Run[]>()
  const doneAt = new Map<string, { child: Child; at: number }>()
  let leaseLostLines = 0
  for (const c of children) {
    for (const l of c.lines) {
      const [kind, id, token] = l.text.split(" ")
      if (kind === "started") starts.set(id!, [...(starts.get(id!) ?? []), { child: c, token: Number(token) }])
      else if (kind === "done") doneAt.set(id!, { child: c, at: l.at })
      else if (kind === "lease-lost") leaseLostLines++
    }
  }
  return { starts, doneAt, leaseLostLines }
}

/** Runs of a job past the first, and those not explained by a kill: every run but the last was in a killed worker that had not acknowledged it. */
const duplicateRuns = (starts: ReadonlyMap<string, Run[]>, killed: ReadonlySet<Child>) => {
  let duplicates = 0
  const unexplained: string[] = []
  for (const [id, list] of starts) {
    duplicates += list.length - 1
    const earlier = [...list].sort((a, b) => a.token - b.token).slice(0, -1)
    for (const run of earlier) {
      const ackedThere = run.child.lines.some((l) => l.text === `done ${id} ${run.token}`)
      if (!killed.has(run.child) || ackedThere) unexplained.push(`${id} token ${run.token} child ${run.child.id}`)
    }
  }
  return { duplicates, unexplained }
}

/** The leases each killed worker held when it died (started there, never acknowledged there), and how long until another worker completed them. */
const heldByKilled = (
  kills: ReadonlyArray<{ child: Child; at: number }>,
  doneAt: ReadonlyMap<string, { child: Child; at: number }>,
) => {
  let held = 0
  const recoveries: number[] = []
  for (const { child, at } of kills) {
    const idsOf = (prefix: string) =>
      child.lines.filter((l) => l.text.startsWith(prefix)).map((l) => l.text.split(" ")[1]!)
    const acked = new Set(idsOf("done "))
    const holding = idsOf("started ").filter((id) => !acked.has(id))
    held += holding.length
    const redone = holding.flatMap((id) => {
      const d = doneAt.get(id)
      return d !== undefined && d.child !== child ? [d.at] : []
    })
    if (redone.length > 0) recoveries.push(Math.max(...redone) - at)
  }
  return { held, recoveries }
}

/**
 * The chaos schedule: every 300–700 ms, SIGKILL a random ready worker and start a
 * replacement, while another worker is up (a replacement takes a second or two to start).
 */
const startChaos = (alive: Set<Child>, spawnOne: () => Child) => {
  const kills: Array<{ child: Child; at: number }> = []
  let finished = false
  const running = (async () => {
    while (!finished) {
      const [lo, hi] = KILL_EVERY_MS
      await new Promise((r) => setTimeout(r, lo + Math.random() * (hi - lo)))
      const ready = [...alive].filter((c) => c.lines.some((l) => l.text === "ready"))
      if (finished || ready.length < 2) continue
      const victim = ready[Math.floor(Math.random() * ready.length)]!
      alive.delete(victim)
      spawnOne()
      await victim.stop("SIGKILL")
      kills.push({ child: victim, at: victim.killedAt! })
    }
  })()
  return {
    kills,
    stop: async () => {
      finished = true
      await running
    },
  }
}

describe("worker crashes", () => {
  it(
    `${JOBS} jobs, ${WORKERS} workers, one SIGKILLed every few hundred ms: all complete, none lost, duplicates only from killed workers`,
    async () => {
      const q = name()
      const keys = queueKeys(q)
      const queue = useQueue<{ n: number }>(q, { connection: server.url })
      await queue.setRetention({ completed: { count: JOBS } }) // every completed job stays, to be counted
      const children: Child[] = []
      const alive = new Set<Child>()
      const options = { leaseMs: LEASE_MS, concurrency: CONCURRENCY, sweep: { intervalMs: 500 } }
      const spawnOne = () => {
        const c = startWorkerChild(server.url, q, WORK, options)
        children.push(c)
        alive.add(c)
        return c
      }
      const started = Date.now()
      const ids: string[] = []
      for (let i = 0; i < JOBS; i += 10_000) {
        const chunk = Array.from({ length: Math.min(10_000, JOBS - i) }, (_, k) => ({
          payload: { n: i + k },
          options: { maxAttempts: 50 },
        }))
        ids.push(...(await queue.addBulk(chunk)))
      }
      for (let i = 0; i < WORKERS; i++) spawnOne()

      const chaos = startChaos(alive, spawnOne)
      onCleanup(chaos.stop)
      await until(`${JOBS} jobs completed`, async () => (await queue.stats()).counters.completed >= JOBS, {
        timeoutMs: size(240_000, 900_000),
        everyMs: 200,
      })
      const elapsedMs = Date.now() - started
      await chaos.stop()
      const kills = chaos.kills

      // the survivors shut down gracefully: nothing left to release
      const survivors = [...alive]
      await Promise.all(survivors.map((c) => c.waitFor((l) => l === "ready", "ready")))
      const exits = await Promise.all(survivors.map((c) => c.stop("SIGTERM")))
      for (const [i, e] of exits.entries()) {
        expect(e.code, `survivor ${survivors[i]!.id} exit`).toBe(0)
        expect(survivors[i]!.lines.at(-1)?.text).toBe("closed")
      }

      // every job completed exactly once on the server, and each is retained in `done`
      const stats = await queue.stats()
      expect(stats).toMatchObject({ waiting: 0, active: 0, delayed: 0, dead: 0 })
      expect(stats.counters.added).toBe(JOBS)
      expect(stats.counters.completed).toBe(JOBS)
      const done = new Set(await raw.zrange(keys.done, "0", "-1"))
      const lost = ids.filter((id) => !done.has(id))
      expect(lost).toEqual([])
      expect(await queue.verify()).toEqual({ violations: 0, jobs: JOBS, lines: [] })

      // who ran what: started/done lines per child
      const { starts, doneAt, leaseLostLines } = runsOf(children)
      // a live worker never lost a lease (no partition, no blocked loop here)
      expect(leaseLostLines).toBe(0)
      const { duplicates, unexplained } = duplicateRuns(starts, new Set(kills.map((k) => k.child)))
      expect(unexplained).toEqual([])
      const { held, recoveries } = heldByKilled(kills, doneAt)
      expect(duplicates).toBeLessThanOrEqual(held)
      // each lost lease on the server belongs to a killed worker: each holds at most
      // `concurrency` running and, with prefetch "auto", leased jobs up to AUTO_PREFETCH_UPTO in all
      expect(stats.counters.lostLeases).toBeLessThanOrEqual(kills.length * Math.max(CONCURRENCY, AUTO_PREFETCH_UPTO))
      expect(stats.counters.lostLeases).toBeGreaterThanOrEqual(duplicates)
      expect(kills.length).toBeGreaterThan(0)

      const recovery = summary(recoveries)
      report("worker-crashes", {
        jobs: JOBS,
        workers: WORKERS,
        concurrency: CONCURRENCY,
        leaseMs: LEASE_MS,
        kills: kills.length,
        lost: lost.length,
        duplicates,
        heldByKilled: held,
        lostLeases: stats.counters.lostLeases,
        recoveryMedianMs: recovery.median,
        recoveryMaxMs: recovery.max,
        elapsedMs,
        jobsPerSecond: Math.round((JOBS / elapsedMs) * 1000),
      })
    },
    size(300_000, 1_200_000),
  )

  it("a live worker never reports a lease lost for a job it completed (heartbeats racing completes)", async () => {
    // regression: a heartbeat whose extend ran just after the job's complete found the lease
    // gone and reported "lease-lost" (and aborted the signal) for a job that had completed
    const q = name("race")
    const jobs = size(5_000, 20_000)
    const queue = useQueue(q)
    const lost: string[] = []
    const abortedAfterReturn: string[] = []
    let completed = 0
    const worker = useWorker(
      q,
      async (job) => {
        await new Promise((r) => setTimeout(r, Math.random() * 3))
        job.signal.addEventListener("abort", () => abortedAfterReturn.push(job.id))
      },
      { concurrency: 64, leaseMs: 5_000, heartbeatMs: 20, sweep: false },
    )
    worker.on("lease-lost", (job, reason) => lost.push(`${job.id} ${reason}`))
    const all = new Promise<void>((resolve) =>
      worker.on("completed", () => {
        if (++completed === jobs) resolve()
      }),
    )
    for (let i = 0; i < jobs; i += 10_000) {
      await queue.addBulk(Array.from({ length: Math.min(10_000, jobs - i) }, (_, n) => ({ payload: i + n })))
    }
    await all
    expect(lost).toEqual([])
    expect(abortedAfterReturn).toEqual([])
    const stats = await queue.stats()
    expect(stats.counters).toMatchObject({ completed: jobs, lostLeases: 0 })
  })
})
