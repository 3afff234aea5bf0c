/**
 * Every example in docs/examples runs against real Redis and exits 0, importing
 * "leaseq" as a user would (resolved to src/ through the package's own exports).
 */
import { spawnSync } from "node:child_process"
import { readdirSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { redisUrl } from "./support/redis.ts"

const dir = new URL("../docs/examples/", import.meta.url)
const examples = readdirSync(dir).filter((f) => f.endsWith(".ts"))

describe("docs examples", () => {
  it("there are examples", () => {
    expect(examples.length).toBeGreaterThan(0)
  })
  for (const file of examples) {
    it(`${file} runs`, () => {
      const r = spawnSync(process.execPath, ["--conditions=leaseq-source", new URL(file, dir).pathname], {
        env: { ...process.env, REDIS_URL: redisUrl() },
        encoding: "utf8",
        timeout: 60_000,
      })
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0)
      expect(r.stdout.length).toBeGreaterThan(0)
    })
  }
})
