/**
 * Docs that cannot drift. Every example in docs/examples runs against real Redis and
 * exits 0, importing "leaseq" as a user would (resolved to src/ through the package's
 * own exports). And every ```ts block in README.md and docs/*.md says, in an HTML comment
 * on the line just before it, what it is:
 *
 *   <!-- example: docs/examples/x.ts -->        the block is that file (less its leading // comment lines)
 *   <!-- example: docs/examples/x.ts#name -->   the block is the region `// #region name` … `// #endregion` of it
 *   <!-- excerpt: docs/examples/x.ts; why -->   every line of the block that is not elided (…) is in that file, in order
 *   <!-- fragment: why -->                     not code to run (a signature, a line shown alone); says why
 *
 * so a snippet cannot say something the tested example does not. Each example's first line
 * ends with its run line (`Run: npm run example docs/examples/x.ts`), and the test runs that
 * line itself, in a shell from the repository's root (so it works as written from a clone after
 * `npm install`), with `REDIS_URL` set to a database of the suite's Redis that only the
 * examples use (four run at a time, each in a database of its own); a run line in the docs must
 * be one of those lines. An example removes what it made before it ends (a user runs them on a
 * shared dev Redis): its database is empty after each.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { rawClient, redisUrl } from "../support/redis.ts"

const ROOT = resolve(import.meta.dirname, "../..")
const dir = new URL("../../docs/examples/", import.meta.url)
const examples = readdirSync(dir).filter((f) => f.endsWith(".ts"))

/**
 * The examples run this many at a time, each lane in a database of its own (5, 6, …; no other
 * test file uses them), one example after another: they mostly wait on Redis and on their
 * workers (alone on 2 cores: 12–17 s with four lanes, 27 s with one; the CPU, ~21 s, is the same).
 */
const LANES = 4
const FIRST_DB = 5
const exampleUrl = (lane: number) => `${redisUrl()}/${FIRST_DB + lane}`

/** What one example's run left: its exit, its output, and the keys in its lane's database after it. */
interface Ran {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
  readonly left: readonly string[]
}

/** Kill a shell and what it started (its process group). */
const killGroup = (child: ChildProcess) => {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
  } catch {
    // already gone
  }
}

/** Run `line` in a shell (a process group of its own) from the repository's root, against the lane's database; at most 60 s. */
const runExample = (line: string, lane: number, running: Set<ChildProcess>) =>
  new Promise<Omit<Ran, "left">>((resolveRun, reject) => {
    const child = spawn("sh", ["-c", line], {
      cwd: ROOT,
      env: { ...process.env, REDIS_URL: exampleUrl(lane) },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    })
    running.add(child)
    const timer = setTimeout(() => killGroup(child), 60_000)
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (d: Buffer) => {
      stdout += d.toString()
    })
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString()
    })
    child.on("error", reject)
    child.on("close", (status) => {
      clearTimeout(timer)
      running.delete(child)
      resolveRun({ status, stdout, stderr })
    })
  })

/** A promise with its resolve and reject (Promise.withResolvers is ES2024); a rejection nobody awaits is not reported twice. */
const deferred = <A>() => {
  let resolve!: (a: A) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<A>((res, rej) => {
    resolve = res
    reject = rej
  })
  promise.catch(() => {})
  return { promise, resolve, reject }
}

describe("docs examples", () => {
  const raws: Array<ReturnType<typeof rawClient>> = []
  const running = new Set<ChildProcess>()
  /** Each example's run, started in beforeAll; undefined for an example without a run line. */
  const runs = new Map<string, Promise<Ran>>()
  beforeAll(async () => {
    for (let lane = 0; lane < LANES; lane++) raws.push(rawClient(exampleUrl(lane)))
    await Promise.all(raws.map((raw) => raw.flushdb()))
    const todo = examples.filter((file) => runLine(file) === `npm run example docs/examples/${file}`)
    const started = new Map(todo.map((file) => [file, deferred<Ran>()]))
    for (const [file, { promise }] of started) runs.set(file, promise)
    const lane = async (n: number): Promise<void> => {
      for (let file = todo.shift(); file !== undefined; file = todo.shift()) {
        const done = started.get(file)!
        try {
          const r = await runExample(runLine(file)!, n, running)
          const left = (await raws[n]!.keys("*")).sort()
          await raws[n]!.flushdb() // the next example in this lane starts from an empty database whatever this one left
          done.resolve({ ...r, left })
        } catch (e) {
          done.reject(e)
        }
      }
    }
    // not awaited: each test awaits its own example's run
    for (let n = 0; n < LANES; n++) void lane(n)
  })
  afterAll(async () => {
    for (const child of running) killGroup(child)
    await Promise.allSettled(runs.values())
    for (const raw of raws) raw.disconnect()
  })

  it("there are examples", () => {
    expect(examples.length).toBeGreaterThan(0)
  })
  for (const file of examples) {
    it(`${file} runs, by its own run line, and leaves no key in Redis`, async () => {
      const line = runLine(file)
      expect(line, `${file}: its first line must end with "Run: npm run example docs/examples/${file}"`).toBe(
        `npm run example docs/examples/${file}`,
      )
      const r = await runs.get(file)!
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0)
      expect(r.stdout.length).toBeGreaterThan(0)
      expect(r.left, `${file} left keys in Redis: obliterate its queues before it ends`).toEqual([])
    })
  }
  it("every command in the docs that runs an example is that example's run line", () => {
    const lines = new Set(examples.map(runLine))
    const said = docs.flatMap((f) =>
      [...readFileSync(join(ROOT, f), "utf8").matchAll(/`([^`]*docs\/examples\/[\w-]+\.ts)`/g)].map((m) => ({
        f,
        cmd: m[1]!,
      })),
    )
    expect(said.filter(({ cmd }) => cmd.includes(" ") && !lines.has(cmd))).toEqual([])
  })
})

describe("what the docs say of Node", () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"))
  it("the README names the `node` devDependency npm scripts run on, and the README and getting-started the engines floor", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8")
    const pinned = String(manifest.devDependencies.node).split(".").slice(0, 2).join(".")
    expect(readme).toContain(`run on the \`node\` devDependency (${pinned})`)
    const floor = String(manifest.engines.node).replace(/^>=/, "")
    expect(readme).toContain(`Node 22 (≥ ${floor})`)
    expect(readFileSync(join(ROOT, "docs/getting-started.md"), "utf8")).toContain(`Node 22 (≥ ${floor})`)
  })
})

// issue 34's "Done when": what a team adopting leaseq reads first stays on the page
describe("what an adopting team reads first", () => {
  const section = (file: string, heading: string) => {
    const text = readFileSync(join(ROOT, file), "utf8")
    const at = text.indexOf(`\n## ${heading}\n`)
    expect(at, `${file} has a section "${heading}"`).toBeGreaterThan(0)
    const end = text.indexOf("\n## ", at + 1)
    return text.slice(at, end < 0 ? undefined : end)
  }
  it("operations.md opens with a 'Before production' checklist: sweeper, AOF, noeviction, policy owners, the dashboard token", () => {
    const text = readFileSync(join(ROOT, "docs/operations.md"), "utf8")
    expect(text.indexOf("\n## Before production\n")).toBe(text.indexOf("\n## "))
    const list = section("docs/operations.md", "Before production")
    for (const item of ["sweeper", "AOF", "noeviction", "setRetention", "setRateLimit", "dashboard token"])
      expect(list, item).toContain(item)
  })
  it("from-bullmq.md says what ported code meets: failed per attempt, completed's result bound, getJobs rows, stored policies, backoff", () => {
    const rows = section("docs/from-bullmq.md", "What leaseq does differently, and why")
      .split("\n")
      .filter((l) => l.startsWith("| "))
      .map((l) => l.split("|")[1]!.trim())
    expect(rows).toEqual(
      expect.arrayContaining(["`failed` event", "`completed` event", "`getJobs` rows", "retention, limits", "backoff"]),
    )
  })
})

/** The command at the end of an example's first line (`… Run: <command>`). */
function runLine(file: string): string | undefined {
  const first = readFileSync(new URL(file, dir), "utf8").split("\n")[0]!
  return first.match(/Run: (.+)$/)?.[1]?.trim()
}

/** A ```ts block of a Markdown file, with the marker comment on the line before it. */
interface Block {
  /** `file:line` of the opening fence. */
  readonly where: string
  readonly marker: string | undefined
  readonly code: string
}

const MARKER = /^<!--\s*(.*?)\s*-->$/

const tsBlocks = (file: string, text: string): Block[] => {
  const lines = text.split("\n")
  const blocks: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i]!)) continue
    const end = lines.findIndex((l, j) => j > i && l.trimEnd() === "```")
    const marker = lines[i - 1]?.trim().match(MARKER)?.[1]
    blocks.push({ where: `${file}:${i + 1}`, marker, code: lines.slice(i + 1, end).join("\n") })
    i = end
  }
  return blocks
}

const trimLines = (text: string): string =>
  text
    .split("\n")
    .map((l) => l.trimEnd())
    .join("\n")
    .trim()

/** The whole example without its leading comment lines, or the named region, dedented, without region markers. */
const exampleText = (source: string, region: string | undefined): string => {
  let lines = source.split("\n")
  if (region === undefined) {
    const first = lines.findIndex((l) => l.trim() !== "" && !l.trimStart().startsWith("//"))
    lines = lines.slice(first)
  } else {
    const start = lines.findIndex((l) => l.trim() === `// #region ${region}`)
    if (start < 0) throw new Error(`no "// #region ${region}" in the example`)
    const end = lines.findIndex((l, j) => j > start && l.trim() === "// #endregion")
    if (end < 0) throw new Error(`region ${region} has no "// #endregion"`)
    lines = lines.slice(start + 1, end)
  }
  lines = lines.filter((l) => !/^\s*\/\/ #(end)?region\b/.test(l))
  const indent = Math.min(...lines.filter((l) => l.trim() !== "").map((l) => l.length - l.trimStart().length))
  return trimLines(lines.map((l) => l.slice(indent)).join("\n"))
}

/**
 * The lines of `block` missing from `source`, in order. A line is compared without its
 * trailing `// comment` and may be part of a longer line (`yield* q.add(x)` is in
 * `const id = yield* q.add(x)`); elided lines (with "…") and comment lines are skipped.
 */
const missingFromExcerpt = (block: string, source: string): string[] => {
  const have = source.split("\n").map((l) => l.trim())
  const missing: string[] = []
  let at = 0
  for (const line of block.split("\n")) {
    const code = line.replace(/\s*\/\/ .*$/, "").trim()
    if (code === "" || code.includes("…")) continue
    const found = have.findIndex((l, i) => i >= at && l.includes(code))
    if (found < 0) missing.push(code)
    else at = found + 1
  }
  return missing
}

const docs = ["README.md", ...readdirSync(join(ROOT, "docs")).map((f) => `docs/${f}`)].filter((f) => f.endsWith(".md"))
const blocks = docs.flatMap((f) => tsBlocks(f, readFileSync(join(ROOT, f), "utf8")))

/** What is wrong with one block: undefined when it is what its marker says. */
const problem = (block: Block): string | undefined => {
  const how =
    "mark it <!-- example: docs/examples/x.ts#region -->, <!-- excerpt: file; why --> or <!-- fragment: why -->"
  if (block.marker === undefined) return `${block.where}: a ts block with no marker on the line before it; ${how}`
  const [, kind, rest] = block.marker.match(/^(example|excerpt|fragment):\s*(.*)$/) ?? []
  if (!kind) return `${block.where}: unknown marker "${block.marker}"; ${how}`
  if (kind === "fragment") return rest ? undefined : `${block.where}: a fragment marker must say why`
  const [path, why] = rest!.split(/;\s*/, 2)
  const [file, region] = path!.split("#")
  let source: string
  try {
    source = readFileSync(join(ROOT, file!), "utf8")
  } catch {
    return `${block.where}: ${file} does not exist`
  }
  if (kind === "example") {
    try {
      exampleText(source, region)
    } catch (e) {
      return `${block.where}: ${file}: ${(e as Error).message}`
    }
    return undefined
  }
  if (!why) return `${block.where}: an excerpt marker must say why it is not the whole example (after ";")`
  const missing = missingFromExcerpt(block.code, source)
  return missing.length ? `${block.where}: lines not in ${file} (in order):\n  ${missing.join("\n  ")}` : undefined
}

describe("the docs check itself", () => {
  const example = [
    "// a header",
    'import { Queue } from "leaseq"',
    "  // #region add",
    "  await queue.add(1)",
    "  // #endregion",
  ].join("\n")
  it("finds a block, its marker and its line", () => {
    const found = tsBlocks("x.md", "text\n<!-- example: e.ts#add -->\n```ts\nawait queue.add(1)\n```\n")
    expect(found).toEqual([{ where: "x.md:3", marker: "example: e.ts#add", code: "await queue.add(1)" }])
  })
  it("a region is dedented and a whole file loses its header comment", () => {
    expect(exampleText(example, "add")).toBe("await queue.add(1)")
    expect(exampleText(example, undefined).split("\n")[0]).toBe('import { Queue } from "leaseq"')
  })
  it("an unmarked block, an unknown marker, a fragment without a reason and a missing region are problems", () => {
    const block = (marker: string | undefined) => ({ where: "x.md:1", marker, code: "x" })
    expect(problem(block(undefined))).toMatch(/no marker/)
    expect(problem(block("exampel: docs/examples/errors.ts"))).toMatch(/unknown marker/)
    expect(problem(block("fragment:"))).toMatch(/must say why/)
    expect(problem(block("example: docs/examples/errors.ts#nope"))).toMatch(/no "\/\/ #region nope"/)
  })
  it("an excerpt line that the example does not have is reported; elided lines are skipped", () => {
    expect(missingFromExcerpt("a\n…\nc", "a\nb\nc")).toEqual([])
    expect(missingFromExcerpt("a\nd", "a\nb\nc")).toEqual(["d"])
    expect(missingFromExcerpt("c\na", "a\nb\nc")).toEqual(["a"])
    expect(missingFromExcerpt("q.add(1) // note", "const id = q.add(1)")).toEqual([])
  })
})

describe("docs code blocks", () => {
  it("README.md and docs/*.md have ts blocks", () => {
    expect(blocks.length).toBeGreaterThan(10)
  })
  for (const block of blocks) {
    it(`${block.where} is what its marker says (${block.marker ?? "no marker"})`, () => {
      expect(problem(block)).toBeUndefined()
      const example = block.marker?.match(/^example:\s*(\S+)$/)?.[1]
      if (example) {
        const [file, region] = example.split("#")
        const shown = exampleText(readFileSync(join(ROOT, file!), "utf8"), region)
        expect(trimLines(block.code), `${block.where} differs from ${example}; change both`).toBe(shown)
      }
    })
  }
})
