/**
 * docs/architecture.md says what a command could check, so here each such sentence is
 * checked against the tree: the greps it prints answer what it prints (the list owners, no
 * script naming a ready key), its key list names every key of `KEY_TYPES`, the ready group
 * it spells out is `READY_KEYS`, the `lua/` row names every script, the worker table has a
 * row per file of `src/engine/worker/` and its rooms, every include function it names exists, the LISTs it
 * names are the list keys of `KEY_TYPES`, each "`a.lua` includes `b`" is an `--!include`
 * line, and each recipe's "N files (`<commit>`: M Lua" is what git counts for that commit. A
 * new key, script, worker file or list command then fails here until the map says so.
 */
import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { KEY_TYPES, READY_KEYS } from "../../src/engine/model/Keys.ts"

const ROOT = resolve(import.meta.dirname, "../..")
const DOC = readFileSync(join(ROOT, "docs/architecture.md"), "utf8")
const filesUnder = (dir: string): ReadonlyArray<string> =>
  readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .sort()

interface PrintedGrep {
  readonly pattern: string
  readonly dir: string
  readonly printed: ReadonlyArray<string>
}

/** Each `grep -rlE "<pattern>" <dir>/` line of a ```sh block, with the `# <file>` lines under it. */
const printedGreps = (md: string): ReadonlyArray<PrintedGrep> => {
  const out: Array<{ pattern: string; dir: string; printed: Array<string> }> = []
  for (const block of md.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of block[1]!.split("\n")) {
      const grep = /^grep -rlE "(.+)" (\S+?)\/?$/.exec(line)
      if (grep) out.push({ pattern: grep[1]!, dir: grep[2]!, printed: [] })
      const file = /^# (\S+\.lua)\b/.exec(line)
      if (file && out.length > 0) out[out.length - 1]!.printed.push(file[1]!)
    }
  }
  return out
}

/** What `grep -rlE` answers: the files under `dir` with a line matching `pattern`, sorted. */
const grepFiles = (pattern: string, dir: string): ReadonlyArray<string> => {
  const re = new RegExp(pattern)
  return filesUnder(dir).filter((f) =>
    readFileSync(join(ROOT, f), "utf8")
      .split("\n")
      .some((l) => re.test(l)),
  )
}

/** The words in backticks of one bullet of the doc: the one starting `- **<title>**`. */
const bullet = (title: string): string => {
  const from = DOC.indexOf(`- **${title}**`)
  expect(from, `a bullet "- **${title}**" in docs/architecture.md`).toBeGreaterThanOrEqual(0)
  const end = DOC.indexOf("\n- ", from + 1)
  return DOC.slice(from, end)
}
const ticked = (text: string): ReadonlySet<string> => new Set([...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!))

describe("docs/architecture.md against the tree", () => {
  it("every grep it prints answers what it prints (list commands, ready keys)", () => {
    const greps = printedGreps(DOC)
    expect(greps.map((g) => g.pattern)).toEqual(
      expect.arrayContaining([expect.stringContaining("LPUSH"), expect.stringContaining("(wait|delayed|marker)")]),
    )
    for (const g of greps) expect(grepFiles(g.pattern, g.dir), g.pattern).toEqual([...g.printed].sort())
  })

  it("a printed grep whose answer is not the tree's is caught", () => {
    const [g] = printedGreps("```sh\ngrep -rlE \"'(LPUSH|RPOP)'\" lua/\n# lua/include/ready.lua\n```\n")
    expect(g!.printed).toEqual(["lua/include/ready.lua"])
    expect(grepFiles(g!.pattern, g!.dir)).not.toEqual(g!.printed)
  })

  it("its key list names every key of KEY_TYPES", () => {
    const named = ticked(bullet("Keys"))
    expect(Object.keys(KEY_TYPES).filter((k) => !named.has(k))).toEqual([])
  })

  it("the ready group it spells out is READY_KEYS, in order and count", () => {
    const m = /Their (\d+) keys \(([^)]+)\) are one group, `READY_KEYS`/.exec(DOC.replace(/\n/g, " "))
    expect(m, "the sentence naming the ready group's keys").not.toBeNull()
    const keys = [...m![2]!.matchAll(/`(\w+)`/g)].map((k) => k[1])
    expect(keys).toEqual([...READY_KEYS])
    expect(Number(m![1])).toBe(READY_KEYS.length)
  })

  it("the lua/ row names every script (dead-* and verify-* as globs)", () => {
    const row = DOC.split("\n").find((l) => l.startsWith("| `lua/` |"))!
    const named = ticked(row)
    const scripts = readdirSync(join(ROOT, "lua"))
      .filter((f) => f.endsWith(".lua"))
      .map((f) => f.slice(0, -4))
    const glob = (s: string) => /^(dead|verify)-/.exec(s)?.[1]
    expect(scripts.filter((s) => !named.has(s) && !(glob(s) && named.has(`${glob(s)}-*`)))).toEqual([])
  })

  it("the worker table has a row for every file of src/engine/worker/ and its rooms", () => {
    const rows = new Set([...DOC.matchAll(/^\| `((?:\w+\/)?\w+\.ts)` \|/gm)].map((m) => m[1]!))
    const files = filesUnder("src/engine/worker")
      .filter((f) => f.endsWith(".ts"))
      .map((f) => relative("src/engine/worker", f))
    expect(files.filter((f) => !rows.has(f))).toEqual([])
  })

  it("every Lua function it names is a function of lua/include/ (or a script's own, reserve's phases)", () => {
    const functions = new Set(
      filesUnder("lua").flatMap((f) =>
        [...readFileSync(join(ROOT, f), "utf8").matchAll(/^local function (\w+)\(/gm)].map((m) => m[1]!),
      ),
    )
    const named = [...DOC.matchAll(/`([a-z]+_[a-z_]+)(?:\(|`)/g)].map((m) => m[1]!)
    expect(named.length).toBeGreaterThan(40)
    expect([...new Set(named)].filter((n) => !functions.has(n))).toEqual([])
  })

  it("the LISTs it names are the list keys of KEY_TYPES", () => {
    const m = /A queue has (\w+) LISTs: (.*?)\. No other/.exec(DOC.replace(/\n/g, " "))
    expect(m, "the sentence naming the queue's LISTs").not.toBeNull()
    const lists = Object.entries(KEY_TYPES)
      .filter(([, type]) => type === "list")
      .map(([k]) => k)
    // every key of the queue the sentence names, in backticks
    const named = [...m![2]!.matchAll(/`(\w+)`/g)].map((x) => x[1]!).filter((k) => k in KEY_TYPES)
    expect(named.sort()).toEqual(lists.sort())
    expect(m![1]).toBe(["", "one", "two", "three", "four"][lists.length])
  })

  it("each include it says an include includes is an --!include line of that file", () => {
    const said = [...DOC.matchAll(/`([a-z-]+)\.lua` includes `([a-z-]+)(?:\.lua)?`/g)]
    expect(said.length).toBeGreaterThanOrEqual(2)
    for (const [, from, to] of said)
      expect(readFileSync(join(ROOT, `lua/include/${from}.lua`), "utf8"), `${from}.lua`).toMatch(
        new RegExp(`^--!include ${to}$`, "m"),
      )
  })
})

/** Every "N files (`<commit>`" of the doc, with the Lua count when it says "…: M Lua". */
const recipeCounts = (md: string) =>
  [...md.replace(/\n/g, " ").matchAll(/(\d+) files \(`([0-9a-f]{7,40})`(?:: (\d+) Lua)?/g)].map((m) => ({
    files: Number(m[1]),
    commit: m[2]!,
    lua: m[3] === undefined ? undefined : Number(m[3]),
  }))

/** The files a commit changed, against its first parent (a merge: what it brought into main). */
const changedBy = (commit: string): ReadonlyArray<string> =>
  execFileSync("git", ["diff", "--name-only", `${commit}^1`, commit], { cwd: ROOT, encoding: "utf8" })
    .split("\n")
    .filter((l) => l !== "")

// a checkout without history (an unpacked tarball, a shallow clone) cannot count commits
const shallow =
  !existsSync(join(ROOT, ".git")) ||
  execFileSync("git", ["rev-parse", "--is-shallow-repository"], { cwd: ROOT, encoding: "utf8" }).trim() === "true"

describe.skipIf(shallow)("docs/architecture.md's recipes against history", () => {
  it("each 'N files (`<commit>`: M Lua' is what the commit changed", () => {
    const counts = recipeCounts(DOC)
    // priorities, changePriority, the priority merge, groups, clearHold and its docs
    expect(counts.length).toBeGreaterThanOrEqual(6)
    for (const c of counts) {
      const files = changedBy(c.commit)
      expect(files.length, `files of ${c.commit}`).toBe(c.files)
      if (c.lua !== undefined)
        expect(files.filter((f) => f.startsWith("lua/")).length, `Lua of ${c.commit}`).toBe(c.lua)
    }
  })

  it("a count that is not the commit's is caught (the old '8 files' of priorities)", () => {
    const [c] = recipeCounts("priorities took 8 files (`1d6c2ce`: 8 Lua")
    expect(c).toEqual({ files: 8, commit: "1d6c2ce", lua: 8 })
    expect(changedBy(c!.commit).length).not.toBe(c!.files)
  })
})

/** The Lua files by the name the doc gives them: a script `x` (lua/x.lua) or an include `x` (lua/include/x.lua). */
const luaFiles = (): ReadonlyMap<string, string> =>
  new Map(
    filesUnder("lua")
      .filter((f) => f.endsWith(".lua"))
      .map((f) => [f.replace(/^lua\/(include\/)?/, "").slice(0, -4), f] as const),
  )

/** The Lua files whose code (comments left out) calls `fn`, but not the one defining it. */
const callersOf = (fn: string): ReadonlyArray<string> =>
  [...luaFiles()]
    .filter(([, f]) => {
      const code = readFileSync(join(ROOT, f), "utf8").replace(/--.*$/gm, "")
      return new RegExp(`(^|[^\\w.])${fn}\\(`).test(code) && !new RegExp(`^local function ${fn}\\(`, "m").test(code)
    })
    .map(([name]) => name)
    .sort()

/** Every "`fn` (called by `a`, `b`, …" of the doc: the function and the files it names. */
const calledBy = (md: string) =>
  [...md.replace(/\n/g, " ").matchAll(/`(\w+)` \(called by ((?:`[a-z-]+`(?:, | and )?)+)/g)].map((m) => ({
    fn: m[1]!,
    files: [...m[2]!.matchAll(/`([a-z-]+)`/g)].map((x) => x[1]!).sort(),
  }))

/** The folder table's rows: the folder and the row's text. */
const folderRows = (md: string) =>
  [...md.matchAll(/^\| `([^`]+\/)` \|(.*)$/gm)].map((m) => ({ dir: m[1]!, text: m[2]! }))

describe("docs/architecture.md's lists against the tree", () => {
  it("each '(called by …)' names every Lua file that calls the function, and no other", () => {
    const said = calledBy(DOC)
    // the transitions: ready, active, dead, finish, complete-jobs, deps, receipts, acks
    expect(said.length).toBeGreaterThanOrEqual(15)
    for (const { fn, files } of said) expect(files, `the callers of ${fn}`).toEqual(callersOf(fn))
  })

  it("a '(called by …)' list that is not the tree's is caught (dead_leave before clean called it)", () => {
    const [c] = calledBy("leave dead (`dead_leave` (called by `dead-retry`, `dead-purge` and `job-retry`))")
    expect(c).toEqual({ fn: "dead_leave", files: ["dead-purge", "dead-retry", "job-retry"] })
    expect(callersOf("dead_leave")).not.toEqual(c!.files)
  })

  it("each folder's row names every file of the folder, unless it says 'among them'", () => {
    const rows = folderRows(DOC)
    expect(rows.length).toBeGreaterThanOrEqual(15)
    // lua/ (scripts by name, dead-* and verify-* as globs) and the worker (its own table) are checked above
    for (const { dir, text } of rows.filter((r) => !["lua/", "src/engine/worker/"].includes(r.dir))) {
      if (text.includes("among them")) continue
      const entries = readdirSync(join(ROOT, dir), { withFileTypes: true })
      const names =
        dir === "test/"
          ? entries.filter((e) => e.isDirectory()).map((e) => `${e.name}/`)
          : entries.filter((e) => e.isFile()).map((e) => e.name)
      const named = ticked(text)
      expect(
        names.filter((n) => !named.has(n)),
        `files of ${dir} its row does not name`,
      ).toEqual([])
    }
  })

  it("reserve's phases, as it lists them, are the calls of reserve.lua's main body in that order", () => {
    const m = /lines in this order: ((?:`\w+`(?: \([^)]*\))?(?:, |\.))+)/.exec(DOC.replace(/\n\s*/g, " "))
    expect(m, "the sentence listing reserve's phases").not.toBeNull()
    const listed = [...m![1]!.matchAll(/`(\w+)`/g)].map((x) => x[1]!)
    const code = readFileSync(join(ROOT, "lua/reserve.lua"), "utf8").replace(/--.*$/gm, "")
    // the main body: after the last phase function's `end`
    const body = code.slice(code.lastIndexOf("\nend\n"))
    const called = [...body.matchAll(/\b([a-z_]+)\(/g)].map((x) => x[1]!).filter((f) => listed.includes(f))
    expect([...new Set(called)]).toEqual(listed)
    for (const f of listed) expect(code, f).toMatch(new RegExp(`^local function ${f}\\(|\\b${f}\\(`, "m"))
  })

  it("every file it names in backticks exists (a path from the root, from src/, src/engine/, src/engine/worker/ (the worker's rooms), lua/ or test/, or a bare file name)", () => {
    const paths = [...DOC.matchAll(/`((?:[\w-]+\/)*[\w.-]+\.(?:ts|lua|md|js|json))`/g)].map((m) => m[1]!)
    expect(paths.length).toBeGreaterThan(150)
    const bare = new Set(
      ["src", "test", "tools", "lua", "bench", "docs"].flatMap((d) => filesUnder(d).map((f) => f.split("/").pop()!)),
    )
    const found = (p: string) =>
      ["", "src/", "src/engine/", "src/engine/worker/", "lua/", "test/"].some((b) => existsSync(join(ROOT, b + p))) ||
      (!p.includes("/") && bare.has(p))
    expect([...new Set(paths)].filter((p) => !found(p))).toEqual([])
  })
})
