/**
 * A worker held back by a flow limit waits without polling: while it waits for the rate
 * window to open, or for a RateLimited hold to end, it sends at most two commands a second
 * (counted with MONITOR on a server of the test's own, over the measured wait).
 */
import { connect } from "node:net"
import { describe, expect, it } from "vitest"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { RateLimited } from "../../src/index.ts"
import { startRedisServer } from "../../src/testing/RedisServer.ts"
import { onCleanup } from "../support/cleanup.ts"
import { queueNamer } from "../support/redis.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("flow-waiting")

/**
 * Every command clients send the server, with its time (s on the server clock) and args, from a
 * MONITOR of its own over a plain socket. (An ioredis client in monitor mode can take a MONITOR
 * line that arrives in the same read as its "+OK" for a command reply: "Command queue state
 * error", seen on a fresh clone.)
 */
const monitorOf = async (url: string) => {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname)
  onCleanup(() => socket.destroy())
  socket.setEncoding("utf8")
  const seen: Array<{ at: number; args: string[] }> = []
  let rest = ""
  const started = new Promise<void>((resolve, reject) => {
    socket.once("error", reject)
    socket.on("data", (chunk: string) => {
      rest += chunk
      for (let end = rest.indexOf("\r\n"); end >= 0; end = rest.indexOf("\r\n")) {
        const line = rest.slice(0, end)
        rest = rest.slice(end + 2)
        if (line === "+OK") resolve()
        // +<time> [<db> <source>] "<arg>" …: the commands a script runs show with source "lua",
        // only the commands clients sent count
        const m = /^\+(\d+\.\d+) \[\d+ ([^\]]+)\] (.*)$/.exec(line)
        if (!m || m[2] === "lua") continue
        seen.push({ at: Number(m[1]), args: [...m[3]!.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((a) => a[1]!) })
      }
    })
  })
  socket.write("MONITOR\r\n")
  await started
  return seen
}

const isLeasingReserve = (args: string[]) => args[0]?.toLowerCase() === "evalsha" && args[1] === Scripts.reserve.sha

describe("a worker held back by a flow limit does not poll", () => {
  it("waiting for the rate window (2 per 4 s): at most two commands a second between the windows", async () => {
    const server = await startRedisServer()
    onCleanup(() => server.stop())
    const q = name()
    const queue = useQueue<number>(q, { connection: server.url })
    await queue.setRateLimit({ max: 2, perMs: 4_000 })
    await queue.addBulk([1, 2, 3, 4].map((payload) => ({ payload })))
    const seen = await monitorOf(server.url)
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
    const server = await startRedisServer()
    onCleanup(() => server.stop())
    const q = name()
    const queue = useQueue<number>(q, { connection: server.url })
    await queue.addBulk([1, 2, 3].map((payload) => ({ payload })))
    const seen = await monitorOf(server.url)
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
    const hold = seen.find((c) => c.args[0]?.toLowerCase() === "evalsha" && c.args[1] === Scripts.fail.sha)!
    const between = seen.filter((c) => c.at > hold.at + 0.05 && c.at < hold.at + 2.95)
    expect(between.length).toBeLessThanOrEqual(2 * 3)
    expect(runs).toBe(4)
  })
})
