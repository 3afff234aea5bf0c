/**
 * Calls that end on time, and a worker that notices a silent connection.
 *
 * - A queue call is bounded by `callTimeoutMs`: to a Redis that cannot be reached it
 *   rejects with RedisUnavailable (nothing was sent, and nothing is written once Redis is
 *   back); when it was sent and its reply is lost, with OutcomeUnknown and the job ids.
 * - An idle worker whose blocking connection goes half-open (a proxy that stops
 *   forwarding without closing) reports it, opens a new connection and takes jobs again.
 *
 * The only time limits here are the calls' own deadlines and generous hang detectors.
 */
import { createServer } from "node:net"
import { Effect, Exit } from "effect"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { LeaseQueue } from "../../src/effect.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { InvalidOptions, OutcomeUnknown, Queue, RedisUnavailable, Worker } from "../../src/index.ts"
import { onCleanup } from "../support/cleanup.ts"
import { TcpProxy } from "../support/proxy.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"

const name = queueNamer("rel-timeouts")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

const target = () => {
  const url = new URL(redisUrl())
  return { host: url.hostname, port: Number(url.port || 6379) }
}

/** A proxy in front of the suite's Redis, closed when the test ends. */
const startProxy = async (): Promise<TcpProxy> => {
  const proxy = await TcpProxy.start(target())
  onCleanup(() => proxy.close())
  return proxy
}

/** A local port with nothing listening on it. */
const closedPort = async (): Promise<number> => {
  const server = createServer()
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  await new Promise<void>((r) => server.close(() => r()))
  return port
}

const rejection = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    (v) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(v)}`)
    },
    (e: unknown) => e,
  )

describe("callTimeoutMs (K4)", () => {
  it("K4: add and addBulk to a Redis that cannot be reached reject with RedisUnavailable naming the server", async () => {
    const port = await closedPort()
    const queue = new Queue(name(), { connection: `redis://127.0.0.1:${port}`, callTimeoutMs: 500 })
    onCleanup(() => queue.close())
    const single = await rejection(queue.add({ n: 1 }))
    expect(single).toBeInstanceOf(RedisUnavailable)
    expect((single as Error).message).toContain(`127.0.0.1:${port}`)
    expect((single as Error).message).toContain("not sent")
    const bulk = await rejection(queue.addBulk([{ payload: { n: 2 } }, { payload: { n: 3 } }]))
    expect(bulk).toBeInstanceOf(RedisUnavailable)
    const stats = await rejection(queue.stats())
    expect(stats).toBeInstanceOf(RedisUnavailable)
  })

  it("K4: an add refused as not sent is never written later, once Redis is reachable again", async () => {
    const q = name()
    const proxy = await startProxy()
    proxy.cut()
    const queue = new Queue(q, { connection: proxy.url, callTimeoutMs: 500 })
    onCleanup(() => queue.close())
    const before = await dumpQueue(raw, q)
    const refused = await rejection(queue.add({ n: 1 }))
    expect(refused).toBeInstanceOf(RedisUnavailable)
    expect((refused as Error).message).toContain(`127.0.0.1:${proxy.port}`)

    proxy.heal()
    // the queue's own connection is back: a call through it answers
    const stats = await until("the queue reaching Redis again", () => queue.stats().catch(() => undefined))
    expect(stats.waiting).toBe(0)
    expect(stats.counters.added).toBe(0)
    expect(await dumpQueue(raw, q)).toEqual(before)
    // and the next add is stored once
    await queue.add({ n: 2 })
    expect((await queue.stats()).counters.added).toBe(1)
  })

  it("K4: an add sent whose reply is lost rejects with OutcomeUnknown carrying the job ids (the jobs were stored)", async () => {
    const q = name()
    const keys = queueKeys(q)
    const proxy = await startProxy()
    // room for the first add's real reply on a loaded machine; the lost ones wait it out
    const queue = new Queue(q, { connection: proxy.url, callTimeoutMs: 2_000 })
    onCleanup(() => queue.close())
    await queue.add({ warm: true }) // opens the queue and the connection
    proxy.dropReplies()

    const single = await rejection(queue.add({ n: 1 }))
    expect(single).toBeInstanceOf(OutcomeUnknown)
    const lost = single as OutcomeUnknown
    expect(lost.operation).toBe("add")
    expect(lost.jobIds).toHaveLength(1)
    expect(lost.message).toContain(lost.jobIds![0]!)
    expect(lost.message).toContain(`127.0.0.1:${proxy.port}`)
    expect(lost.message).toContain("dedupeKey")

    const bulk = await rejection(queue.addBulk([{ payload: { n: 2 } }, { payload: { n: 3 } }]))
    expect(bulk).toBeInstanceOf(OutcomeUnknown)
    const lostBulk = bulk as OutcomeUnknown
    expect(lostBulk.operation).toBe("addBulk")
    expect(lostBulk.jobIds).toHaveLength(2)

    // the requests reached Redis: the jobs wait there, under the ids the errors named
    const ids = [...lost.jobIds!, ...lostBulk.jobIds!]
    const waiting = await until("the three jobs stored", async () => {
      const entries = await raw.lrange(keys.wait, 0, -1)
      return entries.length === 4 ? entries : undefined
    })
    for (const id of ids) expect(waiting.some((e) => e === id || e.startsWith(`${id}|`))).toBe(true)
  })

  it("K4: the Effect face fails a call to an unreachable Redis with RedisUnavailable", async () => {
    const port = await closedPort()
    const program = Effect.scoped(
      Effect.gen(function* () {
        const queue = yield* LeaseQueue.make({
          name: name(),
          connection: `redis://127.0.0.1:${port}`,
          callTimeoutMs: 500,
        })
        return yield* Effect.exit(queue.add({ n: 1 }))
      }),
    )
    const exit = await Effect.runPromise(program)
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) {
      const error = exit.cause.reasons.find((r) => r._tag === "Fail")?.error
      expect(error).toBeInstanceOf(RedisUnavailable)
    }
  })

  it("K4: callTimeoutMs is validated in both faces, naming the field, value and range", async () => {
    for (const value of [0, -1, 1.5, "10s", 3_600_001]) {
      let thrown: unknown
      try {
        new Queue(name(), { connection: redisUrl(), callTimeoutMs: value as number })
      } catch (e) {
        thrown = e
      }
      expect(thrown).toBeInstanceOf(InvalidOptions)
      expect((thrown as InvalidOptions).field).toBe("callTimeoutMs")
      expect((thrown as Error).message).toContain("callTimeoutMs")
      expect((thrown as Error).message).toContain("10 to 3600000")
    }
    const exit = await Effect.runPromise(
      Effect.exit(Effect.scoped(LeaseQueue.make({ name: name(), connection: redisUrl(), callTimeoutMs: 0 }))),
    )
    expect(Exit.isFailure(exit)).toBe(true)
  })
})

describe("a half-open blocking connection", () => {
  it("an idle worker whose blocking connection goes silent reports it, reconnects and runs the next job", async () => {
    const q = name()
    const proxy = await startProxy()
    const errors: unknown[] = []
    const completed: string[] = []
    const worker = new Worker(q, async () => "done", {
      connection: proxy.url,
      blockTimeoutMs: 1_000,
      sweep: false,
    })
    onCleanup(() => worker.close())
    worker.on("error", (e) => errors.push(e))
    worker.on("completed", (job) => completed.push(job.id))
    await worker.ready

    // the worker's blocking connection, as Redis sees it: blocked in BZPOPMIN, through the proxy
    const blockingPort = await until("the worker blocked in BZPOPMIN", async () => {
      const ports = proxy.upstreamPorts()
      const clients = String(await raw.client("LIST")).split("\n")
      const line = clients.find(
        (l) => l.includes("cmd=bzpopmin") && ports.includes(Number(/ addr=[^ ]*:(\d+) /.exec(l)?.[1])),
      )
      return line === undefined ? undefined : Number(/ addr=[^ ]*:(\d+) /.exec(line)![1])
    })
    proxy.freeze([blockingPort])

    const queue = new Queue(q, { connection: redisUrl() })
    onCleanup(() => queue.close())
    const id = await queue.add({ n: 1 })

    await until("the job completed by the worker", () => completed.includes(id), { timeoutMs: 45_000 })
    expect(worker.state).toBe("running")
    const silent = errors.find((e) => e instanceof RedisUnavailable && e.message.includes("BZPOPMIN"))
    expect(silent, `errors: ${errors.map(String).join("; ")}`).toBeDefined()
    expect((silent as Error).message).toContain(`127.0.0.1:${proxy.port}`)
    expect((silent as Error).message).toContain("half-open")
  })

  it("a worker whose main connection goes silent says so on a heartbeat, replaces it, and its jobs complete", async () => {
    const q = name()
    const proxy = await startProxy()
    const errors: unknown[] = []
    const completed: string[] = []
    const worker = new Worker(q, async () => "done", { connection: proxy.url, leaseMs: 2_000, blockTimeoutMs: 1_000 })
    onCleanup(() => worker.close())
    worker.on("error", (e) => errors.push(e))
    worker.on("completed", (job) => completed.push(job.id))
    await worker.ready

    // the worker's two connections through the proxy: the one blocked in BZPOPMIN waits on
    // the marker; the other is its main connection (reserves, acks, heartbeats)
    const portOf = (line: string) => Number(/ addr=[^ ]*:(\d+) /.exec(line)?.[1])
    const mainPort = await until("the worker idle on the marker, its main connection known", async () => {
      const ports = proxy.upstreamPorts()
      const mine = String(await raw.client("LIST"))
        .split("\n")
        .filter((l) => ports.includes(portOf(l)))
      const waiting = mine.filter((l) => / cmd=bzpopmin /.test(l))
      const others = mine.filter((l) => !/ cmd=bzpopmin /.test(l))
      return waiting.length === 1 && others.length === 1 ? portOf(others[0]!) : undefined
    })
    proxy.freeze([mainPort])

    const queue = new Queue(q, { connection: redisUrl() })
    onCleanup(() => queue.close())
    const first = await queue.add({ n: 1 })
    await until(
      "the silent main connection reported and replaced",
      () =>
        errors.some(
          (e) =>
            e instanceof RedisUnavailable &&
            e.message.includes("no reply to a heartbeat") &&
            e.message.includes("a new one opened"),
        ),
      { timeoutMs: 30_000 },
    )
    const second = await queue.add({ n: 2 })
    await until("both jobs completed", () => completed.includes(first) && completed.includes(second), {
      timeoutMs: 30_000,
    })
    expect(worker.state).toBe("running")
    const silent = errors.find((e) => e instanceof RedisUnavailable && e.message.includes("no reply to a heartbeat"))
    expect((silent as Error).message).toContain(`127.0.0.1:${proxy.port}`)
  })
})
