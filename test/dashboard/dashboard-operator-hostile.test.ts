/**
 * The dashboard's operator views against hostile input, over raw sockets: what a reading
 * of a queue's schedules costs Redis is bounded by bytes whatever they hold, and
 * hidePayloads sends none of their payloads. Redis-side costs are read from a redis-server
 * of this file's own (INFO), so no other test's traffic counts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { dashboardHandler } from "../../src/dashboard.ts"
import { Queue } from "../../src/index.ts"
import { type LocalRedis, startRedisServer } from "../../src/testing/RedisServer.ts"
import { serveDashboard } from "../support/browser.ts"
import { onCleanup } from "../support/cleanup.ts"
import { bodyOf, rawRequest, statusOf } from "../support/raw-http.ts"
import { dumpQueue, queueNamer, rawClient } from "../support/redis.ts"

const PREFIX = "lqdashoph"
const name = queueNamer("dashoph")

let own: LocalRedis
beforeAll(async () => {
  own = await startRedisServer()
})
afterAll(async () => {
  await own.stop()
})

/** A dashboard on the own Redis, closed after the test. */
const serve = async (options: Parameters<typeof dashboardHandler>[0] = {}) => {
  const served = await serveDashboard({ connection: own.url, prefix: PREFIX, ...options })
  onCleanup(served.close)
  return served.port
}

/** Bytes the own Redis has sent to its clients (INFO stats total_net_output_bytes). */
const sentBytes = async (raw: ReturnType<typeof rawClient>) =>
  Number(/total_net_output_bytes:(\d+)/.exec(await raw.info("stats"))?.[1])

const newQueue = () => {
  const q = new Queue<unknown>(name(), { connection: own.url, prefix: PREFIX, maxPayloadBytes: 2_000_000 })
  onCleanup(() => q.close())
  return q
}

describe("schedules: a reading is bounded by bytes", () => {
  it("100 schedules of 0.9 MB and 40 of 60 kB: the queue page costs Redis kilobytes, and says what it did not load", async () => {
    const raw = rawClient(own.url)
    onCleanup(() => raw.quit())
    const q = newQueue()
    // the huge ones tick on multiples of 366 days since the epoch, the mid ones every whole
    // second: the mid ones come first by next run whatever the clock says (with whole minutes,
    // a minute turning while the huge ones were added put them first, their tick overdue)
    for (let i = 0; i < 100; i++)
      await q.schedule(`huge-${i}`, { every: 366 * 86_400_000 }, { payload: "h".repeat(900_000) })
    for (let i = 0; i < 40; i++) await q.schedule(`mid-${i}`, { every: 1000 }, { payload: "m".repeat(60_000) })
    const port = await serve()
    const before = await sentBytes(raw)
    const reply = await rawRequest(port, `/api/queue?name=${q.name}`)
    const sent = (await sentBytes(raw)) - before
    expect(statusOf(reply)).toBe(200)
    const body = bodyOf(reply)
    const reading = JSON.parse(body.slice(body.indexOf("{"), body.lastIndexOf("}") + 1)) as {
      schedules: { total: number; rows: Array<{ name: string; notLoaded?: boolean; payload: { length: number } }> }
    }
    expect(reading.schedules.total).toBe(140)
    // the first 100 by next run: the 40 every-second ones first, then huge ones
    expect(reading.schedules.rows).toHaveLength(100)
    const mid = reading.schedules.rows.filter((r) => r.name.startsWith("mid-"))
    expect(mid).toHaveLength(40)
    // at most 1 MiB loaded in Redis: 17 schedules of 60 kB, the rest given by length only
    expect(mid.filter((r) => r.notLoaded !== true).length).toBe(17)
    expect(reading.schedules.rows.filter((r) => r.name.startsWith("huge-")).every((r) => r.notLoaded)).toBe(true)
    expect(sent).toBeLessThan(100_000)
    console.log(`SCHEDULES-PEEK: 140 schedules (94 MB of payloads): queue page ${sent} B from Redis`)
  })

  it("with hidePayloads a schedule's payload is not sent, only its length", async () => {
    const q = newQueue()
    await q.schedule("secret", { every: 60_000 }, { payload: { secret: "s3cret-payload" } })
    for (const hidePayloads of [true, false]) {
      const port = await serve({ hidePayloads })
      const reply = await rawRequest(port, `/api/queue?name=${q.name}`)
      expect(statusOf(reply)).toBe(200)
      expect(bodyOf(reply).includes("s3cret-payload"), `hidePayloads ${hidePayloads}`).toBe(!hidePayloads)
    }
  })
})

/** Commands the own Redis ran since the last CONFIG RESETSTAT, less the test's own INFO and CONFIG. */
const queueReads = async (raw: ReturnType<typeof rawClient>): Promise<string[]> => {
  const info = await raw.info("commandstats")
  const own = ["info", "config|resetstat", "config", "hello", "ping", "select", "client|setinfo", "client|setname"]
  return [...info.matchAll(/cmdstat_([^:]+):calls=\d+/g)].map((m) => m[1] as string).filter((c) => !own.includes(c))
}

describe("the job list's routes refuse what is not a page before reading anything", () => {
  it("a bad state, order, cursor or queue is a 400 naming it; a foreign Host 421; without the token 401; nothing read", async () => {
    const raw = rawClient(own.url)
    onCleanup(() => raw.quit())
    const q = newQueue()
    await q.add({ secret: "s3cret" })
    const port = await serve({ allowedHosts: ["dash.example"] })
    const guarded = await serve({ readsNeedToken: true, token: "operator-token-0123456789abcdef" })
    await raw.config("RESETSTAT")
    const bad: ReadonlyArray<readonly [string, string]> = [
      [`/api/jobs?queue=${q.name}&state=bogus`, "must be one of waiting, delayed"],
      [`/api/jobs?queue=${q.name}&state=__proto__`, "must be one of waiting"],
      [`/api/jobs?queue=${q.name}&order=sideways`, "order must be asc or desc"],
      [`/api/jobs?queue=${q.name}&cursor=${"9".repeat(201)}`, "must be the cursor of a previous getJobs"],
      [`/api/jobs?queue=${q.name}&cursor=%00`, "must be the cursor of a previous getJobs"],
      [`/api/jobs?queue=${q.name}&cursor=a%20b`, "must be the cursor of a previous getJobs"],
      ["/api/jobs?queue=a:b", "is not a queue name"],
      ["/api/jobs?queue=", "is not a queue name"],
      ["/api/jobs", "is not a queue name"],
      [`/api/stream?view=jobs:${q.name}:waiting:up:`, "order must be asc or desc"],
      [`/api/stream?view=jobs:${q.name}`, "must be one of waiting"],
      [`/api/stream?view=jobs:${q.name}:dead:asc:${"x".repeat(5000)}`, "must be the cursor of a previous getJobs"],
      [`/api/stream?view=queue:${q.name}:extra`, "give view="],
    ]
    for (const [target, says] of bad) {
      const reply = await rawRequest(port, target)
      expect(statusOf(reply), target).toBe(400)
      expect(bodyOf(reply), target).toContain(says)
    }
    const page = `/api/jobs?queue=${q.name}&state=waiting`
    for (const host of ["evil.example", `dash.example.evil:${port}`, ""]) {
      expect(statusOf(await rawRequest(port, page, { host })), host).toBe(421)
      expect(statusOf(await rawRequest(port, `/api/stream?view=jobs:${q.name}:waiting:asc:`, { host }))).toBe(421)
    }
    for (const token of [undefined, "operator-token-0123456789abcdefx"]) {
      const reply = await rawRequest(guarded, page, token ? { "x-leaseq-token": token } : {})
      expect(statusOf(reply)).toBe(401)
      expect(bodyOf(reply)).not.toContain("s3cret")
    }
    expect(await queueReads(raw)).toEqual([])
  })
})

describe("the job list: a page is bounded by bytes", () => {
  it("a page of 50 waiting jobs of 0.9 MB costs Redis kilobytes; with hidePayloads no payload is sent", async () => {
    const raw = rawClient(own.url)
    onCleanup(() => raw.quit())
    const q = newQueue()
    for (let i = 0; i < 60; i += 10)
      await q.addBulk(Array.from({ length: 10 }, (_, j) => ({ payload: `${i + j}-s3cret`.padEnd(900_000, "x") })))
    await q.add("small-s3cret")
    for (const hidePayloads of [false, true]) {
      const port = await serve({ hidePayloads })
      const before = await sentBytes(raw)
      const reply = await rawRequest(port, `/api/jobs?queue=${q.name}&state=waiting`)
      const sent = (await sentBytes(raw)) - before
      expect(statusOf(reply)).toBe(200)
      const body = bodyOf(reply)
      const reading = JSON.parse(body.slice(body.indexOf("{"), body.lastIndexOf("}") + 1)) as {
        page: { total: number; next?: string; jobs: Array<{ payload: { text: string | null; length: number } }> }
      }
      expect(reading.page.total).toBe(61)
      expect(reading.page.jobs).toHaveLength(50)
      expect(reading.page.next).toBe("50")
      expect(reading.page.jobs.every((j) => j.payload.text === null && j.payload.length === 900_002)).toBe(true)
      expect(sent).toBeLessThan(50_000)
      const last = await rawRequest(port, `/api/jobs?queue=${q.name}&state=waiting&cursor=50`)
      expect(bodyOf(last).includes("small-s3cret"), `hidePayloads ${hidePayloads}`).toBe(!hidePayloads)
      console.log(`JOBS-PEEK: hidePayloads=${hidePayloads} a page of 50 jobs of 0.9 MB: ${sent} B from Redis`)
    }
  })
})

describe("the job actions: refused unless asked right, and nothing written then", () => {
  const TOKEN = "operator-token-0123456789abcdef"
  const act = (port: number, body: unknown, headers: Record<string, string> = {}) =>
    rawRequest(
      port,
      "/api/action",
      { "content-type": "application/json", "x-leaseq-token": TOKEN, ...headers },
      { method: "POST", body: typeof body === "string" ? body : JSON.stringify(body) },
    )

  it("promote, retry, purge and cancel without the token, from another site or to a foreign Host write nothing", async () => {
    const raw = rawClient(own.url)
    onCleanup(() => raw.quit())
    const q = newQueue()
    const delayed = await q.add({ n: 1 }, { delayMs: 3_600_000 })
    const waiting = await q.add({ n: 2 })
    const port = await serve({ allowActions: true, token: TOKEN })
    const before = await dumpQueue(raw, q.name, PREFIX)
    const bodies = [
      { queue: q.name, action: "promote", ids: [delayed] },
      { queue: q.name, action: "retry", ids: [waiting] },
      { queue: q.name, action: "purge", ids: [waiting] },
      { queue: q.name, action: "cancel", ids: [waiting] },
    ]
    for (const b of bodies) {
      for (const headers of [
        { "x-leaseq-token": "" },
        { "x-leaseq-token": `${TOKEN}x` },
        { origin: "http://evil.example" },
        { origin: "null" },
        { "sec-fetch-site": "cross-site" },
      ])
        expect(statusOf(await act(port, b, headers)), `${b.action} ${JSON.stringify(headers)}`).toBe(403)
      expect(statusOf(await act(port, b, { host: "evil.example" })), b.action).toBe(421)
    }
    // actions off: refused even with the token
    const readOnly = await serve({ token: TOKEN })
    expect(statusOf(await act(readOnly, bodies[0]))).toBe(403)
    expect(await dumpQueue(raw, q.name, PREFIX)).toEqual(before)
  })

  it("bad targets are a 400 naming what to give; a job in another state is refused by the engine, naming its state", async () => {
    const raw = rawClient(own.url)
    onCleanup(() => raw.quit())
    const q = newQueue()
    const waiting = await q.add({ n: 1 })
    const port = await serve({ allowActions: true, token: TOKEN })
    const before = await dumpQueue(raw, q.name, PREFIX)
    const bad: ReadonlyArray<readonly [unknown, string]> = [
      [{ queue: q.name, action: "promote", all: 5 }, "promote takes ids (1 to 500)"],
      [{ queue: q.name, action: "promote" }, "promote takes ids"],
      [{ queue: q.name, action: "promote", ids: [] }, "promote takes ids"],
      [{ queue: q.name, action: "promote", ids: Array.from({ length: 501 }, (_, i) => `j${i}`) }, "promote takes ids"],
      [{ queue: q.name, action: "retry", ids: Array.from({ length: 501 }, (_, i) => `j${i}`) }, "give either ids"],
      [{ queue: q.name, action: "retry", all: 1e12 }, "give either ids"],
      [{ queue: q.name, action: "promote", ids: [{}] }, "id"],
      [{ queue: q.name, action: "promote", ids: ["x".repeat(200)] }, "id"],
      [{ queue: "a:b", action: "promote", ids: [waiting] }, "a:b"],
      [{ queue: q.name, action: "delete", ids: [waiting] }, "action must be one of"],
    ]
    for (const [body, says] of bad) {
      const reply = await act(port, body)
      expect(statusOf(reply), JSON.stringify(body).slice(0, 80)).toBe(400)
      expect(bodyOf(reply)).toContain(says)
    }
    expect(await dumpQueue(raw, q.name, PREFIX)).toEqual(before)
    for (const [action, id, state] of [
      ["promote", waiting, "waiting"],
      ["retry", waiting, "waiting"],
      ["promote", "01NOSUCHJOB0000000000000000", "unknown"],
    ] as const) {
      const reply = await act(port, { queue: q.name, action, ids: [id] })
      expect(statusOf(reply)).toBe(200)
      const r = JSON.parse(bodyOf(reply).replace(/^[0-9a-f]+\r\n|\r\n0\r\n\r\n$/g, "")) as {
        count: number
        refused: string[]
      }
      expect(r.count).toBe(0)
      expect(r.refused[0]).toContain(`${action} refused: job ${id} of queue ${q.name} is ${state}`)
    }
    expect(await dumpQueue(raw, q.name, PREFIX)).toEqual(before)
  })
})
