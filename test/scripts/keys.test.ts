/**
 * The key layout holds: a fixed, small key set per queue (no key per job), and every
 * key a script touches is declared in that call's KEYS (checked with MONITOR).
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { KEY_NAMES, queueKeys } from "../../src/engine/model/Keys.ts"
import { startRedisServer } from "../../src/testing/RedisServer.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { type Monitored, monitorOf } from "../support/monitor.ts"
import { queueNamer, rawClient } from "../support/redis.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("keys")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

const keysOf = async (queue: string): Promise<string[]> => {
  const found: string[] = []
  let cursor = "0"
  do {
    const [next, batch] = await raw.scan(cursor, "MATCH", `leaseq:{${queue}}:*`, "COUNT", 1000)
    cursor = next
    found.push(...batch)
  } while (cursor !== "0")
  return found.sort()
}

const drain = async (
  queue: string,
  n: number,
  handler: (job: { attempt: number; payload: number }) => Promise<void>,
) => {
  let settled = 0
  await new Promise<void>((resolve, reject) => {
    const worker = useWorker<number>(queue, handler, {
      concurrency: 100,
      backoff: { type: "fixed", delayMs: 0 },
    })
    const hit = () => {
      if (++settled === n) worker.close().then(resolve, reject)
    }
    worker.on("completed", hit)
    worker.on("dead", hit)
  })
}

describe("no key per job", () => {
  it("after 10,000 jobs pass through a queue its key count is the same as after 1", async () => {
    const one = name("one")
    const many = name("many")
    const q1 = useQueue<number>(one)
    const qn = useQueue<number>(many)
    await q1.add(0, { maxAttempts: 1 })
    await drain(one, 1, async () => {})
    for (let i = 0; i < 10_000; i += 2_000) {
      await qn.addBulk(Array.from({ length: 2_000 }, (_, k) => ({ payload: i + k, options: { maxAttempts: 1 } })))
    }
    const peak = await keysOf(many)
    expect(peak.length).toBeLessThanOrEqual(KEY_NAMES.length)
    // a few jobs fail for good, so dead, err and errors are used too
    await drain(many, 10_000, async (job) => {
      if (job.payload % 1000 === 0) throw new Error("poison")
    })
    const after = await keysOf(many)
    const afterOne = await keysOf(one)
    expect((await qn.stats()).counters.completed).toBe(9_990)
    expect(after.length).toBeLessThanOrEqual(KEY_NAMES.length)
    // the same key names, but for the dead-letter keys the failing jobs needed (and the
    // per-job hashes retained jobs keep, which one job may or may not leave), and the
    // wake-up marker: a retry sets it, and whether a worker pops it (waking) or leases the
    // retried job while busy (leaving it set, a harmless wake-up hint) depends on timing
    const varying = ["marker", "dead", "err", "errors", "data", "max", "fails"]
    const suffixes = (ks: string[]) =>
      ks.map((k) => k.slice(k.lastIndexOf(":") + 1)).filter((s) => !varying.includes(s))
    expect(suffixes(after)).toEqual(suffixes(afterOne))
  })
})

/** Every leaseq key a script touched that its call did not declare in KEYS, and the scripts seen (source "lua": run by a script). */
const undeclaredKeys = (events: ReadonlyArray<Monitored>) => {
  const undeclared: string[] = []
  const scripts = new Set<string>()
  let declared: Set<string> | undefined
  for (const { source, args } of events) {
    if (source === "lua") {
      const touched = args.slice(1).filter((a) => a.startsWith("leaseq:{") && !declared?.has(a))
      undeclared.push(...touched.map((a) => `${args.join(" ").slice(0, 120)} touches ${a}`))
      continue
    }
    const cmd = args[0]?.toLowerCase()
    declared = cmd === "evalsha" || cmd === "eval" ? new Set(args.slice(3, 3 + Number(args[2]))) : undefined
    if (declared) scripts.add(cmd === "eval" ? String(args[1]).slice(0, 60) : String(args[1]))
  }
  return { undeclared, scripts }
}

/** Every script path once: add (dedupe, delayed, bulk), complete, fail, dead, retry, heartbeat, release, sweep, reads. */
const lifecycle = async (url: string) => {
  const q = "lifecycle"
  const queue = useQueue<number>(q, { connection: url })
  await queue.setRetention({ completed: { count: 1 } })
  await queue.add(1, { dedupeKey: "d", dedupeTtlMs: 10 })
  await queue.add(2, { delayMs: 1 })
  await queue.addBulk([{ payload: 3, options: { maxAttempts: 1 } }, { payload: 4 }])
  await new Promise<void>((resolve) => {
    let n = 0
    const worker = useWorker<number>(
      q,
      async (job) => {
        if (job.payload === 3) throw new Error("to dead")
        if (job.payload === 4 && job.attempt === 1) throw new Error("retry")
        await new Promise((r) => setTimeout(r, 40)) // long enough for a heartbeat (leaseMs 100)
      },
      { connection: url, concurrency: 4, leaseMs: 100, backoff: { type: "fixed", delayMs: 0 } },
    )
    const hit = () => {
      if (++n === 4) worker.close().then(() => resolve())
    }
    worker.on("completed", hit)
    worker.on("dead", hit)
  })
  // release and sweep paths
  await queue.add(5)
  const started = deferred()
  const worker = useWorker<number>(
    q,
    async (job) => {
      started.resolve()
      await new Promise((r) => job.signal.addEventListener("abort", r))
    },
    { connection: url, shutdownGraceMs: 0 },
  )
  await started.promise
  await worker.close()
  await queue.sweep()
  await queue.stats()
  const { jobs } = await queue.deadJobs()
  await queue.retryDead([jobs[0]!.id])
  await queue.purgeDead(["nothing"])
  await queue.verify()
  // look-up and steering calls
  const probe = await queue.add(6, { dedupeKey: "u", dedupeUntil: "finished" })
  await queue.getJob(probe)
  await queue.pause()
  await queue.resume()
  await queue.clearDedupe("u")
  await queue.cancel(probe)
  // schedules: create, a due tick made by a sweep, list, remove
  await queue.schedule("s", { every: 1000 }, { payload: 7, options: { maxAttempts: 2, timeoutMs: 5000 } })
  const raw = rawClient(url)
  onCleanup(() => raw.disconnect())
  await raw.zadd(queueKeys(q).schedAt, "XX", 1000, "s")
  await queue.sweep()
  await queue.schedules()
  await queue.unschedule("s")
  await queue.close()
}

describe("every key declared", () => {
  it("every key any script touches is in that call's KEYS (MONITOR over a full lifecycle)", async () => {
    const server = await startRedisServer()
    onCleanup(() => server.stop())
    const monitor = await monitorOf(server.url)
    await lifecycle(server.url)
    await monitor.caughtUp()
    const events = monitor.seen
    const { undeclared, scripts } = undeclaredKeys(events)
    expect(events.filter((e) => e.source === "lua").length).toBeGreaterThan(50)
    // add, reserve, extend, complete, fail, release, sweep, stats, dead-list, dead-retry, dead-purge, verify, open
    expect(scripts.size).toBeGreaterThanOrEqual(13)
    expect(undeclared).toEqual([])
  })
})
