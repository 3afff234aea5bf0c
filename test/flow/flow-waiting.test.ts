/**
 * A worker held back by a flow limit waits without polling: while it waits for the rate
 * window to open, or for a RateLimited hold to end, it sends at most two commands a second
 * (counted with MONITOR on a server of the test's own, over the measured wait).
 *
 * The server is fresh, so each script's first call would be two commands (EVALSHA answered
 * NOSCRIPT, then EVAL): under load those first calls drift into the measured wait (11
 * commands counted, 4 of them reloads), so the scripts are loaded before the count starts.
 */
import { describe, expect, it } from "vitest"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { RateLimited } from "../../src/index.ts"
import { startRedisServer } from "../../src/testing/RedisServer.ts"
import { onCleanup } from "../support/cleanup.ts"
import { type Monitor, monitorOf } from "../support/monitor.ts"
import { queueNamer, rawClient } from "../support/redis.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("flow-waiting")

/** The commands clients sent (the commands a script runs show with source "lua"). */
const sentByClients = (monitor: Monitor) => monitor.seen.filter((c) => c.source !== "lua")

/** A server of the test's own with every script loaded, so no call in the count is a NOSCRIPT reload. */
const startLoadedServer = async () => {
  const server = await startRedisServer()
  onCleanup(() => server.stop())
  const raw = rawClient(server.url)
  for (const script of Object.values(Scripts)) await raw.script("LOAD", script.source)
  await raw.quit()
  return server
}

const isLeasingReserve = (args: readonly string[]) =>
  args[0]?.toLowerCase() === "evalsha" && args[1] === Scripts.reserve.sha

describe("a worker held back by a flow limit does not poll", () => {
  it("waiting for the rate window (2 per 4 s): at most two commands a second between the windows", async () => {
    const server = await startLoadedServer()
    const q = name()
    const queue = useQueue<number>(q, { connection: server.url })
    await queue.setRateLimit({ max: 2, perMs: 4_000 })
    await queue.addBulk([1, 2, 3, 4].map((payload) => ({ payload })))
    const monitor = await monitorOf(server.url)
    const startedAt: number[] = []
    let done!: () => void
    const allDone = new Promise<void>((r) => {
      done = r
    })
    const worker = useWorker<number>(q, async () => void startedAt.push(Date.now()), {
      connection: server.url,
      concurrency: 5,
    })
    let completed = 0
    worker.on("completed", () => ++completed === 4 && done())
    await allDone
    await worker.close()
    const seen = sentByClients(monitor)
    // the reserve calls that leased: the first window's and the second's
    const leasing = seen.filter((c) => isLeasingReserve(c.args))
    expect(leasing.length).toBeGreaterThanOrEqual(2)
    const from = seen.find((c) => isLeasingReserve(c.args))!.at
    const to = from + 4 // the second window opens 4 s after the first leases
    const between = seen.filter((c) => c.at > from + 0.05 && c.at < to - 0.05)
    expect(startedAt).toHaveLength(4)
    // completes of the first window's jobs (at most 2), then the wait: ≤ 2 a second over 3.9 s
    expect(between.length).toBeLessThanOrEqual(2 + 8)
  })

  it("held by RateLimited for 3 s: at most two commands a second while held", async () => {
    const server = await startLoadedServer()
    const q = name()
    const queue = useQueue<number>(q, { connection: server.url })
    await queue.addBulk([1, 2, 3].map((payload) => ({ payload })))
    const monitor = await monitorOf(server.url)
    let runs = 0
    let done!: () => void
    const allDone = new Promise<void>((r) => {
      done = r
    })
    const worker = useWorker<number>(
      q,
      async () => {
        if (++runs === 1) throw new RateLimited({ retryAfterMs: 3_000 })
      },
      { connection: server.url, concurrency: 1, prefetch: 0 },
    )
    let completed = 0
    worker.on("completed", () => ++completed === 3 && done())
    await allDone
    await worker.close()
    const seen = sentByClients(monitor)
    const hold = seen.find((c) => c.args[0]?.toLowerCase() === "evalsha" && c.args[1] === Scripts.fail.sha)!
    const between = seen.filter((c) => c.at > hold.at + 0.05 && c.at < hold.at + 2.95)
    expect(between.length).toBeLessThanOrEqual(2 * 3)
    expect(runs).toBe(4)
  })
})
