/**
 * A connection replaced as silent fails what was pending on it, whatever state ioredis
 * had it in. ioredis leaves the calls of a connection disconnected while it waits to
 * reconnect pending for ever (its offline queue, and the calls it keeps to send again
 * after a reconnect: no `close` follows); a reserve stranded so kept its worker's slot
 * spoken for, and the job it would have leased stayed waiting (the "lease lost on expiry"
 * case of queue-behaviour failed so about 1 run in 8 under load).
 *
 * The faults are driven directly: a call blocked in Redis whose reply the cut drops, a
 * call parked while the connection is down, and the replacement made while ioredis waits
 * to reconnect.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Queue, RedisUnavailable, Worker } from "../../src/index.ts"
import { connect } from "../../src/redis/Client.ts"
import { onCleanup } from "../support/cleanup.ts"
import { proxyToSuiteRedis, type TcpProxy } from "../support/proxy.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"

const name = queueNamer("rel-replaced")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

/** The local port, as Redis sees it, of the proxied client blocked in `cmd` (lowercase), once there is one. */
const blockedPort = (proxy: TcpProxy, cmd: string) =>
  until(`a client blocked in ${cmd}, through the proxy`, async () => {
    const ports = proxy.upstreamPorts()
    const line = String(await raw.client("LIST"))
      .split("\n")
      .find((l) => l.includes(`cmd=${cmd}`) && ports.includes(Number(/ addr=[^ ]*:(\d+) /.exec(l)?.[1])))
    return line === undefined ? undefined : Number(/ addr=[^ ]*:(\d+) /.exec(line)![1])
  })

/** How `p` settled: its value, or the message it rejected with. */
const outcome = (p: Promise<unknown>): Promise<{ value?: unknown; error?: string }> =>
  p.then(
    (value) => ({ value }),
    (e: unknown) => ({ error: e instanceof Error ? e.message : String(e) }),
  )

describe("a connection replaced while ioredis waits to reconnect", () => {
  it("fails the call whose reply the cut dropped and the call parked meanwhile, then works on the new connection", async () => {
    const key = `${name()}:list`
    const proxy = await proxyToSuiteRedis()
    const client = connect(proxy.url)
    onCleanup(() => client.close())
    expect(await client.command("PING", [])).toBe("PONG")

    // a call Redis holds (BLPOP, no timeout), through the proxy: its reply is lost with the cut
    const blocked = outcome(client.command("BLPOP", [key, "0"]))
    await blockedPort(proxy, "blpop")
    proxy.cut()
    await until("ioredis waiting to reconnect", () => client.status() === "reconnecting")
    // parked in ioredis' offline queue: the connection is down
    const parked = outcome(client.command("PING", []))
    expect(client.status()).toBe("reconnecting")
    expect(client.replaceSilent?.()).toBe(true)

    const [b, p] = await Promise.all([blocked, parked])
    expect(b.error).toContain("dropped as silent")
    expect(p.error).toContain("dropped as silent")
    proxy.heal()
    expect(await client.command("PING", [])).toBe("PONG")
    // the BLPOP never reached Redis again: a push stays in the list
    await raw.rpush(key, "x")
    onCleanup(() => raw.del(key).then(() => {}))
    expect(await raw.llen(key)).toBe(1)
  })

  it("an idle worker whose marker wait lost its reply in a cut takes jobs again once Redis is back", async () => {
    const q = name()
    const proxy = await proxyToSuiteRedis()
    const errors: unknown[] = []
    const completed: string[] = []
    // the reserve goes behind each wait (a wait well under half the fence)
    const worker = new Worker(q, async () => "done", { connection: proxy.url, blockTimeoutMs: 200, sweep: false })
    onCleanup(() => worker.close())
    worker.on("error", (e) => errors.push(e))
    worker.on("completed", (job) => completed.push(job.id))
    await worker.ready
    await blockedPort(proxy, "bzpopmin")
    // the wait and the reserve behind it were written: the cut drops their replies, and
    // ioredis keeps both to send again once it reconnects, which it never does while cut
    proxy.cut()
    await until(
      "the silent marker connection replaced",
      () =>
        errors.some(
          (e) =>
            e instanceof RedisUnavailable && e.message.includes("BZPOPMIN") && e.message.includes("a new one opened"),
        ),
      { timeoutMs: 30_000 },
    )
    proxy.heal()
    const queue = new Queue(q, { connection: redisUrl() })
    onCleanup(() => queue.close())
    const id = await queue.add({ n: 1 })
    await until("the job completed by the worker", () => completed.includes(id), { timeoutMs: 30_000 })
    expect(worker.state).toBe("running")
  })
})
