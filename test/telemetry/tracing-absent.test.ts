/**
 * `@opentelemetry/api` is an optional peer dependency: with it impossible to resolve,
 * leaseq loads, adds, processes and completes a job as usual (a child process whose
 * module resolution refuses every `@opentelemetry/*` package).
 */
import { spawnSync } from "node:child_process"
import { describe, expect, it } from "vitest"
import { queueNamer, redisUrl } from "../support/redis.ts"

const name = queueNamer("tracing-absent")
const fixture = new URL("../fixtures/without-otel.ts", import.meta.url).pathname

describe("without @opentelemetry/api", () => {
  it("a job is added, processed and completed", () => {
    const r = spawnSync(process.execPath, [fixture, redisUrl(), name()], { encoding: "utf8", timeout: 60_000 })
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0)
    expect(r.stdout.trim().split("\n")).toEqual(["api absent: true", "completed same"])
  })
})
