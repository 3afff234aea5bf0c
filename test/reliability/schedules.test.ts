/**
 * Schedules under a fleet and under faults, with real processes: three worker processes
 * (each sweeping in-process) and two loops of `leaseq sweep` tick one `{ every: 1000 }`
 * schedule for 10 s of Redis time: one job per tick, none twice, none run twice. Then every
 * process is stopped and the fleet is down for 30 s — made as Redis sees it: the stored next
 * tick set 30 s in the past, rather than 30 s of waiting — and started again: the missed
 * ticks make one job (the latest), not 30. And a `leaseq sweep` SIGKILLed mid-tick: with its
 * tick call not yet at Redis (the next sweep makes the job, once), and with its tick call
 * delivered after it died (its reply lost: the next sweep makes no second job). And at
 * maxmemory (noeviction) a due tick is refused whole, and made once memory is back.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runScript } from "../../src/engine/calls/Commands.ts"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { decodeEntry } from "../../src/engine/events/EventDecode.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { Queue } from "../../src/index.ts"
import { connect } from "../../src/redis/Client.ts"
import { startRedisServer } from "../../src/testing/RedisServer.ts"
import { type Child, runCli, startChild, startWorkerChild } from "../support/child.ts"
import { onCleanup } from "../support/cleanup.ts"
import { report } from "../support/figures.ts"
import { run } from "../support/jobs.ts"
import { proxyToSuiteRedis } from "../support/proxy.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { redisNow, until } from "../support/until.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("rel-schedules")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

const ticksOf = (ids: ReadonlyArray<string>, s: string) =>
  ids
    .filter((i) => i.startsWith(`${s}@`))
    .map((i) => Number(i.slice(s.length + 1)))
    .sort((a, b) => a - b)

/** The ids of every job added to the queue of `keys` (its `added` events: completed jobs are not kept). */
const addedIds = async (keys: ReturnType<typeof queueKeys>) =>
  (await raw.xrange(keys.events, "-", "+"))
    .flatMap(([id, fields]) => decodeEntry(keys.queue, id, fields))
    .filter((e) => e.kind === "added")
    .map((e) => e.jobId)

/** Three worker processes (in-process sweep every ~3 s, woken at ticks) and two `leaseq sweep` loops. */
const startFleet = (q: string) => {
  const workers: Child[] = Array.from({ length: 3 }, () =>
    startWorkerChild(redisUrl(), q, "work:0", { sweep: { intervalMs: 3000 } }),
  )
  let stop = false
  const failures: string[] = []
  const loops = Array.from({ length: 2 }, async () => {
    while (!stop) {
      const r = await runCli(["sweep", "--url", redisUrl(), "--queue", q, "--json"])
      if (r.code !== 0) failures.push(r.err)
    }
  })
  return {
    workers,
    failures,
    ready: () => Promise.all(workers.map((w) => w.waitFor((l) => l === "ready", "ready"))),
    stop: async () => {
      stop = true
      await Promise.all(loops)
      await Promise.all(workers.map((w) => w.stop("SIGKILL")))
    },
  }
}

describe("schedules in a fleet", () => {
  it("3 workers and 2 leaseq sweep loops for 10 s: one job per tick, none twice; down 30 s: one job for the missed ticks", async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = useQueue(q)
    await queue.schedule("beat", { every: 1000 }, { payload: null })
    const fleet = startFleet(q)
    await fleet.ready()
    const t0 = Math.ceil((await redisNow(raw)) / 1000) * 1000
    // the window's ticks are counted 2 s after it closed: a sweep a little late (a busy
    // machine) still makes the window's last tick, after the window
    await until("12 s of Redis time passed", async () => (await redisNow(raw)) >= t0 + 12_000, { timeoutMs: 60_000 })
    const made = await addedIds(keys)
    const window = ticksOf(made, "beat").filter((t) => t >= t0 && t < t0 + 10_000)
    // every job made was run, by one worker, once
    const started = () => fleet.workers.flatMap((w) => w.lines.filter((l) => l.text.startsWith("started ")))
    await until("every job made has started", () => {
      const ids = new Set(started().map((l) => l.text.split(" ")[1]))
      return made.every((id) => ids.has(id))
    })
    await fleet.stop()
    expect(fleet.failures).toEqual([])
    expect(window.length).toBeGreaterThanOrEqual(9)
    expect(window.length).toBeLessThanOrEqual(10)
    const runs = started().map((l) => l.text.split(" ")[1])
    expect(new Set(runs).size).toBe(runs.length)
    // one job per tick: as many jobs as distinct ticks, and as many as the queue counted added
    const all = ticksOf(await addedIds(keys), "beat")
    expect(new Set(all).size).toBe(all.length)
    expect(Number(await raw.hget(keys.meta, "added"))).toBe(all.length)

    // every process stopped; 30 s of downtime as Redis sees it: the next tick 30 s ago
    const before = new Set(await addedIds(keys))
    const down = Math.floor(((await redisNow(raw)) - 30_000) / 1000) * 1000
    await raw.zadd(keys.schedAt, "XX", down, "beat")
    const restart = await redisNow(raw)
    const again = startFleet(q)
    await until("a job after the restart", async () => (await addedIds(keys)).length > before.size)
    await again.stop()
    const fresh = ticksOf(
      (await addedIds(keys)).filter((id) => !before.has(id)),
      "beat",
    )
    expect(again.failures).toEqual([])
    // no job for the 30 missed ticks but the latest (a storm would start at `down`)
    expect(fresh[0]).toBeGreaterThanOrEqual(Math.floor(restart / 1000) * 1000)
    expect(new Set(fresh).size).toBe(fresh.length)
    report("schedules-fleet", { ticksIn10s: window.length, jobsMade: all.length, afterDowntime: fresh.length })
  })
})

describe("a sweeper SIGKILLed mid-tick", () => {
  /**
   * A `leaseq sweep` through a proxy that holds its requests, let through one at a time
   * until the one held is its tick call; then the sweeper is SIGKILLed.
   */
  const killAtTick = async (q: string) => {
    const proxy = await proxyToSuiteRedis()
    proxy.hold()
    const child = startChild(new URL("../../src/cli/main.ts", import.meta.url).pathname, [
      "sweep",
      "--url",
      proxy.url,
      "--queue",
      q,
    ])
    await until("the sweeper's tick call is held", () => {
      const held = proxy.heldText()
      if (held.includes(Scripts.tick.sha)) return true
      if (held !== "") {
        proxy.flush()
        proxy.hold()
      }
      return false
    })
    await child.stop("SIGKILL")
    return proxy
  }

  const setupDue = async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = useQueue(q)
    const client = connect(redisUrl())
    onCleanup(() => client.close())
    // an hourly schedule made due now: no other tick comes during the test
    await queue.schedule("hourly", { every: 3_600_000 }, { payload: null })
    const due = Math.floor((await redisNow(raw)) / 3_600_000) * 3_600_000
    await raw.zadd(keys.schedAt, "XX", due, "hourly")
    // the tick script known to Redis, so the sweeper's first tick call is one EVALSHA
    expect(await run(runScript(client, keys, Scripts.tick, { name: "none", due: 0, next: 0, at: [] }))).toMatchObject({
      outcome: "stale",
    })
    return { q, keys, due }
  }

  const sweepOnce = async (q: string) => {
    const r = await runCli(["sweep", "--url", redisUrl(), "--queue", q, "--json"])
    expect(r.code).toBe(0)
    return JSON.parse(r.out) as { queues: Array<{ scheduled: number }> }
  }

  it("its tick call never reached Redis: nothing was made, and the next sweep makes the job once", async () => {
    const { q, keys, due } = await setupDue()
    const proxy = await killAtTick(q)
    proxy.cut() // what the dead sweeper had not sent is lost with it
    expect(await raw.hkeys(keys.data)).toEqual([])
    expect((await sweepOnce(q)).queues[0]!.scheduled).toBe(1)
    expect((await sweepOnce(q)).queues[0]!.scheduled).toBe(0)
    expect(await raw.hkeys(keys.data)).toEqual([`hourly@${due}`])
  })

  it("its tick call reached Redis after it died (the reply lost): the next sweep makes no second job", async () => {
    const { q, keys, due } = await setupDue()
    const proxy = await killAtTick(q)
    proxy.flush() // Redis runs what the dead sweeper had sent
    await until("the dead sweeper's tick ran", async () => (await raw.hlen(keys.data)) === 1)
    expect((await sweepOnce(q)).queues[0]!.scheduled).toBe(0)
    expect(await raw.hkeys(keys.data)).toEqual([`hourly@${due}`])
    expect(Number(await raw.hget(keys.meta, "added"))).toBe(1)
  })
})

describe("a due tick at maxmemory", () => {
  it("is refused whole (no job, the next tick unchanged, the sweep says why), and made once memory is back", async () => {
    const server = await startRedisServer()
    onCleanup(() => server.stop())
    const admin = rawClient(server.url)
    onCleanup(() => admin.disconnect())
    const q = name()
    const keys = queueKeys(q)
    const queue = new Queue(q, { connection: server.url })
    onCleanup(() => queue.close())
    // hourly, due since 1970: once made, its next tick is the next hour's (with `every: 1000`
    // a second sweep past the next second boundary made that tick's job too)
    await queue.schedule("r", { every: 3_600_000 }, { payload: null })
    await admin.zadd(keys.schedAt, "XX", 1000, "r")
    await queue.stats() // the connection's scripts loaded before the limit
    const used = Number(/used_memory:(\d+)/.exec(await admin.info("memory"))![1])
    await admin.config("SET", "maxmemory-policy", "noeviction")
    await admin.config("SET", "maxmemory", String(used - 256 * 1024))
    onCleanup(() => admin.config("SET", "maxmemory", "0"))
    const before = await dumpQueue(admin, q)
    expect(await queue.sweep().catch((e) => e)).toMatchObject({
      _tag: "RedisCommandError",
      reason: expect.stringMatching(/OOM/),
    })
    expect(await dumpQueue(admin, q)).toEqual(before)
    await admin.config("SET", "maxmemory", "0")
    expect((await queue.sweep()).scheduled).toBe(1)
    expect((await queue.sweep()).scheduled).toBe(0)
    expect(await admin.hlen(keys.data)).toBe(1)
  })
})
