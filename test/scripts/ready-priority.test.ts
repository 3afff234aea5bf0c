/**
 * The priority side of lua/include/ready.lua, each function on real Redis through a test
 * script made of the include and a dispatcher (the keys laid out as a script lays them
 * out: the ready group last). Jobs of priority 0 stay in the wait list; the others go to
 * the prioritized set, scored by priority and a sequence; every ready_* function covers both.
 */
import { readdirSync, readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { type QueueKeys, queueKeys, READY_KEYS } from "../../src/engine/model/Keys.ts"
import { Limits } from "../../src/engine/model/Validate.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"

const name = queueNamer("ready-priority")
const shared = sharedClients()
const include = (file: string) => readFileSync(new URL(`../../lua/include/${file}.lua`, import.meta.url), "utf8")

/** The include, then: call the function ARGV[1] with the JSON-decoded arguments ARGV[2]. */
const source = `${include("ready").replace("--!include groups", () => include("groups"))}
local fns = {
  ready_push = ready_push, ready_take = ready_take, ready_remove = ready_remove, ready_count = ready_count,
  ready_next = ready_next, ready_page = ready_page, ready_wake_if_any = ready_wake_if_any, ready_move = ready_move,
  ready_set_priority = ready_set_priority, ready_priorities = ready_priorities, to_delayed = to_delayed,
  promote_due = promote_due, ready_left = ready_left,
}
local r = fns[ARGV[1]](unpack(cjson.decode(ARGV[2])))
if r == nil then return 'nil' end
if r == false then return 'false' end
return r
`

const call = (keys: QueueKeys, fn: string, ...args: ReadonlyArray<unknown>): Promise<unknown> =>
  shared.raw.eval(source, READY_KEYS.length, ...READY_KEYS.map((k) => keys[k]), fn, JSON.stringify(args))

/** Every ready job, the one that runs first first (taken: ready is empty after). */
const drain = async (keys: QueueKeys) => {
  const taken = await call(keys, "ready_take", 1000)
  return taken === "false" ? [] : taken
}

describe("include/ready.lua, priorities", () => {
  it("ready_push routes by priority (given or recorded); ready_take takes priority 0 first, then the lowest score", async () => {
    const keys = queueKeys(name())
    await call(keys, "ready_push", ["p3a", "z1", "p1", "p3b"], false, [3, 0, 1, 3])
    await call(keys, "ready_push", ["z2"], false, 0)
    expect(await shared.raw.lrange(keys.wait, 0, -1)).toEqual(["z2", "z1"])
    expect(await shared.raw.zcard(keys.prioritized)).toBe(3)
    // recorded priorities are read when none are given (a released or retried job)
    await call(keys, "ready_set_priority", ["r2", 2, "r0", 0])
    await call(keys, "ready_push", ["r2", "r0"], true)
    expect(await call(keys, "ready_take", "3")).toEqual(["r0", "z1", "z2"])
    expect(await call(keys, "ready_take", 10)).toEqual(["p1", "r2", "p3a", "p3b"])
    expect(await call(keys, "ready_take", 10)).toBe("false")
  })

  it("front and back of a priority: the front runs next among it (the last pushed first), the back after it", async () => {
    const keys = queueKeys(name())
    await call(keys, "ready_push", ["a", "b"], false, [4, 4])
    await call(keys, "ready_push", ["x", "y"], true, [4, 4])
    await call(keys, "ready_push", ["c"], false, [4])
    await call(keys, "ready_push", ["low"], true, [5])
    expect(await drain(keys)).toEqual(["y", "x", "a", "b", "c", "low"])
  })

  it("ready_count, ready_next, ready_page and ready_remove cover both; ready_wake_if_any sees prioritized jobs", async () => {
    const keys = queueKeys(name())
    expect(await call(keys, "ready_next")).toBe("false")
    await call(keys, "ready_push", ["p1", "p2"], false, [2, 2])
    expect(await call(keys, "ready_next")).toBe("p1")
    await call(keys, "ready_wake_if_any")
    expect(await shared.raw.zcard(keys.marker)).toBe(1)
    await call(keys, "ready_push", ["a", "b"], false, 0)
    expect(await call(keys, "ready_count")).toBe(4)
    expect(await call(keys, "ready_next")).toBe("a")
    // pages in run order after skipping `from`, reversed (the one that runs first last)
    expect(await call(keys, "ready_page", 0, 3)).toEqual(["p1", "b", "a"])
    expect(await call(keys, "ready_page", 1, 2)).toEqual(["p1", "b"])
    expect(await call(keys, "ready_page", 3, 5)).toEqual(["p2"])
    expect(await call(keys, "ready_page", 4, 5)).toEqual([])
    expect(await call(keys, "ready_remove", "p1")).toBe(1)
    expect(await call(keys, "ready_remove", "a")).toBe(1)
    expect(await call(keys, "ready_remove", "a")).toBe(0)
    expect(await drain(keys)).toEqual(["b", "p2"])
  })

  it("ready_move: to the back of the new priority; the same priority keeps its place; 0 for a job not ready", async () => {
    const keys = queueKeys(name())
    await call(keys, "ready_set_priority", ["a", 3, "b", 3])
    await call(keys, "ready_push", ["a", "b"], false, [3, 3])
    await call(keys, "ready_push", ["z", "y"], false, 0)
    expect(await call(keys, "ready_move", "a", 3)).toBe(1)
    expect(await call(keys, "ready_move", "y", 0)).toBe(1)
    expect(await call(keys, "ready_move", "z", 3)).toBe(1)
    expect(await call(keys, "ready_move", "b", 0)).toBe(1)
    expect(await call(keys, "ready_move", "gone", 2)).toBe(0)
    expect(await call(keys, "ready_priorities", ["a", "b", "z", "y", "gone"])).toEqual([3, 0, 3, 0, 0])
    expect(await drain(keys)).toEqual(["y", "b", "a", "z"])
  })

  it("promote_due: due delayed jobs go to the back of their recorded priority", async () => {
    const keys = queueKeys(name())
    await call(keys, "ready_push", ["w"], false, [2])
    await call(keys, "ready_set_priority", ["d2", 2])
    await call(keys, "to_delayed", [10, "d2", 20, "d0", 99, "later"])
    expect(await call(keys, "promote_due", "50", 10)).toBe(2)
    expect(await drain(keys)).toEqual(["d0", "w", "d2"])
    expect(await shared.raw.zrange(keys.delayed, "0", "-1")).toEqual(["later"])
  })

  it("a priority whose end reaches the edge of its band is renumbered in order, and stays in its band", async () => {
    const keys = queueKeys(name())
    const band = 2 ** 32
    // priority 7's last job at the top of its band, as after 2^31 pushes to its back
    await shared.raw.zadd(keys.prioritized, 7 * band + 5, "old", 8 * band - 1, "last", 8 * band + 10, "next")
    await call(keys, "ready_push", ["new"], false, [7])
    await call(keys, "ready_push", ["front"], true, [7])
    const scores = await shared.raw.zrange(keys.prioritized, "0", "-1", "WITHSCORES")
    for (let i = 1; i < 10; i += 2) {
      const p = Math.floor(Number(scores[i]) / band)
      expect(p, scores[i - 1]).toBe(scores[i - 1] === "next" ? 8 : 7)
    }
    expect(await drain(keys)).toEqual(["front", "old", "last", "new", "next"])
  })

  /**
   * The order is written once, ready_order (ready.lua): jobs without a group (the wait list and
   * prioritized's scores) and the jobs of one group (G.wait's lex members) come out in the
   * same order for the same pushes, at the priority bounds too. Two encodings that disagreed
   * (a front of a group that sorted after its back, a priority that overflowed its digits)
   * fail here.
   */
  it("jobs without a group and the jobs of one group run in the same order (ready_order)", async () => {
    const top = Limits.priority.max
    const pushes: ReadonlyArray<readonly [ReadonlyArray<string>, boolean, ReadonlyArray<number>]> = [
      [["a", "b", "c"], false, [3, 0, top]],
      [["d", "e"], true, [3, 3]],
      [["f", "g", "h"], false, [0, 1, top]],
      [["i"], true, [top]],
      [["j", "k"], true, [0, 0]],
      [["l"], false, [3]],
    ]
    const plain = queueKeys(name())
    const grouped = queueKeys(name())
    for (const [ids, front, prios] of pushes) {
      await call(plain, "ready_push", ids, front, prios)
      await call(
        grouped,
        "ready_push",
        ids,
        front,
        prios,
        ids.map(() => "g"),
      )
    }
    const order = await drain(plain)
    expect(order).toEqual(["k", "j", "b", "f", "g", "e", "d", "a", "l", "i", "c", "h"])
    const taken: unknown[] = []
    const take1 = () => call(grouped, "ready_take", 1, String(Date.now()))
    for (let r = await take1(); r !== "false"; r = await take1()) {
      taken.push(...(r as unknown[]))
      await call(grouped, "ready_left", r)
    }
    expect(taken).toEqual(order)
  })

  it("no Lua file formats an order but ready_order: a priority's digits (%07d) or band (p * 2^32 + place)", () => {
    const lua = new URL("../../lua/", import.meta.url)
    const files = [
      ...readdirSync(lua).filter((f) => f.endsWith(".lua")),
      ...readdirSync(new URL("include/", lua)).map((f) => `include/${f}`),
    ]
    const found = files.flatMap((f) => {
      const code = readFileSync(new URL(f, lua), "utf8").replace(/--.*$/gm, "")
      return [...code.matchAll(/%0\d+d|\* ?READY_BAND ?\+/g)].map((m) => `${f}: ${m[0]}`)
    })
    expect(found).toEqual(["include/ready.lua: %07d", "include/ready.lua: %016d", "include/ready.lua: * READY_BAND +"])
    const order = /^local function ready_order\([\s\S]*?\n\s*end$/m.exec(include("ready"))?.[0] ?? ""
    expect(order).toContain("%07d%016d")
    expect(order).toContain("* READY_BAND +")
  })
})
