/**
 * What importing leaseq loads: no Redis client, metrics library or cron parser until one
 * is used (ioredis, prom-client with the OpenTelemetry API it pulls in, and cron-parser
 * with luxon were ~170 of the 356 modules `leaseq --help` loaded). Checked in fresh Node
 * processes, by the CommonJS modules they hold (all three are CommonJS). The figures are
 * bench/import.ts's; test/scripts/script-load.test.ts checks no Lua is read at import.
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

  it("the exposition's content type is prom-client's, without loading prom-client to say it", () => {
    expect(EXPOSITION_CONTENT_TYPE).toBe(new Registry().contentType)
  })
})
