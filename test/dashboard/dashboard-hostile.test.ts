/**
 * The dashboard against hostile clients, over raw sockets (no browser): malformed requests
 * crash nothing (the `leaseq dashboard` process, or a host server mounting the handler), a
 * forged `Host` (DNS rebinding) reads nothing from Redis, reads need the token when told,
 * the token stays out of the terminal and of `ps`, views are capped, a Find miss scans
 * nothing. Redis-side costs are read from a redis-server of this file's own (INFO), so no
 * other test's traffic counts.
 */

import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs"
import type { IncomingMessage, ServerResponse } from "node:http"
import { join, resolve } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { LIST_PEEK_LIMITS } from "../../src/dashboard/JobList.ts"
import { type DashboardHandler, dashboardHandler } from "../../src/dashboard.ts"
import { Queue, Worker } from "../../src/index.ts"
import { makeOpener, OPENER_CAPACITY } from "../../src/metrics/Fleet.ts"
import { connect } from "../../src/redis/Client.ts"
import { type LocalRedis, startRedisServer } from "../../src/testing/RedisServer.ts"
import { startChild } from "../support/child.ts"
import { onCleanup } from "../support/cleanup.ts"
import { bodyOf, rawExchange, rawRequest, statusOf } from "../support/raw-http.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { serveLoopback } from "../support/serve.ts"
import { tempDir } from "../support/tmp.ts"
import { until } from "../support/until.ts"

const ROOT = resolve(import.meta.dirname, "../..")
const CLI = join(ROOT, "src/cli/main.ts")
const PREFIX = "lqhostile"
const TOKEN = "hostile-token-0123456789abcdef"
const name = queueNamer("hostile")

let own: LocalRedis
beforeAll(async () => {
  own = await startRedisServer()
})
afterAll(async () => {
  await own.stop()
})

/** A handler served on 127.0.0.1 by a plain node:http server that records anything the handler throws. */
const serve = async (handler: DashboardHandler) => {
  onCleanup(() => handler.close())
  const thrown: unknown[] = []
  const port = await serveLoopback((req: IncomingMessage, res: ServerResponse) => {
    try {
      handler(req, res)
    } catch (e) {
      thrown.push(e)
      res.destroy()
    }
  })
  return { port, thrown }
}

/** `leaseq dashboard` as a child process on a free loopback port: the port and the process. */
const startCli = async (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}) => {
  const child = startChild(CLI, ["dashboard", "--prefix", PREFIX, "--listen", "127.0.0.1:0", ...args], env)
  const port = await until(
    "the dashboard to listen",
    () => /at http:\/\/127\.0\.0\.1:(\d+)\//.exec(child.stderr())?.[1],
  )
  return { child, port: Number(port) }
}

const TARGETS = ["//[", "http://[/", "//a:99999/", "//%zz/", "http://x:y@[::1/", "/%", "*", "//", "/api/%zz"]
TARGETS.push("/api/stream?view=%", "/api/job?queue=%zz&id=%ff", "/api/find?id=%00", "/api/queue?name=..")
TARGETS.push("/api/full?queue=a&id=b&field=__proto__")
const BODIES = ["null", "[]", "1", '"x"', "{", '{"action":"retry","queue":{}}', '{"__proto__":{"action":"retry"}}']
BODIES.push('{"action":"cancel","queue":"q","ids":[{}]}', '{"action":"pause","queue":"q","all":1e999}', "\u00ff\u00fe")

/** A POST of `body` to the action route with `extra` headers (the token included, so the body is read). */
const actionRequest = (host: string, extra: string, body: string) =>
  `POST /api/action HTTP/1.1\r\nhost: ${host}\r\n${extra}content-type: application/json\r\nx-leaseq-token: ${TOKEN}\r\n` +
  `content-length: ${Buffer.byteLength(body, "latin1")}\r\n\r\n${body}`

/** Header values no browser sends, on a few routes. */
const badHeaders = (host: string): string[] =>
  ["/api/action", "/api/overview", "/api/stream?view=overview", "/", "//["].flatMap((t) =>
    ["\u0001", "\u00ff\u00fe", "a".repeat(8000), "null"].flatMap((v) =>
      ["x-leaseq-token", "origin", "sec-fetch-site", "content-type"].map(
        (h) => `POST ${t} HTTP/1.1\r\nhost: ${host}\r\n${h}: ${v}\r\ncontent-length: 2\r\n\r\n{}`,
      ),
    ),
  )

/** Requests no browser sends: request-targets WHATWG URL refuses, Origins that do not parse, bad Hosts, headers and bodies. */
const hostileRequests = (port: number): string[] => {
  const host = `127.0.0.1:${port}`
  const out: string[] = []
  for (const t of TARGETS)
    for (const m of ["GET", "HEAD", "POST", "OPTIONS"]) out.push(`${m} ${t} HTTP/1.1\r\nhost: ${host}\r\n\r\n`)
  for (const t of TARGETS.slice(0, 5))
    for (const h of [host, "", "[", "a b", "x".repeat(300), "evil.example", "[::1", ":0"])
      out.push(`GET ${t} HTTP/1.1\r\nhost: ${h}\r\n\r\n`)
  for (const o of ["null", "garbage", "http://[", "http://x:99999", `http://${host}`, "file://", ""])
    for (const b of BODIES) out.push(actionRequest(host, o === "" ? "" : `origin: ${o}\r\n`, b))
  out.push(...badHeaders(host))
  return out.map((r) => r.replace("\r\n\r\n", "\r\nconnection: close\r\n\r\n"))
}

const sendAll = async (port: number, requests: ReadonlyArray<string>) => {
  for (let i = 0; i < requests.length; i += 25) {
    await Promise.all(requests.slice(i, i + 25).map((r) => rawExchange(port, Buffer.from(r, "latin1"))))
  }
}

describe("no request crashes the dashboard", () => {
  it("a few hundred malformed requests leave leaseq dashboard and a host server mounting the handler serving", async () => {
    const { child, port } = await startCli(["--url", redisUrl(), "--allow-actions"], { LEASEQ_DASHBOARD_TOKEN: TOKEN })
    const mounted = await serve(
      dashboardHandler({ connection: redisUrl(), prefix: PREFIX, allowActions: true, token: TOKEN }),
    )
    const requests = hostileRequests(port)
    expect(requests.length).toBeGreaterThan(200)
    await sendAll(port, requests)
    await sendAll(mounted.port, hostileRequests(mounted.port))
    expect(mounted.thrown).toEqual([])
    expect(child.process.exitCode).toBe(null)
    for (const p of [port, mounted.port]) {
      expect(statusOf(await rawRequest(p, "/"))).toBe(200)
      expect(statusOf(await rawRequest(p, "/api/overview"))).toBe(200)
    }
    // the request-targets of the review each get an answer, not a dropped connection
    for (const t of ["//[", "http://[/", "//a:99999/", "//%zz/", "http://x:y@[::1/"]) {
      expect(statusOf(await rawRequest(port, t)), t).toBeGreaterThan(0)
    }
    const nullOrigin = { origin: "null", "content-type": "application/json", "x-leaseq-token": TOKEN }
    expect(statusOf(await rawRequest(port, "/api/action", nullOrigin, { method: "POST", body: "{}" }))).toBe(403)
  })
})

/** Commands the own Redis ran since the last CONFIG RESETSTAT, by name (INFO commandstats). */
const commandCounts = async (raw: ReturnType<typeof rawClient>): Promise<Record<string, number>> => {
  const info = await raw.info("commandstats")
  const counts: Record<string, number> = {}
  for (const m of info.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) counts[m[1] as string] = Number(m[2])
  return counts
}

/** The commands that read a queue's data (anything but the test's own INFO and CONFIG). */
const readsOf = (counts: Record<string, number>) =>
  Object.entries(counts).filter(
    ([c]) =>
      !["info", "config|resetstat", "config", "hello", "ping", "select", "client|setinfo", "client|setname"].includes(
        c,
      ),
  )

describe("DNS rebinding and reads that need the token", () => {
  it("a Host that is not the dashboard's gets 421 before anything is read from Redis; IPs, localhost and allowedHosts pass", async () => {
    const raw = rawClient(own.url)
    onCleanup(() => raw.quit())
    const q = new Queue<unknown>(name(), { connection: own.url, prefix: PREFIX })
    onCleanup(() => q.close())
    const id = await q.add({ secret: "s3cret" })
    const { port } = await serve(
      dashboardHandler({ connection: own.url, prefix: PREFIX, allowedHosts: ["dash.example"] }),
    )
    await raw.config("RESETSTAT")
    const routes = ["/api/overview", `/api/job?queue=${q.name}&id=${id}`, `/api/queue?name=${q.name}`]
    routes.push(`/api/full?queue=${q.name}&id=${id}&field=payload`, `/api/find?id=${id}`, "/api/stream?view=overview")
    for (const host of [`evil.example:${port}`, "rebind.test", `dash.example.evil:${port}`]) {
      for (const r of routes) {
        const reply = await rawRequest(port, r, { host })
        expect(statusOf(reply), `${host} ${r}`).toBe(421)
        expect(bodyOf(reply)).not.toContain("s3cret")
      }
    }
    expect(readsOf(await commandCounts(raw))).toEqual([])
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `DASH.example:${port}`]) {
      const reply = await rawRequest(port, `/api/job?queue=${q.name}&id=${id}`, { host })
      expect(statusOf(reply), host).toBe(200)
      expect(bodyOf(reply)).toContain("s3cret")
    }
  })

  it("with readsNeedToken every reading needs the token (401 without, and nothing read), the page itself does not", async () => {
    const raw = rawClient(own.url)
    onCleanup(() => raw.quit())
    const q = new Queue<unknown>(name(), { connection: own.url, prefix: PREFIX })
    onCleanup(() => q.close())
    const id = await q.add({ secret: "s3cret" })
    const { port } = await serve(
      dashboardHandler({ connection: own.url, prefix: PREFIX, readsNeedToken: true, token: TOKEN }),
    )
    await raw.config("RESETSTAT")
    const job = `/api/job?queue=${q.name}&id=${id}`
    for (const r of [job, "/api/overview", "/api/stream?view=overview", `/api/find?id=${id}`]) {
      expect(statusOf(await rawRequest(port, r)), r).toBe(401)
      expect(statusOf(await rawRequest(port, r, { "x-leaseq-token": `${TOKEN}x` })), r).toBe(401)
    }
    expect(readsOf(await commandCounts(raw))).toEqual([])
    expect(statusOf(await rawRequest(port, "/"))).toBe(200)
    const reply = await rawRequest(port, job, { "x-leaseq-token": TOKEN })
    expect(statusOf(reply)).toBe(200)
    expect(bodyOf(reply)).toContain("s3cret")
  })

  it("leaseq dashboard --allowed-host: that name is answered, another gets 421", async () => {
    const { port } = await startCli(["--url", redisUrl(), "--allowed-host", "dash.example"])
    expect(statusOf(await rawRequest(port, "/api/overview", { host: `dash.example:${port}` }))).toBe(200)
    expect(statusOf(await rawRequest(port, "/api/overview", { host: `other.example:${port}` }))).toBe(421)
  })

  it("leaseq dashboard refuses to listen beyond loopback without a token, saying how to choose", async () => {
    const { runCli } = await import("../support/child.ts")
    const r = await runCli(["dashboard", "--url", redisUrl(), "--listen", "0.0.0.0:0"])
    expect(r.code).toBe(2)
    expect(r.err).toContain("--token-file")
    expect(r.err).toContain("127.0.0.1")
  })
})

describe("the dashboard's token", () => {
  it("from a file or LEASEQ_DASHBOARD_TOKEN: never printed, not in ps, and actions take it", async () => {
    const dir = tempDir("token")
    onCleanup(dir.remove)
    const file = join(dir.dir, "token")
    writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 })
    const q = new Queue<unknown>(name(), { connection: redisUrl(), prefix: PREFIX })
    onCleanup(() => q.close())
    await q.add(1)
    for (const [args, env] of [
      [["--token-file", file], {}],
      [[], { LEASEQ_DASHBOARD_TOKEN: TOKEN }],
    ] as const) {
      const { child, port } = await startCli(["--url", redisUrl(), "--allow-actions", ...args], env)
      expect(child.stderr()).not.toContain(TOKEN)
      expect(readFileSync(`/proc/${child.process.pid}/cmdline`, "utf8")).not.toContain(TOKEN)
      const act = (token: string) =>
        rawRequest(
          port,
          "/api/action",
          { "content-type": "application/json", "x-leaseq-token": token },
          {
            method: "POST",
            body: JSON.stringify({ queue: q.name, action: "resume" }),
          },
        )
      expect(statusOf(await act(TOKEN))).toBe(200)
      expect(statusOf(await act(`${TOKEN}x`))).toBe(403)
      await child.stop()
    }
  })

  it("a --token-file other users can read (0644, 0640) is refused with exit 2 and the chmod to run (N6)", async () => {
    const { runCli } = await import("../support/child.ts")
    const dir = tempDir("token-mode")
    onCleanup(dir.remove)
    const file = join(dir.dir, "token")
    for (const mode of [0o644, 0o640]) {
      writeFileSync(file, `${TOKEN}\n`, { mode })
      chmodSync(file, mode)
      const r = await runCli([
        "dashboard",
        "--url",
        redisUrl(),
        "--allow-actions",
        "--listen",
        "127.0.0.1:0",
        "--token-file",
        file,
      ])
      expect(r.code).toBe(2)
      expect(r.err).toContain(`(mode 0${mode.toString(8)})`)
      expect(r.err).toContain(`chmod 600 "${file}"`)
      expect(r.err).not.toContain(TOKEN)
      expect(r.out).toBe("")
    }
  })

  it("a generated token, stderr not a terminal: written to a file only its user can read, the message says where", async () => {
    const { child, port } = await startCli(["--url", redisUrl(), "--allow-actions"])
    const file = /the generated token is in (\S+) \(mode 0600\)/.exec(child.stderr())?.[1]
    expect(file, child.stderr()).toBeDefined()
    onCleanup(() => import("node:fs").then((fs) => fs.rmSync(resolve(file as string, ".."), { recursive: true })))
    expect(statSync(file as string).mode & 0o777).toBe(0o600)
    const token = readFileSync(file as string, "utf8").trim()
    expect(token.length).toBeGreaterThanOrEqual(16)
    expect(child.stderr()).not.toContain(token)
    const reply = await rawRequest(
      port,
      "/api/action",
      { "content-type": "application/json", "x-leaseq-token": token },
      {
        method: "POST",
        body: JSON.stringify({ queue: name(), action: "resume" }),
      },
    )
    expect(statusOf(reply)).toBe(200)
  })
})

describe("what one server keeps is bounded", () => {
  it("views: past maxViews a stream of a new view is refused 503, saying why; the same view and a freed slot still open", async () => {
    const { port } = await serve(dashboardHandler({ connection: redisUrl(), prefix: PREFIX, maxViews: 3 }))
    const q = name()
    const streams: Array<{ status: number; close: () => void }> = []
    const open = async (view: string) => {
      const ctl = new AbortController()
      const res = await fetch(`http://127.0.0.1:${port}/api/stream?view=${view}`, { signal: ctl.signal })
      const body = res.status === 200 ? "" : await res.text()
      return { status: res.status, body, close: () => ctl.abort() }
    }
    for (const v of ["a", "b", "c"]) streams.push(await open(`job:${q}:${v}`))
    onCleanup(() => {
      for (const s of streams) s.close()
    })
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200])
    const refused = await open(`job:${q}:d`)
    expect(refused.status).toBe(503)
    expect(refused.body).toContain("maxViews")
    const again = await open(`job:${q}:a`)
    streams.push(again)
    expect(again.status).toBe(200)
    ;(streams[1] as { close: () => void }).close()
    const freed = await until("a view slot to free", async () => {
      const s = await open(`job:${q}:e`)
      return s.status === 200 ? s : undefined
    })
    streams.push(freed)
    expect(freed.status).toBe(200)
  })

  it("queue names: the opener keeps at most OPENER_CAPACITY queues open, whatever names are asked for", async () => {
    const client = connect(redisUrl(), {})
    onCleanup(() => client.close())
    const open = makeOpener(client, PREFIX)
    const names = Array.from({ length: OPENER_CAPACITY + 200 }, (_, i) => `made-up-${i}`)
    await Effect.runPromise(Effect.forEach(names, open, { concurrency: 50, discard: true }))
    expect(open.size()).toBe(OPENER_CAPACITY)
  })

  it("a Find miss scans nothing: the queues come from the overview's discovery (SCAN calls counted by the own Redis)", async () => {
    const raw = rawClient(own.url)
    onCleanup(() => raw.quit())
    const keys = Array.from({ length: 20_000 }, (_, i) => [`other:${i}`, "x"]).flat()
    await raw.mset(...keys)
    onCleanup(() => raw.flushall())
    const q = new Queue<unknown>(name(), { connection: own.url, prefix: PREFIX })
    onCleanup(() => q.close())
    const id = await q.add(1)
    const { port } = await serve(dashboardHandler({ connection: own.url, prefix: PREFIX }))
    expect(statusOf(await rawRequest(port, `/api/find?id=${id}`))).toBe(200)
    await raw.config("RESETSTAT")
    for (let i = 0; i < 10; i++) expect(statusOf(await rawRequest(port, `/api/find?id=nope-${i}`))).toBe(404)
    expect((await commandCounts(raw)).scan ?? 0).toBe(0)
  })
})

/** What the fixture holds after a garbage collection (it prints it on SIGUSR2: test/fixtures/dashboard-server.ts). */
const memoryAfterGc = async (
  child: ReturnType<typeof startChild>,
): Promise<{ rss: number; held: number; buffered: number }> => {
  const seen = child.lines.length
  child.process.kill("SIGUSR2")
  const line = await until("the memory line", () => child.lines.slice(seen).find((l) => l.text.startsWith("memory ")))
  return JSON.parse(line.text.slice(7)) as { rss: number; held: number; buffered: number }
}

/** A queue of `n` dead jobs, each with a payload of `size` characters. */
const deadQueue = async (url: string, n: number, size: number) => {
  const q = new Queue<string>(name(), { connection: url, prefix: PREFIX })
  onCleanup(() => q.close())
  await q.addBulk(
    Array.from({ length: n }, (_, i) => ({ payload: `${i}`.padEnd(size, "x"), options: { maxAttempts: 1 } })),
  )
  const w = new Worker<string>(
    q.name,
    async () => {
      throw new Error("dies on purpose")
    },
    { connection: url, prefix: PREFIX, concurrency: 50 },
  )
  onCleanup(() => w.close())
  w.on("error", () => {})
  await until("every job dead", async () => (await q.stats()).dead === n)
  await w.close()
  return q
}

describe("slow readers", () => {
  it("20 server-sent-event viewers that never read add little memory: readings are coalesced, not queued", async () => {
    const q = await deadQueue(redisUrl(), 200, 4000)
    const child = startChild(
      join(ROOT, "test/fixtures/dashboard-server.ts"),
      [redisUrl(), PREFIX, JSON.stringify({ intervalMs: 100 })],
      { NODE_OPTIONS: "--expose-gc" },
    )
    const port = Number((await child.waitFor((l) => l.startsWith("port "))).text.slice(5))
    // one viewer that reads: it counts the readings the hub sends
    let readings = 0
    let size = 0
    const ctl = new AbortController()
    onCleanup(() => ctl.abort())
    const res = await fetch(`http://127.0.0.1:${port}/api/stream?view=queue:${q.name}`, { signal: ctl.signal })
    void (async () => {
      const decoder = new TextDecoder()
      let buf = ""
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true })
        for (let at = buf.indexOf("\n\n"); at >= 0; at = buf.indexOf("\n\n")) {
          if (buf.startsWith("data: ")) {
            readings++
            size = at
          }
          buf = buf.slice(at + 2)
        }
      }
    })().catch(() => {})
    // warmed up first (the heap grows to its working size), then measured after a collection.
    // Resident memory is no such measure: the allocator keeps the pages of a burst, and each
    // socket write's copy of a reading lives outside the heap, so RSS grew 54-58 MB on a busy
    // machine where the server held no more than on a quiet one. What it references is the
    // heap and external memory after a collection; what it queues for a viewer, its sockets'
    await until("40 readings", () => readings >= 40, { everyMs: 100 })
    const before = await memoryAfterGc(child)
    const request = `GET /api/stream?view=queue:${q.name} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n\r\n`
    const { connect: netConnect } = await import("node:net")
    for (let i = 0; i < 20; i++) {
      const s = netConnect(port, "127.0.0.1", () => s.write(request))
      s.pause() // never read: the server's writes back up
      s.on("error", () => {})
      onCleanup(() => s.destroy())
    }
    const from = readings
    await until("40 more readings", () => readings >= from + 40, { everyMs: 100 })
    const after = await memoryAfterGc(child)
    const held = after.held - before.held
    console.log(
      `SLOW-SSE: reading ${(size / 1e6).toFixed(2)} MB, 20 stuck viewers x 40 readings: held +${held.toFixed(1)} MB, ` +
        `buffered ${(after.buffered / 1e6).toFixed(1)} MB (RSS +${(after.rss - before.rss).toFixed(1)} MB)`,
    )
    expect(size).toBeGreaterThan(500_000)
    // the viewers are stuck (the server holds bytes for them), and each costs at most the
    // reading its socket is on: 40 readings queued would be 20 x 40 of them, less what the kernel took
    expect(after.buffered).toBeGreaterThan(0)
    expect(after.buffered).toBeLessThan(20 * 2 * size)
    // and all it references: at most the reading each viewer is stuck on (viewers that
    // connect over several intervals are stuck on different ones) and the newest, which they
    // share, plus 8 MB for reads in flight when the collection runs (-11 to +12 MB measured
    // at loads of 12-18; readings queued instead held +45 MB over these 40 readings)
    expect(held).toBeLessThan((21 * size) / 1024 / 1024 + 8)
  })
})

describe("Redis work per reading is bounded by bytes", () => {
  /** Bytes the own Redis has sent to its clients (INFO stats total_net_output_bytes). */
  const sentBytes = async (raw: ReturnType<typeof rawClient>) =>
    Number(/total_net_output_bytes:(\d+)/.exec(await raw.info("stats"))?.[1])

  it("a queue page over 30 dead jobs of 0.9 MB and a job page of one send kilobytes, not megabytes; also with hidePayloads", async () => {
    const raw = rawClient(own.url)
    onCleanup(() => raw.quit())
    const q = await deadQueue(own.url, 30, 900_000)
    const id = (await raw.zrange(`${PREFIX}:{${q.name}}:dead`, "0", "0"))[0] as string
    for (const hidePayloads of [false, true]) {
      const { port } = await serve(dashboardHandler({ connection: own.url, prefix: PREFIX, hidePayloads }))
      const sent: Record<string, number> = {}
      for (const [what, route] of [
        ["queue", `/api/queue?name=${q.name}`],
        ["job", `/api/job?queue=${q.name}&id=${id}`],
      ] as const) {
        const before = await sentBytes(raw)
        const reply = await rawRequest(port, route)
        expect(statusOf(reply), bodyOf(reply).slice(0, 300)).toBe(200)
        sent[what] = (await sentBytes(raw)) - before
        expect(sent[what], `${what} page: bytes from Redis`).toBeLessThan(what === "queue" ? 200_000 : 50_000)
        const says = hidePayloads ? "(hidden: --hide-payloads)" : "(not loaded: 900002 bytes"
        expect(bodyOf(reply).includes(says), `${what} page says ${says}`).toBe(true)
      }
      console.log(
        `PEEK-BYTES: hidePayloads=${hidePayloads} queue page ${sent.queue} B, job page ${sent.job} B from Redis`,
      )
    }
  })

  it("a job list of 30 completed jobs with 10 kB results sends kilobytes from Redis: each result cut in Redis; with hidePayloads none", async () => {
    const raw = rawClient(own.url)
    onCleanup(() => raw.quit())
    const q = new Queue<number>(name(), { connection: own.url, prefix: PREFIX })
    onCleanup(() => q.close())
    await q.addBulk(Array.from({ length: 30 }, (_, i) => ({ payload: i })))
    const w = new Worker<number>(q.name, async (job) => `${job.payload}`.padEnd(10_000, "r"), {
      connection: own.url,
      prefix: PREFIX,
      concurrency: 10,
    })
    onCleanup(() => w.close())
    w.on("error", () => {})
    await until("every job completed", async () => (await q.stats()).counters.completed === 30)
    await w.close()
    for (const hidePayloads of [false, true]) {
      const { port } = await serve(dashboardHandler({ connection: own.url, prefix: PREFIX, hidePayloads }))
      const before = await sentBytes(raw)
      const reply = await rawRequest(port, `/api/jobs?queue=${q.name}&state=completed`)
      expect(statusOf(reply), bodyOf(reply).slice(0, 300)).toBe(200)
      const sent = (await sentBytes(raw)) - before
      expect(sent, "bytes from Redis").toBeLessThan(50_000)
      const rows = (
        JSON.parse(bodyOf(reply).replace(/^[0-9a-f]+\r\n|\r\n0\r\n\r\n$/g, "")) as {
          page: { jobs: Array<{ result?: { text: string | null; length: number } }> }
        }
      ).page.jobs
      expect(rows).toHaveLength(30)
      for (const r of rows) {
        expect(r.result?.length).toBe(10_002)
        if (hidePayloads) expect(r.result?.text).toBeNull()
        else expect(r.result?.text).toMatch(/^"\d+r{150,}/)
        if (!hidePayloads) expect(r.result!.text!.length).toBeLessThanOrEqual(LIST_PEEK_LIMITS.cut)
      }
      console.log(`PEEK-BYTES: hidePayloads=${hidePayloads} job list of 30 results of 10 kB: ${sent} B from Redis`)
    }
  })

  it("show all reads one value up to 4 MiB whole and refuses a longer one (413) without loading it; Find loads no value", async () => {
    const raw = rawClient(own.url)
    onCleanup(() => raw.quit())
    const q = await deadQueue(own.url, 2, 900_000)
    const [id, other] = (await raw.zrange(`${PREFIX}:{${q.name}}:dead`, "0", "1")) as [string, string]
    const { port } = await serve(dashboardHandler({ connection: own.url, prefix: PREFIX }))
    expect(bodyOf(await rawRequest(port, `/api/full?queue=${q.name}&id=${id}&field=payload`)).length).toBeGreaterThan(
      900_000,
    )
    await raw.hset(`${PREFIX}:{${q.name}}:data`, other, JSON.stringify("y".repeat(5_000_000)))
    const before = await sentBytes(raw)
    const refused = await rawRequest(port, `/api/full?queue=${q.name}&id=${other}&field=payload`)
    expect(statusOf(refused)).toBe(413)
    expect(bodyOf(refused)).toContain("leaseq job")
    // Find of the same job loads no value either
    expect(statusOf(await rawRequest(port, `/api/find?id=${other}&queue=${q.name}`))).toBe(200)
    expect((await sentBytes(raw)) - before).toBeLessThan(50_000)
  })
})

describe("the CLI's help", () => {
  it("shows --listen's default as an address: 127.0.0.1:7300 for the dashboard, 127.0.0.1:9464 for metrics", async () => {
    const { runCli } = await import("../support/child.ts")
    const dashboard = await runCli(["dashboard", "--help"])
    expect(dashboard.out.replace(/\s+/g, " ")).toContain("(default: 127.0.0.1:7300)")
    const metrics = await runCli(["metrics", "--help"])
    expect(metrics.out.replace(/\s+/g, " ")).toContain("(default: 127.0.0.1:9464)")
  })
})

describe("the new options are checked", () => {
  it("a bad allowedHosts, maxViews, maxQueues or readTimeoutMs is refused, naming the field, before connecting", async () => {
    const { metricsHandler } = await import("../../src/metrics.ts")
    const refused = (f: () => unknown) => {
      try {
        f()
      } catch (e) {
        return e instanceof Error ? e.message : String(e)
      }
      return "accepted"
    }
    expect(refused(() => dashboardHandler({ allowedHosts: ["a b"] }))).toContain("allowedHosts")
    expect(refused(() => dashboardHandler({ maxViews: 0 }))).toContain("maxViews")
    expect(refused(() => metricsHandler({ maxQueues: 0 }))).toContain("maxQueues")
    expect(refused(() => metricsHandler({ readTimeoutMs: 1.5 }))).toContain("readTimeoutMs")
  })
})
