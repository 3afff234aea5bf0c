/**
 * What one dashboard lets a reader hold, over raw sockets against a real Redis: made-up
 * job views cannot lock the operator's overview and queue streams out (N3); open event
 * streams are capped in all and per client address, the excess answered 503 with
 * Retry-After (N4); overview rate points come at most one per queue per interval,
 * however many readings are made (N7).
 */
import { connect, type Socket } from "node:net"
import { describe, expect, it } from "vitest"
import { makeRates, RATE_LIMITS } from "../../src/dashboard/Read.ts"
import { type DashboardHandler, dashboardHandler } from "../../src/dashboard.ts"
import { Queue } from "../../src/index.ts"
import { onCleanup } from "../support/cleanup.ts"
import { bodyOf, rawRequest, statusOf } from "../support/raw-http.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"
import { serveLoopback } from "../support/serve.ts"
import { until } from "../support/until.ts"

const PREFIX = "lqcaps"
const name = queueNamer("caps")

/** `handler` served on 127.0.0.1 (closed after the test); its port. */
const serve = async (handler: DashboardHandler): Promise<number> => {
  onCleanup(() => handler.close())
  return serveLoopback(handler)
}

/**
 * A stream opened over a raw socket from `from` (a loopback address) that reads its reply
 * head and then never reads again: its status and head, and the socket (destroyed after the test).
 */
const rawStream = (port: number, view: string, from = "127.0.0.1") =>
  new Promise<{ status: number; head: string; socket: Socket }>((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", localAddress: from }, () =>
      socket.write(`GET /api/stream?view=${encodeURIComponent(view)} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n\r\n`),
    )
    onCleanup(() => socket.destroy())
    let got = ""
    const onData = (d: Buffer) => {
      got += d.toString("latin1")
      if (!got.includes("\r\n\r\n")) return
      socket.off("data", onData)
      socket.pause()
      resolve({ status: statusOf(got), head: got, socket })
    }
    socket.on("data", onData)
    socket.on("error", reject)
  })

const newQueue = async () => {
  const q = new Queue<unknown>(name(), { connection: redisUrl(), prefix: PREFIX })
  onCleanup(() => q.close())
  await q.add({ seed: true })
  return q
}

describe("views one client can hold (N3)", () => {
  it("maxViews held by made-up job ids: the overview, workers and a real queue's stream still open; a made-up queue does not", async () => {
    const q = await newQueue()
    const port = await serve(dashboardHandler({ connection: redisUrl(), prefix: PREFIX, maxViews: 3 }))
    const held = []
    for (let i = 0; i < 6; i++) held.push(await rawStream(port, `job:${q.name}:made-up-${i}`))
    expect(held.map((s) => s.status)).toEqual([200, 200, 200, 503, 503, 503])
    for (const view of ["overview", "workers", `queue:${q.name}`])
      expect((await rawStream(port, view)).status, view).toBe(200)
    expect((await rawStream(port, `queue:${name("made-up")}`)).status).toBe(503)
  })
})

describe("event streams one server holds open (N4)", () => {
  it("past maxStreams a stream is refused 503 with Retry-After, saying why; a closed one frees its slot", async () => {
    const port = await serve(
      dashboardHandler({ connection: redisUrl(), prefix: PREFIX, maxStreams: 4, maxStreamsPerClient: 100 }),
    )
    const open = []
    for (let i = 0; i < 7; i++) open.push(await rawStream(port, "overview"))
    expect(open.map((s) => s.status)).toEqual([200, 200, 200, 200, 503, 503, 503])
    const refused = open[4] as { head: string }
    expect(refused.head.toLowerCase()).toContain("retry-after: 5")
    const reply = await rawRequest(port, "/api/stream?view=overview")
    expect(statusOf(reply)).toBe(503)
    expect(bodyOf(reply)).toContain("maxStreams")
    open[0]?.socket.destroy()
    await until("a stream slot to free", async () =>
      (await rawStream(port, "overview")).status === 200 ? true : undefined,
    )
  })

  it("past maxStreamsPerClient one address is refused, another still gets a stream", async () => {
    const port = await serve(
      dashboardHandler({ connection: redisUrl(), prefix: PREFIX, maxStreams: 100, maxStreamsPerClient: 3 }),
    )
    const mine = []
    for (let i = 0; i < 5; i++) mine.push(await rawStream(port, "overview", "127.0.0.1"))
    expect(mine.map((s) => s.status)).toEqual([200, 200, 200, 503, 503])
    expect((mine[3] as { head: string }).head.toLowerCase()).toContain("retry-after: 5")
    expect((await rawStream(port, "overview", "127.0.0.2")).status).toBe(200)
  })
})

describe("overview rate points (N7)", () => {
  it("500 readings in a row add at most one point per queue per interval; an hour keeps a bounded count, sent downsampled", () => {
    const rates = makeRates()
    const queue = { queue: "q", counters: { completed: 0, failed: 0 } }
    const t0 = 1_000_000
    // 500 readings 10 ms apart (5 s): within one interval
    for (let i = 0; i < 500; i++)
      rates.record(t0 + i * 10, [{ ...queue, counters: { completed: i, failed: 0 } }] as never)
    expect(rates.of("q").points.length).toBeLessThanOrEqual(1)
    // two hours of readings 100 ms apart: one point per interval, an hour of them kept
    for (let i = 0; i < 72_000; i++)
      rates.record(t0 + 5_000 + i * 100, [{ ...queue, counters: { completed: i, failed: 0 } }] as never)
    const kept = rates.of("q").points
    expect(kept.length).toBeLessThanOrEqual(3_600_000 / RATE_LIMITS.intervalMs + 1)
    for (let i = 1; i < kept.length; i++)
      expect((kept[i] as readonly number[])[0]! - (kept[i - 1] as readonly number[])[0]!).toBeGreaterThanOrEqual(
        RATE_LIMITS.intervalMs,
      )
    expect(rates.sent("q").points.length).toBeLessThanOrEqual(RATE_LIMITS.sentPoints)
  })

  it("over HTTP: 500 overview readings in a row carry at most one point per queue per interval elapsed", async () => {
    const q = await newQueue()
    const port = await serve(dashboardHandler({ connection: redisUrl(), prefix: PREFIX }))
    const started = Date.now()
    let last = ""
    for (let i = 0; i < 500; i++) last = await (await fetch(`http://127.0.0.1:${port}/api/overview`)).text()
    const intervals = Math.floor((Date.now() - started) / RATE_LIMITS.intervalMs) + 1
    const reading = JSON.parse(last) as { rates: Record<string, { points: unknown[] }> }
    expect(reading.rates[q.name]).toBeDefined()
    expect(reading.rates[q.name]?.points.length).toBeLessThanOrEqual(intervals)
  })
})
