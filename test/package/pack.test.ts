/**
 * `npm pack` makes a package a user can install and import: built JS, types, the
 * Lua scripts and the CLI bin. The tarball is unpacked into a node_modules folder
 * (dependencies resolve from the repo's own) and used as a user would.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { queueNamer, redisUrl } from "../support/redis.ts"

const root = new URL("../..", import.meta.url).pathname
const name = queueNamer("pack")
let work: string
let pkg: string

beforeAll(() => {
  mkdirSync(join(root, ".tmp"), { recursive: true })
  work = mkdtempSync(join(root, ".tmp", "pack-"))
  const out = execFileSync("npm", ["pack", "--silent", "--pack-destination", work], { cwd: root, encoding: "utf8" })
  const tarball = out.trim().split("\n").pop()!
  pkg = join(work, "node_modules", "leaseq")
  mkdirSync(pkg, { recursive: true })
  execFileSync("tar", ["-xzf", join(work, tarball), "-C", pkg, "--strip-components=1"])
}, 180_000)
afterAll(() => {
  rmSync(work, { recursive: true, force: true })
})

it("the tarball holds built JS, types, the Lua scripts and the bin — and no sources or tests", () => {
  const files = (dir: string): string[] =>
    readdirSync(join(pkg, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)],
    )
  const all = files(".")
  for (const f of [
    "dist/index.js",
    "dist/index.d.ts",
    "dist/effect.js",
    "dist/effect.d.ts",
    "dist/metrics.js",
    "dist/dashboard.js",
    "dist/cli/main.js",
    "lua/reserve.lua",
    "README.md",
  ]) {
    expect(all).toContain(f)
  }
  expect(all.filter((f) => f.startsWith("src/") || f.startsWith("test/"))).toEqual([])
})

it("a user can import it and run a job", () => {
  const q = name()
  const script = join(work, "use.mjs")
  writeFileSync(
    script,
    `import { Queue, Worker, InvalidOptions } from "leaseq"
import * as effectFace from "leaseq/effect"
import { metricsHandler } from "leaseq/metrics"
const queue = new Queue(${JSON.stringify(q)}, { connection: process.env.REDIS_URL })
await queue.add({ hello: "world" })
await new Promise((resolve) => {
  const worker = new Worker(${JSON.stringify(q)}, async (job) => job.payload.hello, { connection: process.env.REDIS_URL })
  worker.on("completed", (_job, result) => { console.log("result", result); worker.close().then(resolve) })
})
await queue.close()
console.log("effect exports", Object.keys(effectFace).length > 0, typeof InvalidOptions)
const metrics = metricsHandler({ connection: process.env.REDIS_URL, queues: [${JSON.stringify(q)}] })
console.log("metrics", (await metrics.render()).includes("leaseq_jobs_completed_total"))
await metrics.close()
`,
  )
  const r = spawnSync(process.execPath, [script], { env: { ...process.env, REDIS_URL: redisUrl() }, encoding: "utf8" })
  expect(r.status, r.stderr).toBe(0)
  expect(r.stdout).toContain("result world")
  expect(r.stdout).toContain("effect exports true function")
  expect(r.stdout).toContain("metrics true")
})

it("the bin runs", () => {
  const r = spawnSync(process.execPath, [join(pkg, "dist/cli/main.js"), "--help"], { encoding: "utf8" })
  expect(r.status, r.stderr).toBe(0)
  expect(r.stdout).toMatch(/sweep/)
})
