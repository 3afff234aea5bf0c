/**
 * Each Lua script's header and its typed descriptor (src/engine/scripts/*.ts) say the
 * same thing: the same KEYS by name in the same order, the same ARGV, and every
 * script in lua/ has a descriptor. The descriptor is where Commands take a call's KEYS
 * order from, so a header that drifts from it (or a descriptor that drifts from the
 * script) fails here. Reads files only: no Redis.
 *
 * The header grammar (see CONTRIBUTING.md, "Adding a script"):
 *   KEYS[i] <key name>  <LIST|ZSET|HASH|STREAM>  <meaning>
 *   ARGV[i] <name>  <meaning>
 *   ARGV[i..] <name>, <name>, …  <meaning of the repeated group>
 *   KEYS[i..] <group>  <meaning>   (a key group of Keys.ts, KEY_GROUPS: its keys in order)
 */
import { readdirSync, readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { ACTIVE_KEYS, KEY_GROUPS, KEY_TYPES, READY_KEYS } from "../../src/engine/model/Keys.ts"
import { JOB_FIELDS } from "../../src/engine/scripts/AddScripts.ts"
import type { ScriptDef } from "../../src/engine/scripts/Script.ts"

const luaDir = new URL("../../lua/", import.meta.url)
const files = readdirSync(luaDir)
  .filter((f) => f.endsWith(".lua"))
  .map((f) => f.slice(0, -".lua".length))
  .sort()
const descriptors = Object.values(Scripts) as ReadonlyArray<ScriptDef<never, unknown>>

interface Header {
  /** Every key, a group's expanded (`group` names the group it came from). */
  readonly keys: ReadonlyArray<{
    readonly index: number
    readonly name: string
    readonly type: string | undefined
    readonly group?: string
  }>
  readonly argv: ReadonlyArray<{ readonly index: number; readonly name: string }>
  readonly rest: { readonly index: number; readonly names: ReadonlyArray<string> } | undefined
}

/** The `--[[ … ]]` block a script opens with, and the code after it (includes not expanded). */
const split = (name: string): { readonly header: string; readonly body: string } => {
  const text = readFileSync(new URL(`${name}.lua`, luaDir), "utf8")
  const end = text.indexOf("]]")
  if (!text.startsWith("--[[") || end < 0) throw new Error(`lua/${name}.lua does not open with a --[[ header ]]`)
  return { header: text.slice(4, end), body: text.slice(end + 2) }
}

const parseHeader = (header: string): Header => {
  const keys: Array<Header["keys"][number]> = []
  const argv: Array<Header["argv"][number]> = []
  let rest: Header["rest"]
  for (const line of header.split("\n")) {
    const key = /^\s*KEYS\[(\d+)\]\s+(\w+)(?:\s+(LIST|ZSET|HASH|STREAM)\b)?/.exec(line)
    if (key) keys.push({ index: Number(key[1]), name: key[2]!, type: key[3]?.toLowerCase() })
    const group = /^\s*KEYS\[(\d+)\.\.\]\s+(\w+)/.exec(line)
    if (group) {
      const names: ReadonlyArray<string> = KEY_GROUPS[group[2] as keyof typeof KEY_GROUPS] ?? [
        `unknown group ${group[2]}`,
      ]
      const [start, type] = [Number(group[1]), (name: string) => KEY_TYPES[name as keyof typeof KEY_TYPES]]
      for (const [i, name] of names.entries()) keys.push({ index: start + i, name, type: type(name), group: group[2]! })
    }
    const arg = /^\s*ARGV\[(\d+)\]\s+(\w+)/.exec(line)
    if (arg) argv.push({ index: Number(arg[1]), name: arg[2]! })
    const tail = /^\s*ARGV\[(\d+)\.\.\]\s+(\w+(?:,\s*\w+)*)/.exec(line)
    if (tail) rest = { index: Number(tail[1]), names: tail[2]!.split(/,\s*/) }
  }
  return { keys, argv, rest }
}

describe("script descriptors", () => {
  it("every script in lua/ has exactly one descriptor, and every descriptor a script", () => {
    expect(descriptors.map((d) => d.name).sort()).toEqual(files)
  })

  describe.each(files)("lua/%s.lua", (name) => {
    const script = descriptors.find((d) => d.name === name)
    const { header, body } = split(name)
    const parsed = parseHeader(header)

    it("names the descriptor's KEYS, in the same order, each with its key's type", () => {
      expect(script).toBeDefined()
      expect(parsed.keys.map((k) => k.index)).toEqual(parsed.keys.map((_, i) => i + 1))
      expect(parsed.keys.map((k) => k.name)).toEqual(script?.keys)
      for (const k of parsed.keys) {
        expect(k.type, `KEYS[${k.index}] ${k.name}: its Redis type`).toBe(KEY_TYPES[k.name as keyof typeof KEY_TYPES])
      }
    })

    it("names the descriptor's ARGV, in the same order, and its repeated group", () => {
      expect(parsed.argv.map((a) => a.index)).toEqual(parsed.argv.map((_, i) => i + 1))
      expect(parsed.argv.map((a) => a.name)).toEqual(script?.argv)
      if (script?.rest.length === 0) expect(parsed.rest).toBeUndefined()
      else expect(parsed.rest).toEqual({ index: parsed.argv.length + 1, names: script?.rest })
    })

    it("uses no KEYS entry beyond those its header declares", () => {
      const used = [...body.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1]))
      expect(Math.max(0, ...used)).toBeLessThanOrEqual(parsed.keys.length)
    })
  })
})

/**
 * The ready and delayed jobs have one owner, lua/include/ready.lua: no other script or
 * include names their keys (READY_KEYS). A script reaches them only by declaring the
 * group as its last KEYS and including ready, so an ordering rule changes one file.
 */
describe("the ready group (lua/include/ready.lua)", () => {
  const includeDir = new URL("include/", luaDir)
  const includes = readdirSync(includeDir).filter((f) => f.endsWith(".lua"))
  const ready: ReadonlyArray<string> = READY_KEYS

  it.each(includes.filter((f) => f !== "ready.lua"))("include/%s reads no KEYS", (file) => {
    const code = readFileSync(new URL(file, includeDir), "utf8").replace(/--.*$/gm, "")
    expect(code).not.toMatch(/KEYS/)
  })

  describe.each(files)("lua/%s.lua", (name) => {
    const { header, body } = split(name)
    const parsed = parseHeader(header)
    const group = parsed.keys.filter((k) => k.group === "ready")

    it("names no ready key on its own: only as the ready group, its last KEYS", () => {
      const own = parsed.keys.filter((k) => k.group === undefined).map((k) => k.name)
      expect(own.filter((k) => ready.includes(k))).toEqual([])
      if (group.length > 0)
        expect(group.map((k) => k.index)).toEqual(ready.map((_, i) => parsed.keys.length - ready.length + i + 1))
    })

    it("includes ready exactly when it declares the group, and reaches the group's keys only through it", () => {
      expect(/^--!include ready$/m.test(body)).toBe(group.length > 0)
      const first = group[0]?.index ?? Number.POSITIVE_INFINITY
      const used = [...body.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1]))
      expect(used.filter((i) => i >= first)).toEqual([])
      // a KEYS index that is not a number could reach the group
      if (group.length > 0) expect(body).not.toMatch(/KEYS\[[^\d]|#KEYS|ipairs\(KEYS\)/)
    })
  })
})

/**
 * add.lua reads each job's fields by name: job_at(i) gives them in the order of its list
 * `FIELDS`, read into locals named as FIELDS names them. FIELDS has the same names, in the
 * same order, as the header's repeated group and the descriptor's `rest` (JOB_FIELDS of
 * scripts/AddScripts.ts, which sends them in that order), so a new job option is one name in
 * each, and no offset is counted by hand.
 */
describe("add.lua's field list", () => {
  const { body } = split("add")
  const fields = [...(/^local FIELDS = \{([\s\S]*?)\}$/m.exec(body)?.[1] ?? "").matchAll(/'(\w+)'/g)].map((m) => m[1]!)

  it("names the descriptor's repeated group in order (JOB_FIELDS)", () => {
    const add = descriptors.find((d) => d.name === "add")!
    expect(fields).toEqual(add.rest)
    expect(Object.keys(JOB_FIELDS)).toEqual(add.rest)
  })

  it("each `local … = job_at(i)` names FIELDS' first fields in order (`_` for one skipped)", () => {
    const group = readFileSync(new URL("include/group-full.lua", luaDir), "utf8")
    const lines = [...`${body}\n${group}`.matchAll(/^\s*local ([\w, ]+) = job_at\(/gm)].map((m) => m[1]!.split(/,\s*/))
    expect(lines.length).toBeGreaterThanOrEqual(4)
    for (const names of lines)
      expect(
        names.map((n, i) => (n === "_" ? fields[i] : n)),
        names.join(", "),
      ).toEqual(fields.slice(0, names.length))
  })

  it("reads no job field by its ARGV offset outside job_at, job_group and job_deps", () => {
    const code = body.replace(/--.*$/gm, "")
    const reads = [...code.matchAll(/ARGV\[([^\]]+)\]|unpack\(ARGV, ([^)]+)\)/g)].map((m) => m[1] ?? m[2]!)
    expect(reads.filter((r) => !/^[123]$/.test(r))).toEqual([
      // a templated call's templates (the header's "Templated")
      "4",
      "at + 1, at + STRIDE",
      "at",
      "b",
      "b + 1",
      "4 + i * STRIDE, 3 + (i + 1",
      "4 + STRIDE * n + i",
      "4 + (STRIDE + 1) * n + i",
    ])
  })
})

/**
 * Leaving active (and dead) is one transition each, and the keys of both have one owner:
 * only lua/include/active.lua reads or writes the leased jobs' keys (ACTIVE_KEYS: active_take,
 * active_extend, active_leave, which also frees the group's slot, and the reads active_count,
 * active_deadline, …) and only lua/include/dead.lua reads or writes dead (to_dead, dead_leave,
 * dead_count, dead_page, …). Any other script or include that sends a Redis command to one
 * (by its KEYS entry, a table field `x.dead`, or a local holding one), hands its KEYS entry
 * to a function of another file, or reaches a table's owned field, fails here. A script
 * passes the keys to the owners as a table field (`{active = KEYS[1]}`) or as an owner
 * function's argument (`dead_targets(KEYS[1])`).
 */
describe("the active group (lua/include/active.lua) and dead (lua/include/dead.lua)", () => {
  const owned: ReadonlyArray<string> = [...ACTIVE_KEYS, "dead"]
  const includeDir = new URL("include/", luaDir)
  const owners = ["active.lua", "dead.lua"]
  const others = readdirSync(includeDir).filter((f) => f.endsWith(".lua") && !owners.includes(f))
  const ownerFunctions = owners.flatMap((f) =>
    [...readFileSync(new URL(f, includeDir), "utf8").matchAll(/^local function (\w+)\(/gm)].map((m) => m[1]!),
  )
  const commands = /redis\.p?call\(\s*'(\w+)',\s*([^,)]+)/g
  /** The owned key names an expression reaches: by a KEYS entry, or a table field `x.dead`. */
  const reached = (expr: string, keyName: (arg: string) => string | undefined): ReadonlyArray<string> =>
    [...expr.matchAll(/KEYS\[\d+\]|\.(\w+)\b/g)]
      .map((m) => (m[1] === undefined ? keyName(m[0]) : m[1]))
      .filter((name): name is string => name !== undefined && owned.includes(name))
  /** Each place `code` names an owned key outside the owners, as "<what> <where>". */
  const named = (code: string, keyName: (arg: string) => string | undefined): ReadonlyArray<string> => {
    const lua = code.replace(/--.*$/gm, "")
    // a local (or loop variable) that may hold an owned key is one too: `local from = ({dead = KEYS[6]})[state]`
    const aliases = new Set<string>()
    for (const m of lua.matchAll(/^\s*(?:local\s+(\w+)\s*=|for\s+\w+\s*,\s*(\w+)\s+in)(.*)$/gm))
      if (reached(m[3]!, keyName).length > 0) aliases.add((m[1] ?? m[2])!)
    const sent = [...lua.matchAll(commands)]
      .map((m) => [m[1]!, m[2]!.trim()] as const)
      .filter(([, arg]) => aliases.has(arg.replace(/[[.].*$/, "")) || reached(arg, keyName).length > 0)
      .map(([cmd, arg]) => `${cmd} ${arg}`)
    // an owned KEYS entry only as a table field of its own name, or an owner function's argument
    const handed = [...lua.matchAll(/KEYS\[\d+\]/g)]
      .filter((m) => owned.includes(keyName(m[0]) ?? ""))
      .filter((m) => {
        const before = lua.slice(0, m.index)
        const field = new RegExp(`[{,]\\s*${keyName(m[0])}\\s*=\\s*$`).test(before)
        const call = /(\w+)\(\s*$/.exec(before)?.[1]
        return !field && !(call !== undefined && ownerFunctions.includes(call))
      })
      .map((m) => `${m[0]} (${keyName(m[0])}) ${lua.slice(m.index).split("\n")[0]!.trim()}`)
    // a table's owned field handed to a function of another file (`zset_page(k.dead, …)`)
    const fields = [...lua.matchAll(/\w+\.(\w+)\b/g)]
      .filter((m) => owned.includes(m[1]!))
      .filter((m) => {
        const call = /(\w+(?:\.\w+)?)\([^()]*$/.exec(lua.slice(0, m.index))?.[1]
        return call !== undefined && !/^redis\.p?call$/.test(call) && !ownerFunctions.includes(call)
      })
      .map((m) => `field ${m[0]}`)
    return [...sent, ...handed, ...fields]
  }

  it.each(files)("lua/%s.lua reads and writes no active or dead key on its own", (name) => {
    const { header, body } = split(name)
    const keys = new Map(parseHeader(header).keys.map((k) => [`KEYS[${k.index}]`, k.name]))
    expect(named(body, (arg) => keys.get(arg))).toEqual([])
  })

  it.each(others)("include/%s reads and writes no active or dead key", (file) => {
    expect(named(readFileSync(new URL(file, includeDir), "utf8"), () => undefined)).toEqual([])
  })

  it("fails on a read or a write outside the owners, by KEYS entry, field or alias", () => {
    const keys = (arg: string) => ({ "KEYS[1]": "active", "KEYS[2]": "dead" })[arg]
    expect(named("local n = redis.call('ZCARD', KEYS[1])", keys)).toEqual([
      "ZCARD KEYS[1]",
      "KEYS[1] (active) KEYS[1])",
    ])
    expect(named("local s = redis.call('ZSCORE', k.dead, id)", keys)).toEqual(["ZSCORE k.dead"])
    expect(named("trim_oldest(job, k.dead, 10, 2)", keys)).toEqual(["field k.dead"])
    expect(named("for _, s in ipairs({k.dead, k.done}) do redis.call('ZSCORE', s[1], id) end", keys)).toEqual([
      "ZSCORE s[1]",
      "field k.dead",
    ])
    expect(named("local from = KEYS[2]\nredis.call('ZREM', from, id)", keys)).toEqual([
      "ZREM from",
      "KEYS[2] (dead) KEYS[2]",
    ])
    expect(named("local n = in_set(KEYS[1])(id)", keys)).toEqual(["KEYS[1] (active) KEYS[1])(id)"])
    expect(named("local n = active_count({active = KEYS[1]}) + dead_reply(KEYS[2], 0, {})", keys)).toEqual([])
  })
})

/**
 * A script's source holds the functions of lua/include/ it calls and no other (each
 * `local function` Redis passes costs a closure on every call), so no call can reach a
 * function left out, and no script pays for one it never runs.
 */
describe("include functions in a script's source", () => {
  const includeDir = new URL("include/", luaDir)
  const names = readdirSync(includeDir)
    .filter((f) => f.endsWith(".lua"))
    .flatMap((f) =>
      [...readFileSync(new URL(f, includeDir), "utf8").matchAll(/^local function (\w+)\(/gm)].map((m) => m[1]!),
    )

  it.each(descriptors.map((d) => [d.name, d] as const))("%s: defines exactly those it calls", (_, d) => {
    const code = d.source
      .replace(/--\[\[[\s\S]*?\]\]/g, "")
      .split("\n")
      .filter((l) => !l.trimStart().startsWith("--"))
      .join("\n")
    for (const f of names) {
      const definition = new RegExp(`^local function ${f}\\(`, "m")
      const called = new RegExp(`\\b${f}\\b`).test(code.replace(definition, ""))
      expect(definition.test(d.source), `${f}: defined exactly when called`).toBe(called)
    }
  })

  it.each(descriptors.map((d) => [d.name, d] as const))("%s: each include once, however many files name it", (_, d) => {
    const defined = [...d.source.matchAll(/^local function (\w+)\(/gm)].map((m) => m[1]!)
    expect(defined.filter((f, i) => defined.indexOf(f) !== i)).toEqual([])
  })
})

/**
 * One sample call per script: its ARGV must be the header's fixed entries then whole
 * groups of the repeated one (so `args` cannot drift from the names the header gives).
 */
const samples: { readonly [K in keyof typeof Scripts]: { readonly input: unknown; readonly groups: number } } = {
  add: {
    input: {
      requestId: "r",
      jobs: [1, 2].map((i) => ({
        id: `j${i}`,
        payload: "{}",
        delayMs: 0,
        maxAttempts: 3,
        dedupeKey: "",
        dedupeTtlMs: 1,
      })),
    },
    groups: 2,
  },
  reserve: {
    input: {
      workerId: "w",
      requestId: "r",
      count: 5,
      leaseMs: 1000,
      promoteLimit: 10,
      keep: 1,
      timeoutMs: 0,
      completes: [{ id: "a", token: 1, result: "1" }],
    },
    groups: 1,
  },
  extend: { input: { leases: [{ id: "a", token: 1 }], leaseMs: 1000 }, groups: 1 },
  complete: { input: { items: [{ id: "a", token: 1, result: "1" }] }, groups: 1 },
  fail: { input: { lease: { id: "a", token: 1 }, delayMs: 0, error: "{}", mode: "retry" }, groups: 0 },
  release: { input: { leases: [{ id: "a", token: 1 }] }, groups: 1 },
  leases: { input: 300, groups: 0 },
  delayedList: { input: 100, groups: 0 },
  deadPeek: { input: { offset: 0, count: 10, limits: { cut: 10, loadMax: 20, budget: 30, hide: false } }, groups: 0 },
  jobPeek: { input: { id: "a", limits: { cut: 10, loadMax: 20, budget: 30, hide: true } }, groups: 0 },
  jobsPeek: {
    input: {
      state: "dead",
      order: "asc",
      cursor: "",
      count: 5,
      limits: { cut: 10, loadMax: 20, budget: 30, hide: false },
    },
    groups: 0,
  },
  schedulesPeek: { input: { count: 5, limits: { cut: 10, loadMax: 20, budget: 30, hide: false } }, groups: 0 },
  sweep: { input: 100, groups: 0 },
  upgrade: { input: { count: 100, force: false }, groups: 0 },
  stats: { input: undefined, groups: 0 },
  depsChildren: {
    input: { parent: "p", seal: true, children: [{ queue: "", id: "c", policy: "wait" }] },
    groups: 1,
  },
  depsSeal: {
    input: [
      { id: "p", keepOpen: false },
      { id: "q", keepOpen: true },
    ],
    groups: 2,
  },
  depsLink: { input: { parentQueue: "", parent: "p", ids: ["a", "b"] }, groups: 2 },
  depsApply: { input: [{ parent: "p", queue: "", child: "c", outcome: "completed" }], groups: 1 },
  depsOutbox: { input: { limit: 10, applied: ["a"] }, groups: 1 },
  depsPage: { input: { parent: "p", after: "", count: 10 }, groups: 0 },
  depsParents: { input: { cursor: "0", count: 10 }, groups: 0 },
  depsVerify: { input: { cursor: "0", count: 10 }, groups: 0 },
  deadList: { input: { offset: 0, count: 10 }, groups: 0 },
  deadRetry: { input: { ids: ["a", "b"] }, groups: 2 },
  deadPurge: { input: { all: 10 }, groups: 0 },
  verifyWait: { input: { from: 0, size: 10 }, groups: 0 },
  verifySet: { input: { set: "dead", cursor: "0", count: 10 }, groups: 0 },
  verifyHash: { input: { hash: "data", cursor: "0", count: 10 }, groups: 0 },
  getJob: { input: "a", groups: 0 },
  log: { input: { id: "a", token: 1, lines: ['"x"', '"y"'] }, groups: 2 },
  cancel: { input: "a", groups: 0 },
  changePriority: { input: { id: "a", priority: 5 }, groups: 0 },
  pause: { input: undefined, groups: 0 },
  resume: { input: undefined, groups: 0 },
  clearDedupe: { input: "k", groups: 0 },
  setLimits: { input: { limit: "rate", value: 10, perMs: 1000 }, groups: 0 },
  flowEpoch: { input: 200, groups: 0 },
  flowShare: { input: { op: "look", epoch: 1 }, groups: 0 },
  setRetention: { input: [1000, 3_600_000, 1000, 3_600_000, "", ""], groups: 0 },
  verifyOrphans: { input: ["a"], groups: 1 },
  open: { input: undefined, groups: -1 },
  workers: { input: undefined, groups: 0 },
  workerLeave: { input: "w", groups: 0 },
  schedule: {
    input: {
      schedule: { name: "s", key: "every:1000", every: 1000, catchUp: 1, payload: "1", maxAttempts: 3, timeoutMs: 0 },
      next: 1000,
      max: 1000,
    },
    groups: 0,
  },
  unschedule: { input: "s", groups: 0 },
  schedules: { input: { due: true, limit: 10 }, groups: 0 },
  tick: { input: { name: "s", due: 1000, next: 2000, at: [1000] }, groups: 1 },
  jobList: { input: { state: "waiting", order: "asc", cursor: "", count: 10 }, groups: 0 },
  drain: { input: { delayed: true, limit: 10 }, groups: 0 },
  clean: { input: { state: "dead", olderThanMs: 0, limit: 10 }, groups: 0 },
  obliterate: { input: false, groups: 0 },
  promote: { input: { requestId: "r", id: "a" }, groups: 0 },
  reschedule: { input: { requestId: "r", id: "a", delayMs: 10 }, groups: 0 },
  jobRetry: { input: { requestId: "r", id: "a" }, groups: 0 },
  updatePayload: { input: { requestId: "r", id: "a", payload: "1" }, groups: 0 },
  groupLimits: { input: { group: "g", limits: { concurrency: 1 } }, groups: 0 },
  groupPause: { input: { group: "g", pause: true }, groups: 0 },
  groupList: { input: { after: "", count: 10 }, groups: 0 },
  verifyGroups: { input: { cursor: "0", count: 10 }, groups: 0 },
  verifyRate: { input: undefined, groups: 0 },
}

describe("a call's ARGV", () => {
  it.each(Object.keys(Scripts) as Array<keyof typeof Scripts>)("%s: fixed entries, then whole groups", (op) => {
    const script = Scripts[op] as ScriptDef<unknown, unknown>
    const sample = samples[op]
    // open repeats one entry per key of the queue
    const groups = sample.groups < 0 ? script.keys.length : sample.groups
    expect(script.args(sample.input)).toHaveLength(script.argv.length + groups * script.rest.length)
  })
})

describe("reserve's riders", () => {
  const input = { workerId: "w", requestId: "r", count: 5, leaseMs: 1000, promoteLimit: 10, timeoutMs: 0 }
  it("one entry 'id|token|…' after m; no result entries when no rider has a result", () => {
    const args = Scripts.reserve.args({
      ...input,
      completes: [
        { id: "a", token: 1 },
        { id: "b", token: 22 },
      ],
    })
    expect(args.slice(Scripts.reserve.argv.length - 2)).toEqual([2, "a|1|b|22"])
  })
  it("one result entry per rider when one has a result; none and an empty list with no rider", () => {
    const completes = [
      { id: "a", token: 1 },
      { id: "b", token: 2, result: '{"x":"|"}' },
    ]
    const args = Scripts.reserve.args({ ...input, completes })
    expect(args.slice(Scripts.reserve.argv.length - 2)).toEqual([2, "a|1|b|2", "", '{"x":"|"}'])
    expect(Scripts.reserve.args({ ...input, completes: [] }).slice(-2)).toEqual([0, ""])
  })
})

describe("reply decoders", () => {
  it("reserve: the call's deadline, rider statuses as one string, five fields per leased job in one string, then the payloads", () => {
    const r = Scripts.reserve.decode([-1, 1000, "10", "j1|7|1|3|500|j2|8|2|5|0", '{"a":1}', "a|b,c"])
    expect(r).toEqual({
      nextDueMs: -1,
      completed: [true, false],
      jobs: [
        { id: "j1", token: 7, deadline: 1000, attempt: 1, maxAttempts: 3, payload: '{"a":1}', timeoutMs: 500 },
        { id: "j2", token: 8, deadline: 1000, attempt: 2, maxAttempts: 5, payload: "a|b,c", timeoutMs: 0 },
      ],
    })
    expect(Scripts.reserve.decode([250, 0, "", ""])).toEqual({ nextDueMs: 250, completed: [], jobs: [] })
  })

  it("sweep: counts, flags, and the jobs it moved to dead", () => {
    const r = Scripts.sweep.decode([1, 1, 0, 0, 1, 250, 2, 3, 0, "j1", "9", "lease expired"])
    expect(r).toEqual({
      reclaimed: 1,
      dead: 1,
      promoted: 0,
      dedupeDropped: 2,
      trimmed: 3,
      more: true,
      nextDeadlineMs: 250,
      deadJobs: [{ id: "j1", token: 9, message: "lease expired" }],
    })
  })

  it("stats: meta fields by name, and the age of the oldest waiting job from when it was added", () => {
    const r = Scripts.stats.decode([
      3,
      1,
      0,
      2,
      0,
      0,
      1469918176385,
      1469918176385 + 50,
      "1",
      2,
      4,
      ["t1", "7"],
      0,
      "added",
      "6",
    ])
    expect(r).toMatchObject({ waiting: 3, active: 1, delayed: 2, oldestWaitingAgeMs: 50, layout: "1", workers: 2 })
    expect(r).toMatchObject({ groups: 4, busiestGroups: [{ group: "t1", waiting: 7 }] })
    expect(r.counters).toMatchObject({ added: 6, completed: 0 })
  })

  it("fail, dead-list and dead-retry", () => {
    expect([[1, 0], [2], [0]].map((x) => Scripts.fail.decode(x))).toEqual(["retry", "dead", "lost"])
    expect(Scripts.deadList.decode([1, "j1", 5, '{"reason":"x"}', "{}", 2, 1])).toEqual({
      total: 1,
      jobs: [{ id: "j1", diedAt: 5, error: { reason: "x" }, payload: "{}", failures: 2, lostLeases: 1 }],
    })
    expect(Scripts.deadRetry.decode([1, 4, "gone"])).toEqual({ count: 1, remaining: 4, missing: ["gone"] })
  })
})
