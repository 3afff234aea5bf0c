/**
 * Large payloads answered by reference (calls/PayloadRefs.ts, lua/reserve.lua ARGV[8]): a
 * reserve call sent with `refAt` leaves payloads of that size out of the script's reply and
 * reads them with a plain HMGET; a worker asks so once it leased a large one.
 */
import type { Redis } from "ioredis"
import { beforeAll, describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { fillPayloads, LARGE_PAYLOAD_BYTES } from "../../src/engine/calls/PayloadRefs.ts"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import type { Reserved } from "../../src/engine/scripts/LeaseScripts.ts"
import { scriptKeys } from "../../src/engine/scripts/Script.ts"
import type { RedisClient } from "../../src/redis/Client.ts"
import { newJob, reservation, run } from "../support/jobs.ts"
import { monitorOf } from "../support/monitor.ts"
import { proxyToSuiteRedis } from "../support/proxy.ts"
import { queueNamer, redisUrl, sharedClients } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("bigpay")
const shared = sharedClients()
let raw: Redis
let client: RedisClient
beforeAll(() => {
  raw = shared.raw
  client = shared.client
})

/** JSON text of `bytes` bytes or a little more, with characters JSON escapes and a multi-byte one. */
const bigPayload = (n: number, bytes: number) => JSON.stringify({ n, s: `é"\\|\n${"x".repeat(bytes)}` })

describe("large payloads by reference", () => {
  it("the script leaves payloads of refAt bytes or more out, and the reserve command reads them", async () => {
    const keys = queueKeys(name())
    const c = makeCommands(client, keys)
    const big = newJob({ payload: bigPayload(1, LARGE_PAYLOAD_BYTES) })
    const small = newJob()
    await run(c.add([big, small]))
    const args = Scripts.reserve.args({
      workerId: "w",
      requestId: "r1",
      count: 2,
      leaseMs: 60_000,
      promoteLimit: 0,
      timeoutMs: 0,
      completes: [],
      refAt: LARGE_PAYLOAD_BYTES,
    })
    const callKeys = scriptKeys(Scripts.reserve, keys)
    const reply = (await raw.eval(Scripts.reserve.source, callKeys.length, ...callKeys, ...args)) as unknown[]
    // the jobs in the order taken, one payload element each: the large one ""
    const ids = String(reply[3])
      .split("|")
      .filter((_, i) => i % 5 === 0)
    expect(ids).toEqual([big.id, small.id])
    expect(reply.slice(4, 6)).toEqual(["", small.payload])

    const more = [newJob({ payload: bigPayload(2, 3 * LARGE_PAYLOAD_BYTES) }), newJob()]
    await run(c.add(more))
    const got = await run(c.reserve(2, 60_000, 0, [], { refAt: LARGE_PAYLOAD_BYTES }))
    expect(got.jobs.map((j) => [j.id, j.payload])).toEqual(more.map((j) => [j.id, j.payload]))
  })

  it("a job without data found by a reserve with refAt dies as missing-data, as without", async () => {
    const keys = queueKeys(name())
    const c = makeCommands(client, keys)
    const gone = newJob({ payload: bigPayload(3, LARGE_PAYLOAD_BYTES) })
    const kept = newJob({ payload: bigPayload(4, LARGE_PAYLOAD_BYTES) })
    await run(c.add([gone, kept]))
    await raw.hdel(keys.data, gone.id)
    const got = await run(c.reserve(2, 60_000, 0, [], { refAt: LARGE_PAYLOAD_BYTES }))
    expect(got.jobs.map((j) => [j.id, j.payload])).toEqual([[kept.id, kept.payload]])
    expect(await raw.zscore(keys.dead, gone.id)).not.toBeNull()
    expect(JSON.parse(String(await raw.hget(keys.err, gone.id))).reason).toBe("missing-data")
  })

  it("a payload gone between the script and the read leaves its job out", async () => {
    const keys = queueKeys(name())
    const job = reservation
    const reserved: Reserved = { jobs: [job("a", ""), job("b", "{}"), job("c", "")], nextDueMs: -1, completed: [] }
    // a command layer that answers the HMGET as Redis would for a job whose data was deleted
    const asked: unknown[][] = []
    const fake = {
      command: async (name: string, args: ReadonlyArray<unknown>) => {
        asked.push([name, ...args])
        return [null, '{"c":1}']
      },
      describe: "fake",
    } as unknown as RedisClient
    const filled = await run(fillPayloads(fake, keys, reserved))
    expect(asked).toEqual([["HMGET", keys.data, "a", "c"]])
    expect(filled.jobs.map((j) => [j.id, j.payload])).toEqual([
      ["b", "{}"],
      ["c", '{"c":1}'],
    ])
  })

  it("the read by reference with its reply lost is sent again on the new connection: the jobs leased once, whole", async () => {
    const q = name()
    const keys = queueKeys(q)
    const proxy = await proxyToSuiteRedis()
    const queue = useQueue<{ n: number; s: string }>(q, { connection: proxy.url })
    const payloads = [0, 1, 2].map((n) => JSON.parse(bigPayload(n, 6_000)) as { n: number; s: string })
    await queue.addBulk(payloads.map((payload) => ({ payload })))
    const monitor = await monitorOf(redisUrl())
    // the first reserve sees a large payload: the next reads them by reference
    const [first] = await queue.reserve({ count: 1 })
    expect(first!.payload).toEqual(payloads[0])
    // the script's reply passes (one chunk), the HMGET's is swallowed; ioredis sends the
    // HMGET again once the connection is back
    const before = proxy.droppedReplies
    proxy.dropReplies(1)
    const next = queue.reserve({ count: 2 })
    await until("the read's reply swallowed", () => proxy.droppedReplies > before, { everyMs: 5 })
    proxy.cut()
    proxy.heal()
    const got = await next
    expect(got.map((j) => j.payload)).toEqual(payloads.slice(1))
    expect(await raw.zcard(keys.active)).toBe(3)
    expect(await raw.llen(keys.wait)).toBe(0)
    await monitor.caughtUp()
    const sent = monitor.seen.filter((m) => m.source !== "lua")
    // two reserve calls, none sent again; the read of the two payloads sent twice
    expect(sent.filter((m) => m.args[0] === "evalsha" && m.args.includes(keys.active)).length).toBe(2)
    const reads = sent.filter((m) => m.args[0] === "HMGET" && m.args[1] === keys.data)
    expect(reads.map((m) => m.args.slice(2))).toEqual([got.map((j) => j.id), got.map((j) => j.id)])
  })

  it("a worker that leased a large payload reads the next ones by reference; every handler gets its own", async () => {
    const q = name()
    const keys = queueKeys(q)
    const queue = useQueue<{ n: number; s?: string }>(q)
    // large and small jobs mixed: by reference only the large ones leave the script's reply
    const payloads = Array.from({ length: 60 }, (_, n) => (n % 3 === 0 ? { n } : JSON.parse(bigPayload(n, 10_240))))
    await queue.addBulk(payloads.map((payload) => ({ payload })))
    const monitor = await monitorOf(redisUrl())
    const seen = new Map<number, string>()
    useWorker<{ n: number; s?: string }>(
      q,
      async (job) => {
        seen.set(job.payload.n, JSON.stringify(job.payload))
      },
      { concurrency: 4 },
    )
    await until("every job run", () => seen.size === payloads.length)
    for (const p of payloads) expect(seen.get(p.n)).toBe(JSON.stringify(p))
    await monitor.caughtUp()
    // HMGETs of data sent by the worker itself (a script's commands show as "lua"): the reads by reference
    const read = monitor.seen
      .filter((m) => m.source !== "lua" && m.args[0] === "HMGET" && m.args[1] === keys.data)
      .flatMap((m) => m.args.slice(2))
    expect(read.length).toBeGreaterThan(0)
    // each a large job's (its data retained with it as a completed job)
    for (const id of read) expect(await raw.hstrlen(keys.data, id)).toBeGreaterThanOrEqual(LARGE_PAYLOAD_BYTES)
  })
})
