/**
 * Scenario 2 — Redis crashes. A dedicated redis-server with `--appendonly yes
 * --appendfsync always` is `kill -9`ed while producers add and workers (child processes)
 * complete jobs, then restarted on the same port and directory. Every `add` that resolved
 * with an id — before or after the crash — exists afterwards and is completed; the
 * workers reconnect by themselves; nothing is lost and verify is clean.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { freePort, type LocalRedis, startRedisServer } from "../../src/testing/RedisServer.ts"
import { type Child, startWorkerChild } from "../support/child.ts"
import { onCleanup } from "../support/cleanup.ts"
import { report, size } from "../support/figures.ts"
import { queueNamer, rawClient } from "../support/redis.ts"
import { tempDir } from "../support/tmp.ts"
import { until } from "../support/until.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("rel-redis-crash")
const BEFORE_CRASH = size(3_000, 20_000)
const TOTAL = size(6_000, 40_000)
const PRODUCERS = 8
const WORKERS = 3
const AOF = ["--appendonly", "yes", "--appendfsync", "always"]

let tmp: ReturnType<typeof tempDir>
beforeAll(() => {
  tmp = tempDir("aof")
})
afterAll(() => {
  tmp.remove()
})

/** When `worker` first printed "done" at or after `since`; undefined if it has not. */
const firstDoneSince = (worker: Child, since: number): number | undefined =>
  worker.lines.find((l) => l.at >= since && l.text.startsWith("done "))?.at

/** How many job starts, over all workers, were a job's second or later start. */
const duplicateStarts = (workers: ReadonlyArray<Child>): number => {
  const starts = workers.flatMap((w) => w.lines.filter((l) => l.text.startsWith("started ")))
  return starts.length - new Set(starts.map((l) => l.text.split(" ")[1])).size
}

describe("Redis crash", () => {
  it(`kill -9 of Redis (AOF, fsync always) mid-run: every add that resolved survives and completes; workers reconnect`, async () => {
    const q = name()
    const keys = queueKeys(q)
    const port = await freePort()
    let server: LocalRedis = await startRedisServer({ port, dir: tmp.dir, args: AOF })
    onCleanup(() => server.stop()) // the server running at the end: the one restarted after the crash
    const url = server.url
    const queue = useQueue<{ n: number }>(q, { connection: url })
    await queue.setRetention({ completed: { count: TOTAL * 2 } }) // every completed job stays, to be counted
    const workers: Child[] = []
    let producing = true
    const resolved: Array<{ id: string; at: number }> = []
    const rejected: string[] = []
    let n = 0
    const producers: Promise<void>[] = []
    onCleanup(async () => {
      producing = false
      await Promise.allSettled(producers)
    })
    for (let i = 0; i < WORKERS; i++) {
      workers.push(
        startWorkerChild(url, q, "work:2", {
          leaseMs: 2_000,
          concurrency: 16,
          sweep: { intervalMs: 500 },
        }),
      )
    }
    await Promise.all(workers.map((w) => w.waitFor((l) => l === "ready", "ready")))
    for (let p = 0; p < PRODUCERS; p++) {
      producers.push(
        (async () => {
          while (producing && resolved.length + rejected.length < TOTAL) {
            try {
              const id = await queue.add({ n: n++ })
              resolved.push({ id, at: Date.now() })
            } catch (e) {
              rejected.push((e as { _tag?: string })._tag ?? String(e))
            }
          }
        })(),
      )
    }
    await until(`${BEFORE_CRASH} adds resolved`, () => resolved.length >= BEFORE_CRASH, { timeoutMs: 120_000 })
    // jobs in flight right now: leased, being completed
    await until("workers completing jobs", () => workers.every((w) => w.lines.some((l) => l.text.startsWith("done "))))

    server.process.kill("SIGKILL")
    await new Promise((r) => server.process.once("exit", r))
    const crashedAt = Date.now()
    const resolvedBeforeCrash = resolved.length
    server = await startRedisServer({ port, dir: tmp.dir, args: AOF })
    const restartedAt = Date.now()

    await Promise.all(producers)
    producing = false
    const raw = rawClient(url)
    onCleanup(() => raw.disconnect())
    const all = await until(
      "every job finished after the restart",
      async () => {
        const s = await queue.stats()
        return s.waiting === 0 && s.active === 0 && s.delayed === 0 && s
      },
      { timeoutMs: size(120_000, 600_000), everyMs: 200 },
    )
    const recoveredAt = Date.now()

    // every add that resolved with an id exists and is completed
    const done = new Set(await raw.zrange(keys.done, "0", "-1"))
    const lost = resolved.filter((r) => !done.has(r.id))
    expect(lost).toEqual([])
    expect(all.dead).toBe(0)
    expect(await queue.verify()).toMatchObject({ violations: 0 })
    // every worker reconnected by itself and completes jobs after the restart. The jobs left at
    // the restart may all go to the workers that reconnected first (ioredis backs off per
    // connection), so give them more work, batch by batch, until each one has done a job.
    const doneSinceRestart = (w: Child) => firstDoneSince(w, restartedAt) !== undefined
    await until(
      "every worker completed a job after the restart",
      async () => {
        if (workers.every(doneSinceRestart)) return true
        if ((await queue.stats()).waiting === 0) {
          await queue.addBulk(Array.from({ length: 48 }, (_, i) => ({ payload: { n: -1 - i } })))
        }
        return false
      },
      { timeoutMs: 60_000, everyMs: 100 },
    )
    // …and closes cleanly
    const exits = await Promise.all(workers.map((w) => w.stop("SIGTERM")))
    expect(exits.map((e) => e.code)).toEqual(workers.map(() => 0))
    for (const w of workers) expect(doneSinceRestart(w), `worker ${w.id}`).toBe(true)
    const firstDoneAfter = Math.min(...workers.map((w) => firstDoneSince(w, restartedAt)!))

    const duplicates = duplicateStarts(workers)
    report("redis-crash", {
      addsResolved: resolved.length,
      addsResolvedBeforeCrash: resolvedBeforeCrash,
      addsRejected: rejected.length,
      rejectedAs: [...new Set(rejected)],
      jobsInRedis: done.size,
      lost: lost.length,
      duplicates,
      lostLeases: all.counters.lostLeases,
      downtimeMs: restartedAt - crashedAt,
      restartToFirstCompleteMs: firstDoneAfter - restartedAt,
      restartToAllDoneMs: recoveredAt - restartedAt,
    })
  }, 900_000)
})
