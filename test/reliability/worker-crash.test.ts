/**
 * Scenario 1 — worker crashes. Thousands of jobs, several worker processes; a random
 * worker is SIGKILLed every few hundred ms and a replacement started. The mix has every
 * flow feature: a share of the jobs in a few groups with concurrency caps, a share at
 * priorities other than 0, a queue rate limit above the run's pace, and a schedule
 * ticking every second. At the end every job is completed (each id retained in `done`),
 * none lost, verify is clean, and every job that ran more than once had been held by a
 * worker that was killed: duplicates are at most the leases the killed workers held, lost
 * leases at most kills × concurrency. No group ever ran more than its cap at once (from
 * the handlers' own start/return times and from sampling `groups()`), and the schedule
 * made one job for every tick, none missed, from its first to its last.
 * Flows in the mix: parents of 5 children each (1 job in 20 a child); none runs before each
 * of its children returned, none twice unless a killed worker held it, none is left waiting.
 * Every eighth worker started runs its handlers in worker threads (`isolation: "thread"`,
 * a pool of {@link THREAD_CONCURRENCY}), so a share of the jobs runs in thread mode.
 * One job in 9 has a 6 KB payload (read by reference once a worker leased one); each handler
 * checks its payload. The second test races heartbeats (every 20 ms) against completes.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { AUTO_PREFETCH_UPTO } from "../../src/engine/worker/loop/Prefetch.ts"
import { type LocalRedis, startRedisServer } from "../../src/testing/RedisServer.ts"
import { padOf } from "../fixtures/chaos-pad.ts"
import { type Child, startWorkerChild } from "../support/child.ts"
import { onCleanup } from "../support/cleanup.ts"
import { report, size, summary } from "../support/figures.ts"
import { queueNamer, rawClient } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("rel-crash")
const JOBS = size(20_000, 100_000)
const WORKERS = 4
const LEASE_MS = 3_000
const CONCURRENCY = 32
const WORK = "work:5"
/** Every eighth worker: the same work in a pool of worker threads, small (each thread's start costs the CPU a worker's run needs). */
const THREAD_WORK = "thread-work:5"
const THREAD_CONCURRENCY = 2
/** The chaos schedule (not a synchronisation): a kill every 300–700 ms (see startChaos). */
const KILL_EVERY_MS = [300, 700] as const
/** The groups of the grouped share (every 10th job) and their caps: the default, and g0's own. */
const GROUPS = ["g0", "g1", "g2", "g3"] as const
const GROUP_CAP = 8
const G0_CAP = 4
const capOf = (group: string) => (group === "g0" ? G0_CAP : GROUP_CAP)
/** The queue's rate limit: about twice the pace this test runs at (~700 jobs/s on 2 shared cores), so it bites only at peaks. */
const RATE = { max: 1_500, perMs: 1_000 } as const
/** Flows in the mix: parents with FLOW_CHILDREN children each, 1 job in 20 a child. */
const FLOWS = JOBS / 100
const FLOW_CHILDREN = 5
const FLOW_JOBS = FLOWS * (FLOW_CHILDREN + 1)
/** The schedule ticking every second during the run; its jobs' ids are `chaos-tick@<tick>`. */
const TICK = "chaos-tick"

/** Job `n`'s options in the mix: every 10th grouped (over GROUPS), 3 in 10 at a priority 1–7 (one of them also grouped). */
const optionsOf = (n: number) => ({
  maxAttempts: 50,
  ...(n % 10 === 0 ? { group: GROUPS[Math.floor(n / 10) % GROUPS.length]! } : {}),
  ...(n % 10 < 3 ? { priority: 1 + (n % 7) } : {}),
})

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
 * The most jobs of each group that ran at once, from the handlers' own clocks (CHAOS_TIMES=1):
 * a run lasts from its `started` to its `returned` line, or to the kill of its worker. Both are
 * inside the server's slot (leased before `started`; released after `returned`, or once a sweep
 * reclaims a killed worker's lease), so more runs at once than the cap means the cap failed.
 * At the same millisecond an end counts before a start.
 */
const mostAtOnce = (children: ReadonlyArray<Child>, groupOf: ReadonlyMap<string, string>) => {
  const edges = new Map<string, Array<{ at: number; delta: number }>>()
  const unended: string[] = []
  for (const c of children) {
    for (const run of groupRunsOf(c, groupOf)) {
      if (run.end === undefined) unended.push(`${run.id} child ${c.id}`)
      const list = edges.get(run.group) ?? []
      list.push({ at: run.start, delta: 1 }, { at: run.end ?? Number.POSITIVE_INFINITY, delta: -1 })
      edges.set(run.group, list)
    }
  }
  const most: Record<string, number> = {}
  for (const [group, list] of edges) most[group] = peak(list)
  return { most, unended }
}

/** The runs of grouped jobs in one child: start and end (return, else the kill) on its clock. */
const groupRunsOf = (c: Child, groupOf: ReadonlyMap<string, string>) => {
  const returned = new Map<string, number>()
  for (const l of c.lines) {
    const [kind, id, token, at] = l.text.split(" ")
    if (kind === "returned") returned.set(`${id} ${token}`, Number(at))
  }
  return c.lines.flatMap((l) => {
    const [kind, id, token, , at] = l.text.split(" ")
    const group = kind === "started" ? groupOf.get(id!) : undefined
    if (group === undefined) return []
    return [{ id: `${id} token ${token}`, group, start: Number(at), end: returned.get(`${id} ${token}`) ?? c.killedAt }]
  })
}

/** The highest running sum of `delta`s in time order, an end (-1) before a start at the same ms. */
const peak = (list: Array<{ at: number; delta: number }>) => {
  list.sort((a, b) => a.at - b.at || a.delta - b.delta)
  let now = 0
  let most = 0
  for (const e of list) {
    now += e.delta
    most = Math.max(most, now)
  }
  return most
}

/**
 * The flows' faults (docs/flows.md): a parent that started before one of its children returned
 * (the handlers' clocks, CHAOS_TIMES=1), one that ran again without a killed worker to explain
 * it (duplicateRuns), one not completed.
 */
const flowFaults = (
  children: ReadonlyArray<Child>,
  flows: ReadonlyArray<{ readonly parent: string; readonly children: ReadonlyArray<string> }>,
  killed: ReadonlySet<Child>,
  done: ReadonlySet<string>,
) => {
  const first = (kind: string, at: (parts: string[]) => string | undefined) => {
    const out = new Map<string, number>()
    for (const c of children) {
      for (const l of c.lines) {
        const parts = l.text.split(" ")
        if (parts[0] === kind)
          out.set(parts[1]!, Math.min(out.get(parts[1]!) ?? Number.POSITIVE_INFINITY, Number(at(parts))))
      }
    }
    return out
  }
  const started = first("started", (p) => p[4])
  const returned = first("returned", (p) => p[3])
  const early = flows.filter((f) =>
    f.children.some((c) => (returned.get(c) ?? Number.POSITIVE_INFINITY) > (started.get(f.parent) ?? 0)),
  )
  const { starts } = runsOf(children)
  const parents = new Map(flows.flatMap((f) => (starts.has(f.parent) ? [[f.parent, starts.get(f.parent)!]] : [])))
  const twice = duplicateRuns(parents, killed)
  return {
    early: early.map((f) => f.parent),
    unexplainedTwice: twice.unexplained,
    ranTwice: twice.duplicates,
    stuck: flows.filter((f) => !done.has(f.parent)).map((f) => f.parent),
  }
}

/** The most active of each group seen by sampling `groups()` until `stop`. */
const sampleGroups = (queue: {
  groups: () => Promise<{ groups: ReadonlyArray<{ group: string; active: number }> }>
}) => {
  const most: Record<string, number> = {}
  let finished = false
  const running = (async () => {
    while (!finished) {
      for (const g of (await queue.groups()).groups) most[g.group] = Math.max(most[g.group] ?? 0, g.active)
      await new Promise((r) => setTimeout(r, 50))
    }
  })()
  return {
    most,
    stop: async () => {
      finished = true
      await running
    },
  }
}

/**
 * The chaos schedule: every 300–700 ms, SIGKILL a random ready worker that `killable` allows
 * and start a replacement, while another worker is up (a replacement takes a second or two to
 * start).
 */
const startChaos = (alive: Set<Child>, spawnOne: () => Child, killable: (c: Child) => boolean) => {
  const kills: Array<{ child: Child; at: number }> = []
  let finished = false
  const running = (async () => {
    while (!finished) {
      const [lo, hi] = KILL_EVERY_MS
      await new Promise((r) => setTimeout(r, lo + Math.random() * (hi - lo)))
      const ready = [...alive].filter((c) => c.lines.some((l) => l.text === "ready") && killable(c))
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
    `${JOBS} jobs (groups with caps, priorities, a rate limit, a schedule), ${WORKERS} workers, one SIGKILLed every few hundred ms: all complete, none lost, duplicates only from killed workers, caps held, every tick once`,
    async () => {
      const q = name()
      const keys = queueKeys(q)
      const queue = useQueue<{ n: number }>(q, { connection: server.url })
      // every completed job stays, to be counted (the ticks' too: one a second, well under JOBS)
      await queue.setRetention({ completed: { count: 2 * JOBS } })
      await queue.setGroupLimits({ concurrency: GROUP_CAP })
      await queue.setGroupLimits("g0", { concurrency: G0_CAP })
      await queue.setRateLimit(RATE)
      await queue.schedule(TICK, { every: 1_000 }, { payload: { n: -1 } })
      const children: Child[] = []
      const threadWorkers = new Set<Child>()
      const alive = new Set<Child>()
      const options = { leaseMs: LEASE_MS, concurrency: CONCURRENCY, sweep: { intervalMs: 500 } }
      const spawnOne = () => {
        const threaded = children.length % 8 === 3
        const c = threaded
          ? startWorkerChild(
              server.url,
              q,
              THREAD_WORK,
              { ...options, concurrency: THREAD_CONCURRENCY },
              { CHAOS_TIMES: "1" },
            )
          : startWorkerChild(server.url, q, WORK, options, { CHAOS_TIMES: "1" })
        if (threaded) threadWorkers.add(c)
        children.push(c)
        alive.add(c)
        return c
      }
      const started = Date.now()
      const ids: string[] = []
      for (let i = 0; i < JOBS; i += 10_000) {
        const chunk = Array.from({ length: Math.min(10_000, JOBS - i) }, (_, k) => ({
          // one job in 9 with a payload large enough to be read by reference (the handler checks it)
          payload: (i + k) % 9 === 4 ? { n: i + k, pad: padOf(i + k) } : { n: i + k },
          options: optionsOf(i + k),
        }))
        ids.push(...(await queue.addBulk(chunk)))
      }
      const flows: Array<{ parent: string; children: string[] }> = []
      for (let i = 0; i < FLOWS; i++) {
        const children = Array.from({ length: FLOW_CHILDREN }, () => ({
          payload: { n: -2 },
          options: { maxAttempts: 50 },
        }))
        const tree = await queue.addFlow({ payload: { n: -3 }, options: { maxAttempts: 50 }, children })
        flows.push({ parent: tree.id, children: tree.children.map((c) => c.id) })
      }
      const groupOf = new Map<string, string>()
      for (const [n, id] of ids.entries()) {
        const group = optionsOf(n).group
        if (group !== undefined) groupOf.set(id, group)
      }
      const sampled = sampleGroups(queue)
      onCleanup(sampled.stop)
      for (let i = 0; i < WORKERS; i++) spawnOne()

      // a thread worker is killed only once it completed a job, so some jobs surely ran in
      // threads (the check below) however the random kills fall
      const doneOne = (c: Child) => c.lines.some((l) => l.text.startsWith("done "))
      const chaos = startChaos(alive, spawnOne, (c) => !threadWorkers.has(c) || doneOne(c))
      onCleanup(chaos.stop)
      // every job was added before the first worker, so completed = added means all of them
      // (and the ticks made so far) are done; then stop the schedule and finish its last ticks
      const allDone = async () => {
        const { added, completed } = (await queue.stats()).counters
        return added > JOBS + FLOW_JOBS && completed >= added
      }
      const timing = { timeoutMs: size(240_000, 900_000), everyMs: 200 }
      await until(`${JOBS} jobs completed`, allDone, timing)
      expect(await queue.unschedule(TICK)).toBe(true)
      await until("the last ticks' jobs completed", allDone, timing)
      const elapsedMs = Date.now() - started
      await chaos.stop()
      await sampled.stop()
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
      const done = new Set(await raw.zrange(keys.done, "0", "-1"))
      const lost = ids.filter((id) => !done.has(id))
      expect(lost).toEqual([])
      // the schedule made one job for each tick from its first to its last, none missed
      const ticks = [...done]
        .filter((id) => id.startsWith(`${TICK}@`))
        .map((id) => Number(id.slice(TICK.length + 1)))
        .sort((a, b) => a - b)
      expect(ticks.length).toBeGreaterThan(1)
      const missed = ticks.slice(1).flatMap((t, i) => (t - ticks[i]! === 1_000 ? [] : [`${ticks[i]} -> ${t}`]))
      expect(missed).toEqual([])
      expect(stats.counters.added).toBe(JOBS + FLOW_JOBS + ticks.length)
      expect(stats.counters.completed).toBe(JOBS + FLOW_JOBS + ticks.length)
      expect(await queue.verify()).toEqual({ violations: 0, jobs: JOBS + FLOW_JOBS + ticks.length, lines: [] })

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
      // a share of the jobs ran in thread mode
      const inThreads = [...threadWorkers].reduce(
        (n, c) => n + c.lines.filter((l) => l.text.startsWith("done ")).length,
        0,
      )
      expect(inThreads).toBeGreaterThan(0)
      // every large payload reached its handler whole, by reference or not
      expect(children.flatMap((c) => c.lines.filter((l) => l.text.startsWith("bad-payload ")))).toEqual([])

      // no group ever ran more than its cap at once: by the handlers' clocks, and as sampled
      const ran = mostAtOnce(children, groupOf)
      expect(ran.unended).toEqual([])
      const over = (most: Record<string, number>) =>
        GROUPS.flatMap((g) => ((most[g] ?? 0) > capOf(g) ? [`${g}: ${most[g]} at once, cap ${capOf(g)}`] : []))
      expect(over(ran.most)).toEqual([])
      expect(over(sampled.most)).toEqual([])
      // every group ran several at once (its cap was in play, not an idle limit)
      expect(GROUPS.filter((g) => (ran.most[g] ?? 0) < 2)).toEqual([])

      // flows: 0 parents run early, 0 run twice unless a killed worker held them, 0 stuck
      const flowed = flowFaults(children, flows, new Set(kills.map((k) => k.child)), done)
      expect(stats.waitingChildren).toBe(0)
      expect(flowed).toMatchObject({ early: [], unexplainedTwice: [], stuck: [] })

      const recovery = summary(recoveries)
      report("worker-crashes", {
        jobs: JOBS,
        workers: WORKERS,
        concurrency: CONCURRENCY,
        leaseMs: LEASE_MS,
        kills: kills.length,
        threadWorkers: threadWorkers.size,
        completedInThreads: inThreads,
        lost: lost.length,
        duplicates,
        heldByKilled: held,
        lostLeases: stats.counters.lostLeases,
        grouped: groupOf.size,
        groupMostAtOnce: ran.most,
        groupMostSampled: sampled.most,
        ticks: ticks.length,
        flows: FLOWS,
        parentsRanTwice: flowed.ranTwice,
        limitedRate: stats.counters.limitedRate,
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
      // the race is the 20 ms heartbeats against completes; a lease no stall of a loaded
      // machine outlasts, so a self-fence cannot pass for the bug
      { concurrency: 64, leaseMs: 60_000, heartbeatMs: 20, sweep: false },
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
