/**
 * What importing leaseq loads: no Redis client, metrics library or cron parser until one
 * is used (ioredis, prom-client with the OpenTelemetry API it pulls in, and cron-parser
 * with luxon were ~170 of the 356 modules `leaseq --help` loaded). Checked in fresh Node
 * processes, by the CommonJS modules they hold (all three are CommonJS). The figures are
 * bench/import.ts's; test/scripts/script-load.test.ts checks no Lua is read at import.
 * The CLI builds every command's flags but loads what runs a command only once it is
 * chosen: checked by the modules of src/ and effect a `leaseq` process loads (a load hook).
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Registry } from "prom-client"
import { describe, expect, it } from "vitest"
import { EXPOSITION_CONTENT_TYPE } from "../../src/metrics.ts"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const HEAVY = /node_modules\/(ioredis|prom-client|cron-parser|@opentelemetry\/api)\//

/** Before the process exits, print the heavy CommonJS packages it loaded (a `--import` hook). */
const REPORT = `data:text/javascript,${encodeURIComponent(
  `import { createRequire } from "node:module"
  const cache = createRequire("${ROOT}").cache
  process.on("exit", () => {
    const heavy = new Set(Object.keys(cache).map((k) => ${HEAVY}.exec(k)?.[1]).filter(Boolean))
    process.stderr.write("\\nHEAVY " + JSON.stringify([...heavy].sort()))
  })`,
)}`

const heavyLoaded = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const r = spawnSync(process.execPath, ["--conditions=leaseq-source", "--import", REPORT, ...args], {
    cwd: ROOT,
    encoding: "utf8",
  })
  const line = /\nHEAVY (.*)$/.exec(r.stderr)
  expect(line, r.stderr).not.toBeNull()
  return JSON.parse(line![1]!) as ReadonlyArray<string>
}

/** Before the process exits, print every module of src/ and effect it loaded (a `--import` hook). */
const MODULES = `data:text/javascript,${encodeURIComponent(
  `import { registerHooks } from "node:module"
  const seen = []
  registerHooks({ load(url, context, next) { seen.push(url); return next(url, context) } })
  process.on("exit", () => {
    const ours = seen.map((u) => /\\/(src\\/.*|effect\\/dist\\/.*)$/.exec(u)?.[1]).filter(Boolean)
    process.stderr.write("\\nMODULES " + JSON.stringify(ours))
  })`,
)}`

/** The exit code of `leaseq <args>` and the modules of src/ and effect it loaded. */
const cliModules = (args: ReadonlyArray<string>): { readonly status: number | null; readonly modules: string[] } => {
  const r = spawnSync(process.execPath, ["--import", MODULES, "src/cli/main.ts", ...args], {
    cwd: ROOT,
    encoding: "utf8",
  })
  const line = /\nMODULES (.*)$/.exec(r.stderr)
  expect(line, r.stderr).not.toBeNull()
  return { status: r.status, modules: JSON.parse(line![1]!) as string[] }
}

/** What runs a command: the engine beyond its model, the Redis client, the CLI's run modules, Effect's runtime. */
const running = (modules: ReadonlyArray<string>): ReadonlyArray<string> =>
  modules.filter(
    (m) =>
      (m.startsWith("src/engine/") && !m.startsWith("src/engine/model/")) ||
      m === "src/redis/Client.ts" ||
      (m.startsWith("src/cli/") && !/^src\/cli\/(main|Output|\w*Flags)\.ts$/.test(m)) ||
      m === "effect/dist/Effect.js",
  )

describe("import cost", () => {
  it("importing leaseq, leaseq/effect and leaseq/metrics loads no Redis client, metrics library or cron parser", () => {
    const code = `await import("leaseq"); await import("leaseq/effect"); await import("leaseq/metrics")`
    expect(heavyLoaded(["--input-type=module", "-e", code])).toEqual([])
  })

  it("leaseq --help loads none of them either; a cron schedule's check loads cron-parser (and its Queue ioredis)", () => {
    expect(heavyLoaded(["src/cli/main.ts", "--help"])).toEqual([])
    const code = `const { Queue } = await import("leaseq")
      const q = new Queue("import-cost", { connection: "redis://127.0.0.1:1" })
      await q.schedule("x", { cron: "not a cron" }, { payload: 1 }).catch(() => {})
      await q.close()`
    expect(heavyLoaded(["--input-type=module", "-e", code])).toEqual(["cron-parser", "ioredis"])
  })

  it("leaseq --help builds every command's flags without loading what runs one (no engine calls, no Effect runtime)", () => {
    const help = cliModules(["--help"])
    expect(help.status).toBe(0)
    expect(help.modules).toContain("src/cli/OpsFlags.ts")
    expect(running(help.modules)).toEqual([])
  })

  it("a command loads its own run module and no other's; a bad --url is refused before it is loaded", () => {
    const bad = cliModules(["sweep", "--url", "bad"])
    expect(bad.status).toBe(2)
    expect(running(bad.modules)).toEqual(["effect/dist/Effect.js"])
    const sweep = cliModules(["sweep", "--url", "redis://127.0.0.1:1"])
    expect(sweep.status).toBe(1)
    expect(sweep.modules).toContain("src/cli/Sweep.ts")
    // sweep opens queues as commands only: the library's queue (QueueCore) is for the commands that need it
    expect(sweep.modules).not.toContain("src/engine/queue/QueueCore.ts")
    expect(sweep.modules.filter((m) => /^src\/cli\/(Admin|Ops|Jobs|Dashboard|Metrics)\.ts$/.test(m))).toEqual([])
  })

  it("the exposition's content type is prom-client's, without loading prom-client to say it", () => {
    expect(EXPOSITION_CONTENT_TYPE).toBe(new Registry().contentType)
  })
})
