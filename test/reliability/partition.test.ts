/**
 * Scenario 3 — partition. One worker reaches Redis through a TCP proxy (node:net, on
 * 127.0.0.1); the proxy is cut (every connection destroyed, new ones refused) for longer
 * than the lease. The cut-off worker aborts its handler (self-fencing) *before* the lease's
 * deadline on the server; another worker reclaims and completes the job; the cut-off
 * worker's late complete is refused; the queue records one completion. The only timing
 * asserted is an order on one clock: the abort's Date.now() against the lease's deadline
 * in Redis TIME, both on this machine.
 */
import { Effect } from "effect"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import type { Job, Worker } from "../../src/index.ts"
import { connect } from "../../src/redis/Client.ts"
import { deferred } from "../support/cleanup.ts"
import { report } from "../support/figures.ts"
import { TcpProxy } from "../support/proxy.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("rel-partition")
const LEASE_MS = 3_000
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

describe("partition", () => {
  it("a worker cut off from Redis for longer than its lease self-fences before the server deadline; the job completes once elsewhere", async () => {
    const q = name()
    const keys = queueKeys(q)
    const target = new URL(redisUrl())
    const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 6379) })
    const queue = useQueue(q)
    const started = deferred<Job<unknown>>()
    const aborted = deferred<number>()
    const finish = deferred()
    let cutOffCompleted = 0
    const lostReasons: string[] = []
    const cutOff = useWorker(
      q,
      async (job) => {
        job.signal.addEventListener("abort", () => aborted.resolve(Date.now()))
        started.resolve(job)
        // ignores the signal on purpose: keeps "working" until the test lets it return
        await finish.promise
        return "late"
      },
      { connection: proxy.url, leaseMs: LEASE_MS, sweep: false },
    )
    cutOff.on("completed", () => cutOffCompleted++)
    cutOff.on("lease-lost", (_job, reason) => lostReasons.push(reason))
    let other: Worker | undefined
    try {
      await cutOff.ready
      const id = await queue.add({ n: 1 })
      const held = await started.promise
      expect(held.id).toBe(id)
      // a heartbeat has gone through the proxy (the local deadline is then from a real extend)
      const firstDeadline = Number(await raw.zscore(keys.active, id))
      await until(
        "a heartbeat through the proxy",
        async () => Number(await raw.zscore(keys.active, id)) > firstDeadline,
      )

      proxy.cut()
      const cutAt = Date.now()
      // the server's deadline for this lease: nothing can raise it any more
      const serverDeadline = Number(await raw.zscore(keys.active, id))
      expect(serverDeadline).toBeGreaterThan(0)

      const second = deferred<{ job: Job<unknown>; startedAt: number }>()
      const completedElsewhere = deferred<Job<unknown>>()
      other = useWorker(
        q,
        async (job) => {
          second.resolve({ job, startedAt: Date.now() })
          return "ok"
        },
        { leaseMs: LEASE_MS, sweep: { intervalMs: 100 } },
      )
      other.on("completed", (job) => completedElsewhere.resolve(job))

      // the cut-off worker aborts its handler on its own (it cannot hear from Redis)
      const abortedAt = await aborted.promise
      expect(held.signal.aborted).toBe(true)
      expect((held.signal.reason as Error).name).toBe("LeaseLost")
      expect(lostReasons).toEqual(["self-fenced"])
      // … before the server deadline (same machine, same clock: Redis TIME vs Date.now)
      expect(abortedAt).toBeLessThan(serverDeadline)

      // the other worker gets the job only once the lease has expired on the server
      const { job: again, startedAt } = await second.promise
      expect(again.id).toBe(id)
      expect(again.attempt).toBe(2)
      expect(again.token).toBeGreaterThan(held.token)
      expect(startedAt).toBeGreaterThanOrEqual(serverDeadline)
      await completedElsewhere.promise

      // heal: the cut-off worker's handler returns now; nothing of it is acknowledged
      proxy.heal()
      finish.resolve()
      const client = connect(redisUrl())
      const late = await Effect.runPromise(
        makeCommands(client, keys).complete([{ id, token: held.token, result: '"late"' }]),
      )
      await client.close()
      expect(late).toEqual([false])
      await cutOff.close()
      expect(cutOffCompleted).toBe(0)
      const stats = await queue.stats()
      expect(stats.counters).toMatchObject({ completed: 1, lostLeases: 1 })
      expect(stats).toMatchObject({ waiting: 0, active: 0, dead: 0 })
      expect(await queue.verify()).toMatchObject({ violations: 0 })

      report("partition", {
        leaseMs: LEASE_MS,
        abortedBeforeServerDeadlineMs: serverDeadline - abortedAt,
        cutToAbortMs: abortedAt - cutAt,
        cutToCompletedElsewhereMs: startedAt - cutAt,
        completed: stats.counters.completed,
        lostLeases: stats.counters.lostLeases,
        lateCompleteRefused: late[0] === false,
      })
    } finally {
      finish.resolve()
      proxy.heal()
      await Promise.all([cutOff.close(), other?.close()])
      await queue.close()
      await proxy.close()
    }
  })

  /**
   * ioredis re-sends, after a reconnect, every command that was sent but not answered. An
   * add whose reply was lost on the way back has already run; its re-send carries the same
   * request id, finds the receipt the first run left and writes nothing (lua/add.lua).
   */
  it("an add whose reply is lost to a dropped connection is stored once", async () => {
    const q = name("resend")
    const keys = queueKeys(q)
    const target = new URL(redisUrl())
    const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 6379) })
    const producer = useQueue(q, { connection: proxy.url })
    try {
      await producer.add("warm-up")
      proxy.dropReplies()
      const pending = producer.add("once")
      await until("the add ran on Redis", async () => (await raw.llen(keys.wait)) === 2)
      // the reply is lost and the connection drops; ioredis reconnects and re-sends the add
      proxy.cut()
      proxy.heal()
      const id = await pending
      const entries = (await raw.lrange(keys.wait, 0, -1)).filter((e) => e === id || e.startsWith(`${id}|`))
      expect(entries).toHaveLength(1)
      expect(Number(await raw.hget(keys.meta, "added"))).toBe(2)
    } finally {
      await producer.close()
      await proxy.close()
    }
  })
})
