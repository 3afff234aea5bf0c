/**
 * A dashboard closing while a view's reading is still out: the streams it ended must not be
 * written to when the reading lands. A write after `end` is an `error` on the response,
 * and with no listener an uncaught exception that ends the host process (seen in the suite:
 * `dashboard-caps`, a handler closed in its cleanup while Redis was answering a poll).
 * Real HTTP over a raw socket; the view's read is a promise the test resolves.
 */
import type { ServerResponse } from "node:http"
import { connect } from "node:net"
import { describe, expect, it } from "vitest"
import { makeHub } from "../../src/dashboard/Hub.ts"
import { openStream } from "../../src/dashboard/Stream.ts"
import { onCleanup } from "../support/cleanup.ts"
import { serveLoopback } from "../support/serve.ts"
import { until } from "../support/until.ts"

/** A server whose every request opens a stream of view `v` on `hub`; its port and open streams. */
const serveStreams = async (hub: ReturnType<typeof makeHub>) => {
  const streams = new Set<ServerResponse>()
  const errors: unknown[] = []
  const port = await serveLoopback((_req, res) => {
    // what the response reports, kept for the assertion (an unheard `error` would be uncaught)
    res.on("error", (e) => errors.push(e))
    openStream(res, "v", hub, streams)
  })
  const socket = connect(port, "127.0.0.1", () =>
    socket.write(`GET /api/stream?view=v HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n\r\n`),
  )
  socket.on("error", () => {})
  onCleanup(() => socket.destroy())
  return { streams, errors }
}

describe("a stream ended while its view's reading is out", () => {
  it("the dashboard's close (hub closed, streams ended): the late reading writes nothing", async () => {
    let land: (json: string) => void = () => {}
    let reads = 0
    const hub = makeHub(() => {
      reads++
      return new Promise<string>((r) => {
        land = r
      })
    }, 60_000)
    const { streams, errors } = await serveStreams(hub)
    const res = await until("the stream open and its first reading out", () => reads === 1 && [...streams][0])
    let written = 0
    const write = res.write.bind(res)
    res.write = ((...args: Parameters<typeof write>) => {
      written++
      return write(...args)
    }) as typeof res.write
    // what the dashboard's close does, in its order
    hub.close()
    for (const s of streams) s.end()
    land('{"late":true}')
    await until("the response finished", () => res.writableFinished)
    await new Promise((r) => setImmediate(r))
    expect(written, "writes after the stream ended").toBe(0)
    expect(errors).toEqual([])
  })

  it("a stream its server ended while the hub still runs: the next reading is not written to it", async () => {
    let land: (json: string) => void = () => {}
    const hub = makeHub(
      () =>
        new Promise<string>((r) => {
          land = r
        }),
      60_000,
    )
    onCleanup(() => hub.close())
    const { streams, errors } = await serveStreams(hub)
    const res = await until("the stream open", () => [...streams][0])
    res.end()
    land('{"late":true}')
    await until("the response finished", () => res.writableFinished)
    await new Promise((r) => setImmediate(r))
    expect(errors).toEqual([])
  })
})
