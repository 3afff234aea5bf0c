/**
 * Issue 34's dashboard over raw sockets: the bulk `clean` action sits behind the same checks
 * as every action (actions on, a JSON body, the page's own origin, the token) and a refused
 * or malformed one deletes nothing; dead letters are grouped by error with what varies per
 * job (ids, numbers, e-mail addresses, UUIDs, hex) masked out.
 */
import { describe, expect, it } from "vitest"
import { groupDead, maskError } from "../../src/dashboard/DeadGroups.ts"
import type { dashboardHandler } from "../../src/dashboard.ts"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { connect } from "../../src/redis/Client.ts"
import { serveDashboard } from "../support/browser.ts"
import { onCleanup } from "../support/cleanup.ts"
import { newJob, run } from "../support/jobs.ts"
import { bodyOf, rawRequest, statusOf } from "../support/raw-http.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"

const PREFIX = "lqdashbulk"
const TOKEN = "bulk-token-0123456789abcdef"
const name = queueNamer("dashbulk")

/** A dashboard on the suite's Redis (actions on unless said), closed after the test. */
const serve = async (options: Parameters<typeof dashboardHandler>[0] = {}) => {
  const served = await serveDashboard({
    connection: redisUrl(),
    prefix: PREFIX,
    allowActions: true,
    token: TOKEN,
    ...options,
  })
  onCleanup(served.close)
  return served.port
}

/** A queue under the prefix with `completed` jobs completed (retained by the default retention) and one waiting. */
const withCompleted = async (completed: number) => {
  const client = connect(redisUrl())
  onCleanup(() => client.close())
  const keys = queueKeys(name(), PREFIX)
  const c = makeCommands(client, keys)
  await run(c.add(Array.from({ length: completed }, () => newJob())))
  const { jobs } = await run(c.reserve(completed, 60_000, 0))
  await run(c.complete(jobs.map((j) => ({ id: j.id, token: j.token }))))
  await run(c.add([newJob()]))
  return { keys, c }
}

/** The JSON object of a raw reply's body (chunked framing cut off). */
const jsonOf = (reply: string) => {
  const body = bodyOf(reply)
  return JSON.parse(body.slice(body.indexOf("{"), body.lastIndexOf("}") + 1))
}

/** A POST of `body` to /api/action with the token and a JSON content type, plus `headers`. */
const action = (port: number, body: unknown, headers: Record<string, string> = {}) =>
  rawRequest(
    port,
    "/api/action",
    { "content-type": "application/json", "x-leaseq-token": TOKEN, ...headers },
    { method: "POST", body: typeof body === "string" ? body : JSON.stringify(body) },
  )

describe("the clean action", () => {
  it("deletes the completed jobs of a queue with the token, and says how many", async () => {
    const { keys } = await withCompleted(3)
    const port = await serve()
    const reply = await action(port, { queue: keys.queue, action: "clean", state: "completed" })
    expect(statusOf(reply)).toBe(200)
    expect(jsonOf(reply)).toMatchObject({ count: 3 })
    const raw = rawClient()
    onCleanup(() => raw.quit())
    expect(await raw.zcard(keys.done)).toBe(0)
    expect(await raw.llen(keys.wait)).toBe(1) // the waiting job is untouched
  })

  it("is refused without the token, from another origin, cross-site, with actions off, or without a JSON body: nothing deleted", async () => {
    const { keys } = await withCompleted(2)
    const raw = rawClient()
    onCleanup(() => raw.quit())
    const before = await dumpQueue(raw, keys.queue, PREFIX)
    const port = await serve()
    const body = { queue: keys.queue, action: "clean", state: "completed" }
    const refusals: Array<[string, Promise<string>]> = [
      ["no token", action(port, body, { "x-leaseq-token": "" })],
      ["wrong token", action(port, body, { "x-leaseq-token": "x".repeat(TOKEN.length) })],
      ["foreign origin", action(port, body, { origin: "http://evil.example" })],
      ["null origin", action(port, body, { origin: "null" })],
      ["cross-site", action(port, body, { "sec-fetch-site": "cross-site" })],
      ["form body", action(port, body, { "content-type": "application/x-www-form-urlencoded" })],
    ]
    for (const [what, reply] of refusals) expect(statusOf(await reply), what).toBe(403)
    const readOnly = await serve({ allowActions: false, token: undefined })
    expect(statusOf(await action(readOnly, body))).toBe(403)
    // a forged Host is refused before anything is read (DNS rebinding)
    expect(statusOf(await action(port, body, { host: "evil.example" }))).toBe(421)
    expect(await dumpQueue(raw, keys.queue, PREFIX)).toEqual(before)
  })

  it("bad fields get a 400 naming the field and the value, and delete nothing; a body past 64 KiB is cut off", async () => {
    const { keys } = await withCompleted(2)
    const raw = rawClient()
    onCleanup(() => raw.quit())
    const before = await dumpQueue(raw, keys.queue, PREFIX)
    const port = await serve()
    const cases: Array<[unknown, RegExp]> = [
      [
        { queue: keys.queue, action: "clean", state: "waiting" },
        /state must be one of completed, cancelled, dead; got "waiting"/,
      ],
      [{ queue: keys.queue, action: "clean" }, /state must be one of/],
      [
        { queue: keys.queue, action: "clean", state: "dead", olderThanMs: -1 },
        /olderThanMs must be a whole number.*got -1/,
      ],
      [{ queue: keys.queue, action: "clean", state: "dead", olderThanMs: "1" }, /olderThanMs.*got "1"/],
      [{ queue: keys.queue, action: "clean", state: "dead", ids: ["a"] }, /clean takes no ids/],
      [{ queue: keys.queue, action: "clean", state: "dead", all: 0 }, /all .* must be 1 to 100000; got 0/],
      [{ queue: keys.queue, action: "retry", all: 1, state: "dead" }, /retry takes neither state nor olderThanMs/],
      [{ queue: "no{braces}", action: "clean", state: "completed" }, /queue/],
    ]
    for (const [body, error] of cases) {
      const reply = await action(port, body)
      expect(statusOf(reply), JSON.stringify(body)).toBe(400)
      expect(jsonOf(reply).error).toMatch(error)
    }
    const huge = await action(port, { queue: keys.queue, action: "clean", state: "completed", pad: "x".repeat(70_000) })
    expect(statusOf(huge)).not.toBe(200)
    expect(await dumpQueue(raw, keys.queue, PREFIX)).toEqual(before)
  })
})

describe("dead letters grouped by error", () => {
  it("masks e-mail addresses, UUIDs, ULIDs, hex and numbers, and keeps the words", () => {
    expect(maskError("mailbox full: ann.lee+x@mail.example.org")).toBe("mailbox full: <email>")
    expect(maskError("order 42 of 3.5 kg")).toBe("order <n> of <n> kg")
    expect(maskError("no row 0b6f1e4c-3d5a-4f7e-9a2b-1c3d4e5f6a7b")).toBe("no row <uuid>")
    expect(maskError("job 01JD3K5Q9V8X7W6T5S4R3P2N1M gone")).toBe("job <id> gone")
    expect(maskError("at 0x7ffd12 trace deadbeef1234")).toBe("at <hex> trace <hex>")
    // words that happen to be hex letters, and digits inside words, stay
    expect(maskError("decade accepted utf8")).toBe("decade accepted utf8")
  })

  it("5 errors that differ only in an address are one group of 5 with their ids, the largest group first", () => {
    const jobs = [
      ...["a@x.io", "b@y.org", "c.d@z.example.com", "e@x.io", "f@x.io"].map((to, i) => ({
        id: `j${i}`,
        reason: "error",
        message: `SMTP 550: mailbox ${to} unavailable`,
      })),
      { id: "t", reason: "timeout", message: "took 30000 ms" },
    ]
    expect(groupDead(jobs)).toEqual([
      {
        reason: "error",
        message: "SMTP <n>: mailbox <email> unavailable",
        count: 5,
        ids: ["j0", "j1", "j2", "j3", "j4"],
      },
      { reason: "timeout", message: "took <n> ms", count: 1, ids: ["t"] },
    ])
  })

  it("the queue reading groups the dead jobs so", async () => {
    const client = connect(redisUrl())
    onCleanup(() => client.close())
    const keys = queueKeys(name(), PREFIX)
    const c = makeCommands(client, keys)
    const jobs = Array.from({ length: 5 }, () => newJob({ maxAttempts: 1 }))
    await run(c.add(jobs))
    const { jobs: leased } = await run(c.reserve(5, 60_000, 0))
    for (const [i, l] of leased.entries())
      await run(
        c.fail(l, { delayMs: 0, error: JSON.stringify({ message: `no user user${i}@example.com` }), mode: "retry" }),
      )
    const port = await serve({ allowActions: false, token: undefined })
    const reply = await rawRequest(port, `/api/queue?name=${keys.queue}`)
    expect(statusOf(reply)).toBe(200)
    const reading = jsonOf(reply)
    expect(reading.dead.groups).toEqual([
      { reason: expect.any(String), message: "no user <email>", count: 5, ids: expect.any(Array) },
    ])
    expect([...reading.dead.groups[0].ids].sort()).toEqual(leased.map((l) => l.id).sort())
    // each dead job still carries its own message
    expect(reading.dead.jobs.map((j: { message: string }) => j.message).sort()[0]).toBe("no user user0@example.com")
  })
})
