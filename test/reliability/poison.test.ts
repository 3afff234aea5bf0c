/**
 * Scenario 5 — a poison job. Its handler SIGKILLs its own worker process, every time.
 * Each time its lease runs out a sweep reclaims it (one lost lease); after maxAttempts it
 * goes to dead with reason `lease-expired`. Every other job completes, and none of them
 * loses a lease (workers run one job at a time, so only the poison job dies with them) but
 * those a worker starved of CPU lost and told (`lease-lost`): they are counted apart.
 * Exactly maxAttempts workers die, and the poison job starts at attempts 1, 2 and 3.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { type Child, startWorkerChild } from "../support/child.ts"
import { report, size } from "../support/figures.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("rel-poison")
const JOBS = size(300, 3_000)
const WORKERS = 2
const MAX_ATTEMPTS = 3
const LEASE_MS = 500
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

describe("poison job", () => {
  it(`a job that kills its worker goes to dead after ${MAX_ATTEMPTS} lost leases (lease-expired); ${JOBS} others all complete`, async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = useQueue(q)
    const children: Child[] = []
    let stopping = false
    const options = { leaseMs: LEASE_MS, concurrency: 1, sweep: { intervalMs: 100 } }
    /** Keep WORKERS workers running: when one dies, start another. */
    const supervise = (): void => {
      const c = startWorkerChild(redisUrl(), q, "poison", options)
      children.push(c)
      void c.ended.then(() => {
        if (!stopping) supervise()
      })
    }
    const started = Date.now()
    await queue.setRetention({ completed: { count: JOBS * 2 } }) // every completed job stays, to be counted
    try {
      const [poison] = await queue.addBulk([{ payload: { poison: true }, options: { maxAttempts: MAX_ATTEMPTS } }])
      const ids = await queue.addBulk(Array.from({ length: JOBS }, (_, n) => ({ payload: { n } })))
      for (let i = 0; i < WORKERS; i++) supervise()

      const stats = await until(
        "the poison job dead and every other job completed",
        async () => {
          const s = await queue.stats()
          return s.dead === 1 && s.counters.completed === JOBS && s.waiting === 0 && s.active === 0 && s
        },
        { timeoutMs: size(120_000, 600_000), everyMs: 100 },
      )
      const elapsedMs = Date.now() - started
      stopping = true
      await Promise.all(children.map((c) => c.stop("SIGTERM")))

      // the poison job: dead, reason lease-expired, three lost leases, no failure
      const { jobs } = await queue.deadJobs()
      expect(jobs).toHaveLength(1)
      expect(jobs[0]).toMatchObject({ id: poison, failures: 0, lostLeases: MAX_ATTEMPTS })
      expect(jobs[0]!.error).toMatchObject({ reason: "lease-expired" })
      // it took down one worker per attempt, and nothing else did
      const suicides = children.filter((c) => c.process.signalCode === "SIGKILL")
      expect(suicides).toHaveLength(MAX_ATTEMPTS)
      const poisonStarts = children.flatMap((c) => c.lines.filter((l) => l.text.startsWith(`started ${poison} `)))
      expect(poisonStarts.map((l) => l.text.split(" ")[3]).sort()).toEqual(["1", "2", "3"])
      // the others: all completed, none ran twice, and none lost a lease but those a worker
      // starved of CPU (a loaded machine) lost and said so (a lease-lost line): each of those
      // ran once more. A loss no worker told of (the poison took it down with its worker) fails.
      const starved = children.flatMap((c) =>
        c.lines.map((l) => l.text).filter((t) => t.startsWith("lease-lost ") && !t.startsWith(`lease-lost ${poison} `)),
      )
      const starvedJobs = new Set(starved.map((t) => t.split(" ")[1]))
      expect(stats.counters).toMatchObject({
        completed: JOBS,
        lostLeases: MAX_ATTEMPTS + starved.length,
        failed: 0,
        dead: 1,
      })
      const done = new Set(await raw.zrange(keys.done, "0", "-1"))
      expect(ids.filter((id) => !done.has(id))).toEqual([])
      expect(await raw.hlen(keys.lost)).toBe(1 + starvedJobs.size)
      const starts = children.flatMap((c) => c.lines.filter((l) => l.text.startsWith("started ")))
      expect(starts).toHaveLength(JOBS + MAX_ATTEMPTS + starved.length)
      expect(await queue.verify()).toMatchObject({ violations: 0, jobs: JOBS + 1 })

      report("poison-job", {
        jobs: JOBS,
        maxAttempts: MAX_ATTEMPTS,
        workerKills: suicides.length,
        poisonLostLeases: jobs[0]!.lostLeases,
        poisonDeadReason: (jobs[0]!.error as { reason: string }).reason,
        othersCompleted: stats.counters.completed,
        othersLostLeases: stats.counters.lostLeases - MAX_ATTEMPTS,
        starvedLostLeases: starved.length,
        elapsedMs,
      })
    } finally {
      stopping = true
      await Promise.all(children.map((c) => c.stop("SIGKILL")))
      await queue.close()
    }
  }, 900_000)
})
