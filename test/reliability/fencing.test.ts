/**
 * Self-fencing follows the heartbeat, and the server keeps a grace: a worker whose
 * heartbeats cannot get through aborts its handler after two failed heartbeats, with a
 * good part of the lease to spare (not 2 %); and a worker process stalled right at its
 * own deadline (SIGSTOP) still finds its job unclaimed when it wakes, because any sweep
 * reclaims a lease only `leaseGraceMs` after that deadline.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { Worker } from "../../src/index.ts"
import { startWorkerChild } from "../support/child.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { leaseToken } from "../support/lease.ts"
import { proxyToSuiteRedis } from "../support/proxy.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { redisNow, until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("fencing")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})
describe("fencing", () => {
  it("K2: heartbeats that cannot get through abort the handler after two failed heartbeats, far from the lease's end", async () => {
    const q = name()
    const keys = queueKeys(q)
    const LEASE_MS = 8_000
    const HEARTBEAT_MS = 2_000
    const proxy = await proxyToSuiteRedis()
    const queue = useQueue(q)
    const started = deferred()
    const finish = deferred()
    const worker = useWorker(
      q,
      async () => {
        started.resolve()
        await finish.promise // ignores its signal: the test watches the fence, not the handler
      },
      { connection: proxy.url, leaseMs: LEASE_MS, heartbeatMs: HEARTBEAT_MS, leaseGraceMs: 0, sweep: false },
    )
    onCleanup(async () => {
      finish.resolve()
      proxy.heal()
    })
    const fenced = deferred<{ reason: string; at: number }>()
    worker.on("lease-lost", (_job, reason) => fenced.resolve({ reason, at: Date.now() }))
    const id = await queue.add({ n: 1 })
    await started.promise
    const firstDeadline = Number(await raw.zscore(keys.active, id))
    await until("a heartbeat through the proxy", async () => Number(await raw.zscore(keys.active, id)) > firstDeadline)

    proxy.cut()
    // the server's deadline for this lease: no heartbeat can raise it any more
    const serverDeadline = Number(await raw.zscore(keys.active, id))
    const { reason, at } = await fenced.promise
    expect(reason).toBe("self-fenced")
    // two and a half heartbeat periods (5 s) after the last extend that got through, so
    // about 3 s of this 8 s lease are left (the old 2 % margin left 160 ms): at least a
    // quarter (same machine, same clock: Redis TIME vs Date.now)
    expect(serverDeadline - at).toBeGreaterThan(LEASE_MS / 4)
  })

  it("K2: a worker process stalled (SIGSTOP) at its own deadline wakes to find its job unclaimed: the sweep waits leaseGraceMs", async () => {
    const q = name()
    const keys = queueKeys(q)
    const LEASE_MS = 3_000
    const GRACE_MS = 2_000
    const queue = useQueue(q)
    const child = startWorkerChild(redisUrl(), q, "work:60000", {
      leaseMs: LEASE_MS,
      heartbeatMs: 1_000,
      leaseGraceMs: GRACE_MS,
      sweep: false,
    })
    onCleanup(async () => {
      child.process.kill("SIGCONT")
      await child.stop()
    })
    await child.waitFor((l) => l === "ready", "ready")
    const id = await queue.add({ n: 1 })
    const startedLine = await child.waitFor((l) => l.startsWith(`started ${id}`), "started")
    const token = startedLine.text.split(" ")[2]!
    const firstDeadline = Number(await raw.zscore(keys.active, id))
    await until("a heartbeat", async () => Number(await raw.zscore(keys.active, id)) > firstDeadline)

    child.process.kill("SIGSTOP")
    // a heartbeat sent just before the stop may still land: read the deadline once Redis has it
    await raw.ping()
    const serverDeadline = Number(await raw.zscore(keys.active, id))
    // the deadline the worker itself counted on (the server's, less the grace) passes
    const ownDeadline = serverDeadline - GRACE_MS
    await until("Redis time past the worker's own deadline", async () => (await redisNow(raw)) > ownDeadline + 200)
    expect(Number(await raw.zscore(keys.active, id))).toBe(serverDeadline)
    // a sweep now (any sweep: a worker's, or cron's) leaves the lease alone
    const early = await queue.sweep()
    expect(early.reclaimed).toBe(0)
    expect(await leaseToken(raw, keys, id)).toBe(token)

    // the worker wakes and fences itself while the job is still its own
    child.process.kill("SIGCONT")
    await child.waitFor((l) => l === `lease-lost ${id} ${token} self-fenced`, "self-fenced")
    expect(child.lines.some((l) => l.text.startsWith(`aborted ${id} ${token}`))).toBe(true)

    // only past the grace is the job reclaimed for someone else
    const reclaimed = await until("the lease reclaimed after the grace", async () => {
      const r = await queue.sweep()
      return r.reclaimed > 0 ? { at: await redisNow(raw) } : false
    })
    expect(reclaimed.at).toBeGreaterThanOrEqual(serverDeadline)
    expect(await leaseToken(raw, keys, id)).toBeNull()
  })

  it("K2: leaseGraceMs and shutdownAbortGraceMs are checked, with errors naming the field, the value and the range", () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ leaseGraceMs: -1 }, "invalid option leaseGraceMs = -1: must be from 0 to 86400000"],
      [{ leaseGraceMs: 1.5 }, "invalid option leaseGraceMs = 1.5: must be a whole number from 0 to 86400000"],
      [
        { shutdownAbortGraceMs: "5s" },
        'invalid option shutdownAbortGraceMs = "5s": must be a whole number from 0 to 3600000',
      ],
    ]
    for (const [options, message] of bad) {
      expect(() => new Worker(name(), async () => undefined, { connection: redisUrl(), ...options })).toThrow(message)
    }
  })

  it("S5: a reserve answered late (Redis stalled past the fence) starts its job with a fresh deadline, not self-fenced", async () => {
    const q = name()
    const queue = useQueue<{ n: number }>(q)
    const first = await queue.add({ n: 1 })
    const second = await queue.add({ n: 2 })
    const started = deferred()
    const finish = deferred()
    const worker = useWorker<{ n: number }>(
      q,
      async (job) => {
        if (job.id === first) {
          started.resolve()
          await finish.promise
        } else {
          await new Promise((resolve) => setTimeout(resolve, 1_200)) // work, longer than the fence loop's period
        }
        return job.payload.n
      },
      // one slot: the next reserve goes out when the first job finishes, while Redis is stalled
      { concurrency: 1, leaseMs: 3_000, leaseGraceMs: 0, sweep: false },
    )
    const pauser = rawClient()
    onCleanup(async () => {
      await pauser.call("CLIENT", "UNPAUSE")
      pauser.disconnect()
      finish.resolve()
    })
    const events: string[] = []
    worker.on("completed", (job) => events.push(`completed ${job.id}`))
    worker.on("lease-lost", (job, reason) => events.push(`lease-lost ${job.id} ${reason}`))
    await started.promise

    // the reserve sent now runs 4 s later: past the 2.5 s the worker counts from its send
    await pauser.call("CLIENT", "PAUSE", "4000", "WRITE")
    finish.resolve()
    await until("a script call held by the pause (the next reserve)", async () => {
      const list = String(await raw.call("CLIENT", "LIST"))
      return list.split("\n").some((line) => / flags=b /.test(line) && / cmd=evalsha /.test(line))
    })
    await until("both jobs ended", () => events.length >= 2 && events.some((e) => e.includes(second)))
    expect(events).toEqual([`completed ${first}`, `completed ${second}`])
    const stats = await queue.stats()
    expect(stats.counters).toMatchObject({ completed: 2, lostLeases: 0 })
  })
})
