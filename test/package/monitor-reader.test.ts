/**
 * MONITOR in tests goes through test/support/monitor.ts (a plain socket): an ioredis client
 * in monitor mode can take a MONITOR line that arrives in the same read as its "+OK" for a
 * command reply ("Command queue state error", which failed a CI run). No test file calls
 * ioredis's `monitor()`, and the reader parses what Redis prints, escapes included.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { parseMonitorLine } from "../support/monitor.ts"

const ROOT = join(import.meta.dirname, "../..")

describe("MONITOR in tests", () => {
  it("no test file calls an ioredis client's monitor()", () => {
    const files = readdirSync(join(ROOT, "test"), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith(".ts"))
      .map((e) => join(e.parentPath, e.name))
    const callers = files.filter((f) =>
      readFileSync(f, "utf8")
        .split("\n")
        .some((l) => /\.monitor\(\)/.test(l) && !/^\s*(\*|\/\/)/.test(l)),
    )
    expect(files.length).toBeGreaterThan(100)
    expect(callers.map((f) => relative(ROOT, f))).toEqual([])
  })

  it("parses a client's command and a script's, quotes and escapes included", () => {
    expect(parseMonitorLine('+1700000000.123456 [0 127.0.0.1:51234] "EVALSHA" "abc" "2" "leaseq:{q}:wait"')).toEqual({
      at: 1700000000.123456,
      source: "127.0.0.1:51234",
      args: ["EVALSHA", "abc", "2", "leaseq:{q}:wait"],
    })
    expect(parseMonitorLine('+1.5 [0 lua] "HSET" "k" "say \\"hi\\"\\n" "\\x00\\\\"')?.args).toEqual([
      "HSET",
      "k",
      'say "hi"\n',
      "\u0000\\",
    ])
    expect(parseMonitorLine("+OK")).toBeUndefined()
  })
})
