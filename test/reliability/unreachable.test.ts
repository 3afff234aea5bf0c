/**
 * A worker whose Redis cannot be reached says so. Every failed connection attempt is
 * an `error` event with a `RedisUnavailable` naming the server (host and port); with no
 * `error` listener, one line goes to stderr for a burst of failures (at most one per
 * 30 s), instead of the silence a wrong URL used to get.
 */
import { createServer } from "node:net"
import { describe, expect, it } from "vitest"
import { QueueClosed, RedisUnavailable } from "../../src/engine/model/Errors.ts"
import { Worker } from "../../src/index.ts"
import { captureStderr, onCleanup } from "../support/cleanup.ts"
import { proxyToSuiteRedis, TcpProxy } from "../support/proxy.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"

const q = queueNamer("rel-unreachable")

/** A local port nothing listens on (bound, then closed). */
const closedPort = async (): Promise<number> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe("a worker whose Redis cannot be reached", () => {
  it("emits error with RedisUnavailable naming host and port while it cannot connect, then starts when Redis is back", async () => {
    const proxy = await proxyToSuiteRedis()
    proxy.cut()
    const worker = new Worker(q("url"), async () => {}, { connection: proxy.url })
    onCleanup(() => worker.close())
    onCleanup(() => proxy.heal()) // runs before the close
    const errors: unknown[] = []
    worker.on("error", (e) => errors.push(e))
    const first = await until("an error event", () => errors[0], { timeoutMs: 15_000 })
    expect(first).toBeInstanceOf(RedisUnavailable)
    expect((first as RedisUnavailable).message).toContain(`Redis unavailable at redis://127.0.0.1:${proxy.port}`)
    expect((first as RedisUnavailable).server).toBe(`redis://127.0.0.1:${proxy.port}`)
    proxy.heal()
    await worker.ready
    expect(worker.state).toBe("running")
  })

  it("with no error listener: exactly one stderr line for a burst of connection failures, naming host and port", async () => {
    const stderr = captureStderr()
    const port = await closedPort()
    let attempts = 0
    // ioredis options with a finite retry strategy, so the worker gives up (and the test ends) soon
    const worker = new Worker(q("closed"), async () => {}, {
      connection: {
        host: "127.0.0.1",
        port,
        retryStrategy: (times: number) => {
          attempts++
          return times >= 8 ? null : 10
        },
      },
    })
    onCleanup(() => worker.close())
    // the client gives up after 8 attempts: the worker's start fails
    await expect(worker.ready).rejects.toBeInstanceOf(RedisUnavailable)
    expect(attempts).toBeGreaterThanOrEqual(8)
    expect(stderr).toHaveLength(1)
    expect(stderr[0]).toMatch(/^leaseq worker of queue "rel-unreachable-closed-[^"]+": RedisUnavailable: /)
    expect(stderr[0]).toContain(`127.0.0.1:${port}`)
    expect(stderr[0]).toContain('listen to the "error" event')
    expect(stderr[0]!.endsWith("\n")).toBe(true)
    expect(stderr[0]!.slice(0, -1)).not.toContain("\n")
    expect(worker.state).toBe("failed")
  })

  /**
   * A worker that has not reached Redis holds nothing: it says `starting`, and close() ends
   * at once instead of waiting `shutdownGraceMs` (here 10 minutes, far past the test's
   * timeout) for a start that may never come.
   */
  const closesAtOnce = async (worker: Worker<unknown, unknown>) => {
    expect(worker.state).toBe("starting")
    const closed = new Promise<void>((resolve) => worker.once("closed", resolve))
    const ready = worker.ready.then(
      () => "started",
      (e: unknown) => e,
    )
    await worker.close()
    await closed
    expect(worker.state).toBe("closed")
    expect(await ready).toBeInstanceOf(QueueClosed)
  }

  it("nothing listening on its port: it is starting, and close() ends at once, not after shutdownGraceMs", async () => {
    const worker = new Worker(q("starting-refused"), async () => {}, {
      connection: `redis://127.0.0.1:${await closedPort()}`,
      shutdownGraceMs: 600_000,
    })
    onCleanup(() => worker.close())
    const errors: unknown[] = []
    worker.on("error", (e) => errors.push(e))
    await until("a failed connection attempt", () => errors[0], { timeoutMs: 15_000 })
    await closesAtOnce(worker)
  })

  it("a server that accepts but never answers: it is starting, and close() ends at once", async () => {
    const target = new URL(redisUrl())
    const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 6379) })
    onCleanup(() => proxy.close())
    proxy.freeze()
    const worker = new Worker(q("starting-silent"), async () => {}, {
      connection: proxy.url,
      shutdownGraceMs: 600_000,
    })
    onCleanup(() => worker.close())
    await until("the worker's connection held by the proxy", () => proxy.connections > 0 || undefined)
    await closesAtOnce(worker)
  })
})
