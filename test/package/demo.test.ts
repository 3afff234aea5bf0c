/**
 * `npm run demo` end to end (smaller): its own worker processes, one SIGKILLed
 * mid-job, every job completed, 0 lost.
 */
import { spawnSync } from "node:child_process"
import { expect, it } from "vitest"
import { redisUrl } from "../support/redis.ts"

it("the demo completes every job after a worker is killed, 0 lost", () => {
  const demo = new URL("../../src/demo/main.ts", import.meta.url).pathname
  const r = spawnSync(process.execPath, [demo], {
    env: { ...process.env, REDIS_URL: redisUrl(), DEMO_JOBS: "600", DEMO_WORKERS: "3" },
    encoding: "utf8",
    timeout: 120_000,
  })
  expect(r.status, r.stdout + r.stderr).toBe(0)
  expect(r.stdout).toMatch(/killed worker-1 \(pid \d+\) with SIGKILL/)
  expect(r.stdout).toMatch(/completed\s+600\n/)
  expect(r.stdout).toMatch(/verify\s+clean/)
  expect(r.stdout).toMatch(/lost\s+0\n/)
})
