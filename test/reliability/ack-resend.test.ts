/**
 * A worker's acknowledgement sent on its own (no reserve to ride), whose reply is lost:
 * the proxy drops Redis' replies as the handler returns and cuts the connection once the
 * ack ran on Redis, so ioredis re-sends it on its new connection. The re-send answers what
 * the first run did (its ack lane's record, lua/include/ack-record.lua): `completed` /
 * `failed` events, no `lease-lost`, nothing counted refused (issue 29, G5).
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { proxyToSuiteRedis, type TcpProxy } from "../support/proxy.ts"
import { queueNamer, rawClient } from "../support/redis.ts"
import { redisNow, until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("rel-ack-resend")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

const N = 4
/** A hang guard: after each cut the worker picks the next job up only once its connections are back (seconds). */
const GUARD_MS = 120_000

/** What the worker told. */
interface Told {
  completed: string[]
  failed: string[]
  lost: string[]
}

/**
 * Jobs 0..N-1 arrive one at a time (the next once the last is told); `lossy(attempt)` says
 * whether the handler's attempt ends with its replies dropped (and throws when `fails`).
 * Once the job's dropped ack ran on Redis, the connection is cut and healed; the next job
 * is added once a heartbeat shows the worker's connection back (else its ack would wait
 * in the client's offline queue behind a handshake whose reply the proxy drops).
 */
const run = async (
  q: string,
  proxy: TcpProxy,
  told: Told,
  behave: (payload: number, attempt: number) => "drop-and-complete" | "drop-and-fail" | "complete" | "fail",
) => {
  const keys = queueKeys(q)
  const producer = useQueue<number>(q)
  const worker = useWorker<number>(
    q,
    async (job) => {
      const b = behave(job.payload, job.attempt)
      if (b.startsWith("drop")) proxy.dropReplies()
      if (b.endsWith("fail")) throw new Error(`attempt ${job.attempt} fails`)
    },
    // a failed attempt's retry is woken by a marker pop whose reply the proxy dropped: the
    // worker finds it at its next idle wait's end, blockTimeoutMs (default 5 s) later
    {
      connection: proxy.url,
      concurrency: 4,
      heartbeatMs: 100,
      blockTimeoutMs: 500,
      sweep: false,
      backoff: { type: "fixed", delayMs: 0 },
    },
  )
  worker.on("completed", (job) => told.completed.push(job.id))
  worker.on("failed", (job) => told.failed.push(job.id))
  worker.on("lease-lost", (job) => told.lost.push(job.id))
  const ids: string[] = []
  for (let i = 0; i < N; i++) {
    const id = await producer.add(i)
    ids.push(id)
    // the dropped ack ran: a failure is recorded, or the job completed (retained, the default)
    await until("the job's dropped ack ran on Redis", async () =>
      behave(i, 1) === "drop-and-fail"
        ? (await raw.hget(keys.fails, id)) === "1"
        : (await raw.zscore(keys.done, id)) !== null,
    )
    // a warm-up job's replies were not dropped: nothing to re-send, so no cut (nor a wait for
    // the idle worker's next registry record, which comes only every half lease: ~16 s)
    const dropped = behave(i, 1).startsWith("drop")
    const healedAt = await redisNow(raw)
    if (dropped) {
      proxy.cut()
      proxy.heal()
    }
    await until("the worker told the job's end", async () => told.completed.includes(id) || told.lost.includes(id))
    // the worker's connection is back (a heartbeat ran since), so the next ack is sent, not queued
    if (dropped)
      await until("a heartbeat after the cut", async () => {
        const records = (await raw.hvals(keys.workers)).map((r) => JSON.parse(r) as { lastSeenAt: number })
        return records.some((r) => r.lastSeenAt > healedAt)
      })
  }
  return { ids, stats: await producer.stats() }
}

describe("a worker's ack sent on its own, its reply lost and re-sent by the connection", () => {
  it(
    "complete: every job is told completed, none lease-lost, nothing counted refused",
    async () => {
      const q = name()
      const proxy = await proxyToSuiteRedis()
      const told: Told = { completed: [], failed: [], lost: [] }
      // job 0 warms up (its complete loads the script: a NOSCRIPT reply would be dropped too)
      const { ids, stats } = await run(q, proxy, told, (n) => (n === 0 ? "complete" : "drop-and-complete"))
      expect(told.lost).toEqual([])
      expect(told.completed.sort()).toEqual([...ids].sort())
      expect(stats.counters).toMatchObject({ completed: N, refused: 0, lostLeases: 0 })
    },
    GUARD_MS,
  )

  it(
    "fail then complete: each failure is told failed, each job completed, none lease-lost, nothing refused",
    async () => {
      const q = name()
      const proxy = await proxyToSuiteRedis()
      const told: Told = { completed: [], failed: [], lost: [] }
      // job 0 warms up both scripts; the others' first attempt fails with its replies dropped
      const { ids, stats } = await run(q, proxy, told, (n, attempt) =>
        attempt > 1 ? "complete" : n === 0 ? "fail" : "drop-and-fail",
      )
      expect(told.lost).toEqual([])
      expect(told.failed.sort()).toEqual([...ids].sort())
      expect(told.completed.sort()).toEqual([...ids].sort())
      expect(stats.counters).toMatchObject({ completed: N, failed: N, refused: 0, lostLeases: 0 })
    },
    GUARD_MS,
  )
})
