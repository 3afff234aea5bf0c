/**
 * `verify` on a large queue: it reads the queue in short pages, so Redis's Lua heap
 * never holds the backlog's payloads, and it still finds every planted violation
 * when the pieces of it sit on different pages. Runs against its own redis-server,
 * so INFO memory and commandstats are this file's alone.
 */
import { Effect } from "effect"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeCommands, type NewJob, runScript } from "../../src/engine/calls/Commands.ts"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { type ScriptCall, verifyQueue } from "../../src/engine/calls/Verify.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { connect, type RedisClient } from "../../src/redis/Client.ts"
import { type LocalRedis, startRedisServer } from "../../src/testing/RedisServer.ts"
import { queueNamer, rawClient } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("verify")
let server: LocalRedis
let client: RedisClient
let raw: Redis
beforeAll(async () => {
  server = await startRedisServer()
  client = connect(server.url)
  raw = rawClient(server.url)
})
afterAll(async () => {
  await client?.close()
  raw?.disconnect()
  await server?.stop()
})

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)
let seq = 0
const job = (payload: string, over: Partial<NewJob> = {}): NewJob => ({
  id: `job-${String(++seq).padStart(6, "0")}`,
  payload,
  delayMs: 0,
  maxAttempts: 3,
  dedupeKey: "",
  dedupeTtlMs: 0,
  ...over,
})
const setup = () => {
  const keys = queueKeys(name())
  return { keys, c: makeCommands(client, keys) }
}
/** One field of INFO memory, in bytes. */
const memory = async (field: string): Promise<number> => {
  const info = await raw.info("memory")
  const m = new RegExp(`^${field}:(\\d+)`, "m").exec(info)
  if (!m) throw new Error(`INFO memory has no ${field}`)
  return Number(m[1])
}
/** How many EVALSHA + EVAL calls the server has run (INFO commandstats). */
const scriptCalls = async (): Promise<number> => {
  const info = await raw.info("commandstats")
  let n = 0
  for (const m of info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)) n += Number(m[1])
  return n
}

describe("verify on a large backlog (N9)", () => {
  it("N9: keeps the waiting jobs' payloads out of the Lua heap", async () => {
    const { keys, c } = setup()
    const JOBS = 3_000
    const payload = JSON.stringify({ blob: "x".repeat(20_000) })
    for (let i = 0; i < JOBS; i += 100) await run(c.add(Array.from({ length: 100 }, () => job(payload))))
    expect(await raw.llen(keys.wait)).toBe(JOBS)
    const backlog = JOBS * payload.length
    // a fresh Lua interpreter: what it holds afterwards is what verify left there
    await raw.script("FLUSH")
    const before = await memory("used_memory_lua")
    const result = await run(c.verify(10))
    const grown = (await memory("used_memory_lua")) - before
    expect(result).toEqual({ violations: 0, jobs: JOBS, lines: [] })
    // one page of 100 entries is 2 MB of payloads: a small multiple of that, never the 60 MB backlog
    expect(grown, `used_memory_lua grew by ${grown} bytes for a ${backlog}-byte backlog`).toBeLessThan(backlog / 6)
    await raw.del(keys.wait, keys.meta, keys.marker)
  })

  it("N9: finds planted violations whose parts sit on different pages", async () => {
    const { keys, c } = setup()
    // payloads over 64 bytes and sets over 128 members: hashes and sorted sets in their
    // large encodings, where HSCAN / ZSCAN really page (small ones come back whole)
    const payload = JSON.stringify({ pad: "p".repeat(100) })
    const waiting = Array.from({ length: 20 }, () => job(payload))
    // maxAttempts 5 (not the default 3, which is stored as no field): each has a max entry
    const delayed = Array.from({ length: 150 }, () => job(payload, { delayMs: 3_600_000, maxAttempts: 5 }))
    await run(c.add([...waiting, ...delayed]))
    const { jobs: leased } = await run(c.reserve(3, 60_000, 0))
    expect(leased).toHaveLength(3)
    const clean = await run(c.verify(100, 2))
    expect(clean).toEqual({ violations: 0, jobs: 170, lines: [] })

    // the oldest waiting job (read on the first page) also waits at the far end (read on the last)
    const oldest = waiting[3]!.id
    await raw.lpush(keys.wait, oldest)
    // a delayed job also dead: found on some ZSCAN page of dead, checked against delayed
    const twice = delayed[140]!.id
    await raw.zadd(keys.dead, 1, twice)
    // a payload without a job, among 150 others
    await raw.hset(keys.data, "ghost", payload)
    // a delayed job without its payload (its maxAttempts is then an orphan field too)
    const bare = delayed[70]!.id
    await raw.hdel(keys.data, bare)
    // an active job's id also put back on wait (it has a stored payload, so no other violation)
    await raw.lpush(keys.wait, leased[0]!.id)

    const expected = [
      `duplicate ${oldest} in wait and wait`,
      `duplicate ${leased[0]!.id} in wait and active`,
      `duplicate ${twice} in delayed and dead`,
      `orphan-data ghost has a payload but is in no state`,
      `no-data ${bare} is in delayed without a payload`,
      `orphan-field ${bare} has max but no payload`,
    ].sort()
    const calls = await scriptCalls()
    const paged = await run(c.verify(100, 2))
    expect(await scriptCalls()).toBeGreaterThan(calls + 75) // 150 delayed, 2 at a time
    expect([...paged.lines].sort()).toEqual(expected)
    expect(paged).toMatchObject({ violations: 6, jobs: 170 })
    // the same findings as with pages large enough to hold everything at once
    const whole = await run(c.verify(100, 10_000))
    expect({ ...whole, lines: [...whole.lines].sort() }).toEqual({ ...paged, lines: expected })
    await raw.del(...Object.values(keys).filter((k) => k.startsWith("leaseq:{")))
  })

  it("N9: a job promoted into wait after wait was read is not reported as an orphan payload", async () => {
    const { keys, c } = setup()
    const payload = JSON.stringify({ pad: "p".repeat(100) })
    await run(c.add([job(payload), job(payload)]))
    const due = job(payload, { delayMs: 1 })
    await run(c.add([due]))
    await until("the delayed job is due", async () => {
      const [s, us] = await raw.time()
      return Number(s) * 1000 + Number(us) / 1000 > Number(await raw.zscore(keys.delayed, due.id))
    })
    // the script calls verify makes, with a real sweep run between reading wait and
    // reading data: the due job moves from delayed to wait, keeping its stored payload
    let swept = false
    const call: ScriptCall<never> = (script, input) =>
      Effect.gen(function* () {
        if (script.name === Scripts.verifyHash.name && !swept) {
          swept = true
          expect(yield* Effect.orDie(c.sweep(10))).toMatchObject({ promoted: 1 })
        }
        return yield* Effect.orDie(runScript(client, keys, script, input))
      })
    const result = await run(verifyQueue(call, { maxLines: 10, pageSize: 1 }))
    expect(swept).toBe(true)
    expect(await raw.lrange(keys.wait, 0, 0)).toEqual([due.id])
    expect(result).toEqual({ violations: 0, jobs: 3, lines: [] })
    // a payload that no job owns is still reported after the recheck
    await raw.hset(keys.data, "ghost", payload)
    expect(await run(c.verify(10, 1))).toEqual({
      violations: 1,
      jobs: 3,
      lines: ["orphan-data ghost has a payload but is in no state"],
    })
  })

  it("N9: the Promise face checks pageSize and maxLines before reading anything", async () => {
    const q = name("promise")
    const queue = useQueue(q, { connection: server.url })
    for (const [options, field] of [
      [{ pageSize: 0 }, "pageSize"],
      [{ pageSize: 10_001 }, "pageSize"],
      [{ pageSize: 1.5 }, "pageSize"],
      [{ maxLines: 0 }, "maxLines"],
    ] as const) {
      const e = await queue.verify(options).catch((err: unknown) => err)
      expect(e).toMatchObject({ _tag: "InvalidOptions", field })
      expect(String((e as Error).message)).toContain(field)
    }
    await queue.add({ n: 1 })
    expect(await queue.verify({ pageSize: 1 })).toEqual({ violations: 0, jobs: 1, lines: [] })
  })
})
