/**
 * Scenario 6 — sweepers racing. Eight sweepers run at once — four in-process
 * `queue.sweep()` loops, each on its own connection, and four loops of `leaseq sweep`
 * processes — while workers process jobs and waves of engineered leases expire. Every
 * expired lease is reclaimed exactly once: the queue's lost-lease counter, the sum of
 * what the sweepers report, and each job's own lost count all agree.
 */
import { Effect } from "effect"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { Queue, type Worker } from "../../src/index.ts"
import { connect } from "../../src/redis/Client.ts"
import { type Finished, runCli } from "../support/child.ts"
import { report, size } from "../support/figures.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("rel-sweepers")
/** Leases engineered to expire, in batches of BATCH, spread over SPREAD_MS. */
const EXPIRED = size(1_000, 10_000)
const BATCH = 10
const SPREAD_MS = size(6_000, 20_000)
const NORMAL = size(2_000, 20_000)
const IN_PROCESS = 4
const CLI = 4
const LIMIT = 25
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

/** Run `leaseq sweep` once (from source, on this Node); resolves with its exit code and JSON. */
const cliSweep = (queue: string): Promise<Finished> =>
  runCli(["sweep", "--url", redisUrl(), "--queue", queue, "--limit", String(LIMIT), "--json"])

describe("sweepers racing", () => {
  it(`${IN_PROCESS} in-process sweepers and ${CLI} leaseq sweep loops at once: ${EXPIRED} expired leases, each reclaimed exactly once`, async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = useQueue<{ n: number }>(q)
    await queue.setRetention({ completed: { count: EXPIRED + NORMAL } }) // every completed job stays, to be counted
    const sweepQueues = Array.from({ length: IN_PROCESS }, () => new Queue(q, { connection: redisUrl() }))
    const holder = connect(redisUrl())
    const workers: Worker<{ n: number }>[] = []
    let stop = false
    const tally = { inProcess: 0, inProcessCalls: 0, cli: 0, cliRuns: 0, cliFailures: [] as string[] }
    const active = new Set<string>()
    const loops: Promise<void>[] = []
    const started = Date.now()
    try {
      // eight sweepers, all running before the first lease expires
      for (const [i, sq] of sweepQueues.entries()) {
        loops.push(
          (async () => {
            while (!stop) {
              const r = await sq.sweep({ limit: LIMIT })
              tally.inProcess += r.reclaimed
              tally.inProcessCalls += r.calls
              active.add(`in-process-${i}`)
              // pacing (not synchronisation): 0-400 ms between passes, so the CLI sweepers get a share
              await new Promise((resolve) => setTimeout(resolve, Math.random() * 400))
            }
          })(),
        )
      }
      for (let i = 0; i < CLI; i++) {
        loops.push(
          (async () => {
            while (!stop) {
              const r = await cliSweep(q)
              tally.cliRuns++
              if (r.code !== 0) {
                tally.cliFailures.push(`exit ${r.code}: ${r.err}`)
                continue
              }
              tally.cli += JSON.parse(r.out).totals.reclaimed as number
              active.add(`cli-${i}`)
            }
          })(),
        )
      }
      await until("all eight sweepers running", () => active.size === IN_PROCESS + CLI, { timeoutMs: 60_000 })

      // leases whose holder has "died": reserved, never extended, never acked; they expire
      // batch after batch over SPREAD_MS while the sweepers and the workers run
      const holderCommands = makeCommands(holder, keys)
      const engineered = await queue.addBulk(Array.from({ length: EXPIRED }, (_, n) => ({ payload: { n: -1 - n } })))
      const batches = EXPIRED / BATCH
      const leased = await Promise.all(
        Array.from({ length: batches }, (_, b) =>
          Effect.runPromise(holderCommands.reserve(BATCH, 2_000 + Math.round((b * SPREAD_MS) / batches), 1000)),
        ),
      )
      expect(leased.flatMap((r) => r.jobs.map((j) => j.id)).sort()).toEqual([...engineered].sort())
      // all leased before the first one expired
      expect((await queue.stats()).counters.lostLeases).toBe(0)

      // workers process the reclaimed jobs and a stream of fresh ones (long leases: none expires)
      const attempts = new Map<string, number[]>()
      for (let i = 0; i < 2; i++) {
        const w = useWorker<{ n: number }>(
          q,
          async (job) => {
            const list = attempts.get(job.id) ?? []
            list.push(job.attempt)
            attempts.set(job.id, list)
          },
          { concurrency: 16, leaseMs: 30_000, sweep: false },
        )
        workers.push(w)
      }
      const normal: string[] = []
      for (let i = 0; i < NORMAL; i += 500) {
        normal.push(...(await queue.addBulk(Array.from({ length: 500 }, (_, n) => ({ payload: { n: i + n } })))))
      }
      await until("every job completed", async () => (await queue.stats()).counters.completed === EXPIRED + NORMAL, {
        timeoutMs: size(120_000, 600_000),
        everyMs: 100,
      })
      const elapsedMs = Date.now() - started
      stop = true
      await Promise.all(loops)
      await Promise.all(workers.map((w) => w.close()))

      expect(tally.cliFailures).toEqual([])
      const stats = await queue.stats()
      expect(stats).toMatchObject({ waiting: 0, active: 0, delayed: 0, dead: 0 })
      // each expired lease reclaimed exactly once
      expect(stats.counters.lostLeases).toBe(EXPIRED)
      expect(tally.inProcess + tally.cli).toBe(EXPIRED)
      const lost = await raw.hgetall(keys.lost)
      expect(Object.keys(lost).sort()).toEqual([...engineered].sort())
      expect(Object.values(lost).every((n) => n === "1")).toBe(true)
      // each job ran once in the workers: reclaimed ones as attempt 2, fresh ones as attempt 1
      for (const id of engineered) expect(attempts.get(id), id).toEqual([2])
      for (const id of normal) expect(attempts.get(id), id).toEqual([1])
      expect(await queue.verify()).toEqual({ violations: 0, jobs: EXPIRED + NORMAL, lines: [] })

      report("sweepers-racing", {
        sweepers: IN_PROCESS + CLI,
        inProcessSweepers: IN_PROCESS,
        cliSweepers: CLI,
        expirySpreadMs: SPREAD_MS,
        expiredLeases: EXPIRED,
        freshJobs: NORMAL,
        lostLeasesCounter: stats.counters.lostLeases,
        reclaimedByInProcess: tally.inProcess,
        reclaimedByCli: tally.cli,
        inProcessSweepCalls: tally.inProcessCalls,
        cliRuns: tally.cliRuns,
        jobsReclaimedTwice: Object.values(lost).filter((n) => n !== "1").length,
        elapsedMs,
      })
    } finally {
      stop = true
      await Promise.allSettled(loops)
      await Promise.all(workers.map((w) => w.close()))
      await Promise.all(sweepQueues.map((sq) => sq.close()))
      await holder.close()
      await queue.close()
    }
  }, 900_000)
})
