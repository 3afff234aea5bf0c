/**
 * The library of job-state transitions (lua/include/ready.lua, dead.lua and finish.lua),
 * each function once, on real Redis: a test script made of the includes and a dispatcher
 * calls one function, with the keys laid out as every script lays them out (its own keys,
 * then the ready group last). Then the scripts that move jobs, once each, to show they
 * move them the way the library says (front or back of ready).
 */
import { readFileSync } from "node:fs"
import type { Redis } from "ioredis"
import { beforeAll, describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { type QueueKeys, queueKeys, READY_KEYS } from "../../src/engine/model/Keys.ts"
import { newJob, run } from "../support/jobs.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"
import { untilRedisClock } from "../support/until.ts"

const name = queueNamer("transitions")
const shared = sharedClients()
const include = (file: string) => readFileSync(new URL(`../../lua/include/${file}.lua`, import.meta.url), "utf8")

/**
 * The includes, then: call the function ARGV[1] with the JSON-decoded arguments ARGV[2]
 * (dead_targets reads the ARGV of dead-retry itself: ARGV[2] mode, ARGV[3] limit, ids).
 */
const source = `${include("dedupe")}
${include("zset-page")}
${include("ready").replace("--!include groups", () => include("groups"))}
${include("events")}
${include("deps")}
${include("deps-gone")}
${include("dead")}
${include("finish")}
${include("active").replace("--!include ready", "")}
${include("job-state")}
local job = {
  data = KEYS[6], max = KEYS[7], fails = KEYS[8], lost = KEYS[9], err = KEYS[10], progress = KEYS[11],
  timeout = KEYS[12], done = KEYS[13], result = KEYS[14], dkey = KEYS[3], backoff = KEYS[19],
  errors = KEYS[20], logs = KEYS[21],
}
local fns = {
  ready_push = ready_push, ready_take = ready_take, ready_remove = ready_remove, ready_count = ready_count,
  ready_next = ready_next, ready_page = ready_page, ready_wake = ready_wake, ready_wake_if_any = ready_wake_if_any,
  to_delayed = to_delayed, delayed_remove = delayed_remove, delayed_due_at = delayed_due_at,
  delayed_count = delayed_count, delayed_first = delayed_first, delayed_scan = delayed_scan,
  delayed_due_in = delayed_due_in, delayed_any_due = delayed_any_due, promote_due = promote_due,
  ready_drain = ready_drain, delayed_drain = delayed_drain,
  delayed_page = function(after, count, rev)
    local page, last, ended = delayed_page(after, count, rev)
    return {page, last or {}, ended and 1 or 0}
  end,
  ready_left = ready_left, ready_forget = ready_forget,
  dead_targets = function() return dead_targets(KEYS[1]) end,
  dead_reply = function(count, missing) return dead_reply(KEYS[1], count, missing) end,
  retain_jobs = function(now, ids, results) return retain_jobs(job, now, ids, results) end,
  drop_jobs = function(ids, withResult) return drop_jobs(job, ids, withResult) end,
  errors_push = function(id, attempt, now, err) return errors_push(job.errors, id, attempt, now, err) end,
  job_state = function(id)
    return {job_state({active = KEYS[15], dead = KEYS[1], done = KEYS[13], cancelled = KEYS[16], lease = KEYS[17],
      holder = KEYS[18]}, id)}
  end,
  to_dead = function(now, ids)
    return to_dead({dead = KEYS[1], meta = KEYS[2], dkey = KEYS[3], dedupe = KEYS[4], dedupeid = KEYS[5]}, now, ids)
  end,
}
local args = ARGV[1] == 'dead_targets' and {} or cjson.decode(ARGV[2])
local r = fns[ARGV[1]](unpack(args))
if r == nil then return 'nil' end
if r == false then return 'false' end
if r == true then return 'true' end
return r
`
const OWN = [
  "dead",
  "meta",
  "dkey",
  "dedupe",
  "dedupeid",
  "data",
  "max",
  "fails",
  "lost",
  "err",
  "progress",
  "timeout",
  "done",
  "result",
  "active",
  "cancelled",
  "lease",
  "holder",
  "backoff",
  "errors",
  "logs",
] as const

/** Call one transition function on the queue of `keys` (`argv`: dead_targets' own ARGV after its name). */
const call = (
  raw: Redis,
  keys: QueueKeys,
  fn: string,
  args: ReadonlyArray<unknown>,
  argv?: ReadonlyArray<string>,
): Promise<unknown> =>
  raw.eval(
    source,
    OWN.length + READY_KEYS.length,
    ...[...OWN, ...READY_KEYS].map((k) => keys[k]),
    fn,
    ...(argv ?? [JSON.stringify(args)]),
  )

/** The ids in ready, the one that runs next first. */
const readyOrder = async (raw: Redis, keys: QueueKeys) => (await raw.lrange(keys.wait, 0, -1)).reverse()
const ids = (n: number, tag = "j") => Array.from({ length: n }, (_, i) => `${tag}${i}`)

describe("include/ready.lua", () => {
  let raw: Redis
  beforeAll(() => {
    raw = shared.raw
  })

  it("ready_push: at the back a job runs after every job ready; at the front it runs next; 1,200 ids keep their order", async () => {
    const keys = queueKeys(name())
    await call(raw, keys, "ready_push", [["a", "b"], false])
    await call(raw, keys, "ready_push", [["c"], false])
    expect(await readyOrder(raw, keys)).toEqual(["a", "b", "c"])
    await call(raw, keys, "ready_push", [["x", "y"], true])
    expect(await readyOrder(raw, keys)).toEqual(["y", "x", "a", "b", "c"])
    const many = queueKeys(name())
    await call(raw, many, "ready_push", [ids(1200), false])
    expect(await readyOrder(raw, many)).toEqual(ids(1200))
  })

  it("ready_take: up to count from the front, then false when none is ready", async () => {
    const keys = queueKeys(name())
    await call(raw, keys, "ready_push", [["a", "b", "c"], false])
    expect(await call(raw, keys, "ready_take", ["2"])).toEqual(["a", "b"])
    expect(await call(raw, keys, "ready_take", [5])).toEqual(["c"])
    expect(await call(raw, keys, "ready_take", [5])).toBe("false")
  })

  it("ready_remove, ready_count, ready_next and ready_page", async () => {
    const keys = queueKeys(name())
    expect(await call(raw, keys, "ready_next", [])).toBe("false")
    await call(raw, keys, "ready_push", [["a", "b", "c", "d"], false])
    expect(await call(raw, keys, "ready_count", [])).toBe(4)
    expect(await call(raw, keys, "ready_next", [])).toBe("a")
    // a page counted from the front, in list order (the front last)
    expect(await call(raw, keys, "ready_page", [1, 2])).toEqual(["c", "b"])
    expect(await call(raw, keys, "ready_remove", ["b"])).toBe(1)
    expect(await call(raw, keys, "ready_remove", ["b"])).toBe(0)
    expect(await readyOrder(raw, keys)).toEqual(["a", "c", "d"])
  })

  it("ready_drain takes ready jobs out, the front first (an entry of an earlier version as its id); delayed_drain the soonest", async () => {
    const keys = queueKeys(name())
    expect(await call(raw, keys, "ready_drain", [5])).toEqual([])
    await call(raw, keys, "ready_push", [["a", "b", "c"], false])
    await raw.lpush(keys.wait, "old|3|{}")
    expect(await call(raw, keys, "ready_drain", [2])).toEqual(["a", "b"])
    expect(await call(raw, keys, "ready_drain", [5])).toEqual(["c", "old"])
    await call(raw, keys, "to_delayed", [[300, "late", 100, "soon"]])
    expect(await call(raw, keys, "delayed_drain", [1])).toEqual(["soon"])
    expect(await raw.zrange(keys.delayed, "0", "-1")).toEqual(["late"])
  })

  it("delayed_page: pages in due order after a cursor, also when the cursor's job left; rev the latest first", async () => {
    const keys = queueKeys(name())
    await call(raw, keys, "to_delayed", [[100, "a", 100, "b", 100, "c", 200, "d"]])
    expect(await call(raw, keys, "delayed_page", [false, 2, false])).toEqual([
      ["a", "100", "b", "100"],
      ["100", "b"],
      0,
    ])
    expect(await call(raw, keys, "delayed_page", [["100", "b"], 2, false])).toEqual([
      ["c", "100", "d", "200"],
      ["200", "d"],
      0,
    ])
    await raw.zrem(keys.delayed, "b")
    expect(await call(raw, keys, "delayed_page", [["100", "b"], 5, false])).toEqual([
      ["c", "100", "d", "200"],
      ["200", "d"],
      1,
    ])
    expect(await call(raw, keys, "delayed_page", [false, 2, true])).toEqual([["d", "200", "c", "100"], ["100", "c"], 0])
  })

  it("ready_wake sets the marker; ready_wake_if_any only when a job is ready", async () => {
    const keys = queueKeys(name())
    await call(raw, keys, "ready_wake_if_any", [])
    expect(await raw.zrange(keys.marker, "0", "-1")).toEqual([])
    await call(raw, keys, "ready_wake", [])
    expect(await raw.zrange(keys.marker, "0", "-1", "WITHSCORES")).toEqual(["0", "0"])
    await raw.del(keys.marker)
    await call(raw, keys, "ready_push", [["a"], false])
    await call(raw, keys, "ready_wake_if_any", [])
    expect(await raw.zrange(keys.marker, "0", "-1")).toEqual(["0"])
  })

  it("to_delayed, delayed_due_at, delayed_count, delayed_first, delayed_scan and delayed_remove", async () => {
    const keys = queueKeys(name())
    await call(raw, keys, "to_delayed", [[300, "late", 100, "soon", 200, "mid"]])
    expect(await call(raw, keys, "delayed_count", [])).toBe(3)
    expect(await call(raw, keys, "delayed_due_at", ["mid"])).toBe("200")
    expect(await call(raw, keys, "delayed_due_at", ["nope"])).toBe("false")
    expect(await call(raw, keys, "delayed_first", [2])).toEqual(["soon", "100", "mid", "200"])
    const [cursor, page] = (await call(raw, keys, "delayed_scan", ["0", 10])) as [string, string[]]
    expect(cursor).toBe("0")
    expect(page).toHaveLength(6)
    expect(await call(raw, keys, "delayed_remove", ["mid"])).toBe(1)
    expect(await call(raw, keys, "delayed_remove", ["mid"])).toBe(0)
    expect(await raw.zrange(keys.delayed, "0", "-1")).toEqual(["soon", "late"])
    expect(await raw.llen(keys.wait)).toBe(0)
  })

  it("delayed_due_in and delayed_any_due: ms until the soonest is due (0 when overdue), false or no when none", async () => {
    const keys = queueKeys(name())
    expect(await call(raw, keys, "delayed_due_in", [1000])).toBe("false")
    expect(await call(raw, keys, "delayed_any_due", [1000])).toBe("false")
    await call(raw, keys, "to_delayed", [[1500, "a", 2500, "b"]])
    expect(await call(raw, keys, "delayed_due_in", [1000])).toBe(500)
    expect(await call(raw, keys, "delayed_due_in", [2000])).toBe(0)
    expect(await call(raw, keys, "delayed_any_due", [1000])).toBe("false")
    expect(await call(raw, keys, "delayed_any_due", ["1500"])).toBe("true")
  })

  it("promote_due: at most `limit` jobs due by `now`, soonest first, to the back of ready; the rest stay delayed", async () => {
    const keys = queueKeys(name())
    await call(raw, keys, "ready_push", [["waiting"], false])
    await call(raw, keys, "to_delayed", [[30, "c", 10, "a", 20, "b", 99, "later"]])
    expect(await call(raw, keys, "promote_due", ["50", 2])).toBe(2)
    expect(await readyOrder(raw, keys)).toEqual(["waiting", "a", "b"])
    expect(await call(raw, keys, "promote_due", [50, "10"])).toBe(1)
    expect(await readyOrder(raw, keys)).toEqual(["waiting", "a", "b", "c"])
    expect(await raw.zrange(keys.delayed, "0", "-1")).toEqual(["later"])
    // more than one push's worth (500) in one call
    const many = queueKeys(name())
    await call(raw, many, "to_delayed", [ids(1200).flatMap((id, i) => [i, id])])
    expect(await call(raw, many, "promote_due", [5000, 1200])).toBe(1200)
    expect(await readyOrder(raw, many)).toEqual(ids(1200))
    expect(await raw.zcard(many.delayed)).toBe(0)
  })
})

describe("include/dead.lua", () => {
  it("to_dead: into dead at `now`, counted, and a dedupe key held until finished by that job is freed", async () => {
    const raw = shared.raw
    const keys = queueKeys(name())
    // a: holds "ka" until finished; b: holds "kb" for a TTL; c: its key is held by another job
    await raw.hset(keys.dkey, "a", "ka", "b", "kb", "c", "kc")
    await raw.zadd(keys.dedupe, "+inf", "ka", 9e15, "kb", "+inf", "kc")
    await raw.hset(keys.dedupeid, "ka", "a", "kb", "b", "kc", "other")
    await call(raw, keys, "to_dead", [1234, ["a", "b", "c"]])
    expect(await raw.zrange(keys.dead, "0", "-1", "WITHSCORES")).toEqual(["a", "1234", "b", "1234", "c", "1234"])
    expect(await raw.hget(keys.meta, "dead")).toBe("3")
    expect(await raw.zrange(keys.dedupe, "0", "-1")).toEqual(["kb", "kc"])
    expect(await raw.hgetall(keys.dedupeid)).toEqual({ kb: "b", kc: "other" })
    await call(raw, keys, "to_dead", [1, []])
    expect(await raw.hget(keys.meta, "dead")).toBe("3")
  })

  it("dead_targets: the ids named (mode ids) or the oldest `limit` (mode all); dead_reply: count, left, missing", async () => {
    const raw = shared.raw
    const keys = queueKeys(name())
    await raw.zadd(keys.dead, 3, "c", 1, "a", 2, "b")
    expect(await call(raw, keys, "dead_targets", [], ["all", "2"])).toEqual(["a", "b"])
    expect(await call(raw, keys, "dead_targets", [], ["ids", "0", "x", "c"])).toEqual(["x", "c"])
    expect(await call(raw, keys, "dead_reply", [1, ["x"]])).toEqual([1, 3, "x"])
  })
})

describe("include/finish.lua", () => {
  it("retain_jobs keeps completed jobs as done with their results; drop_jobs deletes every per-job field, results when asked", async () => {
    const raw = shared.raw
    const keys = queueKeys(name())
    await call(raw, keys, "retain_jobs", [77, ["a", "b"], ['{"r":1}', ""]])
    expect(await raw.zrange(keys.done, "0", "-1", "WITHSCORES")).toEqual(["a", "77", "b", "77"])
    expect(await raw.hgetall(keys.result)).toEqual({ a: '{"r":1}' })
    const hashes = [
      "data",
      "max",
      "fails",
      "lost",
      "err",
      "progress",
      "timeout",
      "dkey",
      "priority",
      "backoff",
      "errors",
      "logs",
    ] as const
    for (const h of hashes) await raw.hset(keys[h], "a", "1", "b", "1", "keep", "1")
    await call(raw, keys, "drop_jobs", [["a"], false])
    for (const h of hashes) expect(await raw.hkeys(keys[h]), h).toEqual(["b", "keep"])
    expect(await raw.hkeys(keys.result)).toEqual(["a"])
    await call(raw, keys, "drop_jobs", [["a", "b"], true])
    for (const h of hashes) expect(await raw.hkeys(keys[h]), h).toEqual(["keep"])
    expect(await raw.exists(keys.result)).toBe(0)
    // a queue whose only per-job hash is data: one HDEL and one EXISTS
    const plain = queueKeys(name())
    await raw.hset(plain.data, "x", "{}", "y", "{}")
    await call(raw, plain, "drop_jobs", [["x"], false])
    expect(await raw.hkeys(plain.data)).toEqual(["y"])
  })
})

describe("include/finish.lua errors_push", () => {
  it("adds each failed attempt's error as a line with its attempt and time, and keeps the newest 10", async () => {
    const raw = shared.raw
    const keys = queueKeys(name())
    await call(raw, keys, "errors_push", ["a", 1, 100, '{"reason":"failed","message":"m1"}'])
    await call(raw, keys, "errors_push", ["a", 2, 200, "{}"])
    expect((await raw.hget(keys.errors, "a"))!.split("\n").map((l) => JSON.parse(l))).toEqual([
      { attempt: 1, at: 100, reason: "failed", message: "m1" },
      { attempt: 2, at: 200 },
    ])
    for (let i = 3; i <= 14; i++) await call(raw, keys, "errors_push", ["a", i, i * 100, `{"message":"m${i}"}`])
    const kept = (await raw.hget(keys.errors, "a"))!.split("\n").map((l) => JSON.parse(l) as { attempt: number })
    expect(kept.map((e) => e.attempt)).toEqual([5, 6, 7, 8, 9, 10, 11, 12, 13, 14])
  })
})

describe("include/job-state.lua", () => {
  it("job_state: active (with its token and holder, in either layout's form), delayed (through ready), dead, completed, cancelled, else waiting", async () => {
    const raw = shared.raw
    const keys = queueKeys(name())
    await raw.zadd(keys.active, 500, "a")
    await raw.hset(keys.holder, "a", "w|7|1|0")
    // a lease in the form of key layout 1: the token in `lease`, the holder entry without it
    await raw.zadd(keys.active, 600, "b")
    await raw.hset(keys.lease, "b", "8")
    await raw.hset(keys.holder, "b", "w|1|0")
    await call(raw, keys, "to_delayed", [[900, "d"]])
    await raw.zadd(keys.dead, 10, "x")
    await raw.zadd(keys.done, 20, "c")
    await raw.zadd(keys.cancelled, 30, "k")
    const state = (id: string) => call(raw, keys, "job_state", [id])
    expect(await state("a")).toEqual(["active", "500", "7", "w|7|1|0"])
    expect(await state("b")).toEqual(["active", "600", "8", "w|1|0"])
    expect(await state("d")).toEqual(["delayed", "900", null, null])
    expect(await state("x")).toEqual(["dead", "10", null, null])
    expect(await state("c")).toEqual(["completed", "20", null, null])
    expect(await state("k")).toEqual(["cancelled", "30", null, null])
    expect(await state("w")).toEqual(["waiting", null, null, null])
  })
})

describe("the scripts move jobs as the library says", () => {
  it("released and reclaimed jobs run next (front); retried, dead-retried and promoted ones after those waiting (back)", async () => {
    const raw = shared.raw
    const keys = queueKeys(name())
    const c = makeCommands(shared.client, keys)
    const [a, b, d, w] = [newJob(), newJob(), newJob({ maxAttempts: 1 }), newJob()]
    await run(c.add([a, b, d]))
    const { jobs } = await run(c.reserve(3, 60_000, 0))
    const token = (id: string) => jobs.find((j) => j.id === id)!.token
    await run(c.add([w]))
    expect(await run(c.release([{ id: a.id, token: token(a.id) }]))).toEqual([true])
    expect(await readyOrder(raw, keys)).toEqual([a.id, w.id])
    const retry = { delayMs: 0, error: "{}", mode: "retry" } as const
    expect(await run(c.fail({ id: b.id, token: token(b.id) }, retry))).toBe("retry")
    expect(await readyOrder(raw, keys)).toEqual([a.id, w.id, b.id])
    expect(await run(c.fail({ id: d.id, token: token(d.id) }, retry))).toBe("dead")
    expect(await run(c.deadRetry({ ids: [d.id] }))).toMatchObject({ count: 1, missing: [] })
    expect(await readyOrder(raw, keys)).toEqual([a.id, w.id, b.id, d.id])
    expect(await raw.zrange(keys.marker, "0", "-1")).toEqual(["0"])

    // a lease that ran out: the sweep puts its job at the front; a due delayed job goes to the back
    const held = (await run(c.reserve(1, 20, 0))).jobs[0]!
    expect(held.id).toBe(a.id)
    await raw.zadd(keys.delayed, 0, "due-job")
    await untilRedisClock(raw, held.deadline)
    expect(await run(c.sweep(100))).toMatchObject({ reclaimed: 1, promoted: 1 })
    expect(await readyOrder(raw, keys)).toEqual([a.id, w.id, b.id, d.id, "due-job"])
  })

  it("a job reserve finds without data dies as every job does: counted, and its dedupe key held until finished freed", async () => {
    const raw = shared.raw
    const keys = queueKeys(name())
    const c = makeCommands(shared.client, keys)
    const lost = newJob({ dedupeKey: "order-7", dedupeTtlMs: -1 })
    await run(c.add([lost]))
    await raw.hdel(keys.data, lost.id)
    expect((await run(c.reserve(5, 60_000, 0))).jobs).toEqual([])
    expect(await raw.zscore(keys.dead, lost.id)).not.toBeNull()
    expect(JSON.parse((await raw.hget(keys.err, lost.id))!)).toMatchObject({ reason: "missing-data" })
    expect(await raw.hget(keys.meta, "dead")).toBe("1")
    const again = newJob({ dedupeKey: "order-7", dedupeTtlMs: -1 })
    expect(await run(c.add([again]))).toEqual([again.id])
  })
})
