/**
 * tools/check-layers.ts: the folder-direction rule CI runs. It passes on the tree as it is,
 * fails on an edge the table does not allow (the client layer importing the engine; inside
 * the engine, queue/ importing worker/, or a worker file importing queue/), on an engine
 * sub-folder the table lacks, and on a loop of folders even where every edge is allowed
 * folder by folder.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { ENGINE_ALLOWED } from "../../tools/layer-rules.ts"
import { onCleanup } from "../support/cleanup.ts"

const ROOT = join(import.meta.dirname, "../..")

const runCheck = (files: Record<string, string> | undefined) => {
  const args = [join(ROOT, "tools/check-layers.ts")]
  if (files !== undefined) {
    const dir = mkdtempSync(join(tmpdir(), "check-layers-"))
    onCleanup(() => rmSync(dir, { recursive: true, force: true }))
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(join(dir, name, ".."), { recursive: true })
      writeFileSync(join(dir, name), text)
    }
    args.push(dir)
  }
  return spawnSync(process.execPath, args, { encoding: "utf8", cwd: ROOT })
}

describe("folder-direction check", () => {
  it("passes on src as it is", () => {
    const r = runCheck(undefined)
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
  })

  it("fails on an edge the table does not allow, naming the import", () => {
    const r = runCheck({
      "redis/Client.ts": 'import { Thing } from "../engine/Thing.ts"\nexport const c = Thing\n',
      "engine/Thing.ts": "export const Thing = 1\n",
    })
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("redis/ may not import engine/")
    expect(r.stderr).toContain("Client.ts imports ../engine/Thing.ts")
  })

  it("fails on a loop of folders inside one layer", () => {
    const r = runCheck({
      "engine/calls/Commands.ts": 'import { decode } from "../scripts/Add.ts"\nexport const run = decode\n',
      "engine/scripts/Add.ts": 'import type { Keys } from "../calls/Keys.ts"\nexport const decode = (k: Keys) => k\n',
      "engine/calls/Keys.ts": "export type Keys = string\n",
    })
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/folder loop engine\/calls ↔ engine\/scripts/)
  })

  it("fails on a top-level folder missing from the table", () => {
    const r = runCheck({
      "plugins/P.ts": 'import { x } from "../redis/X.ts"\nexport const p = x\n',
      "redis/X.ts": "export const x = 1\n",
    })
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("plugins/ is not in the allowed-edges table")
  })

  it("fails on an engine import against the direction: queue/ importing worker/", () => {
    const r = runCheck({
      "engine/queue/Adding.ts": 'import { start } from "../worker/Worker.ts"\nexport const a = start\n',
      "engine/worker/Worker.ts": "export const start = 1\n",
    })
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("engine/queue/ may not import engine/worker/")
    expect(r.stderr).toContain("Adding.ts imports ../worker/Worker.ts")
  })

  it("fails a worker file importing queue/, and an engine sub-folder missing from the table", () => {
    const r = runCheck({
      "engine/queue/Job.ts": "export type Job = string\n",
      "engine/worker/RunJob.ts": 'import type { Job } from "../queue/Job.ts"\nexport const j = (x: Job) => x\n',
      "engine/plugins/P.ts": 'import { m } from "../model/M.ts"\nexport const p = m\n',
      "engine/model/M.ts": "export const m = 1\n",
    })
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("engine/worker/ may not import engine/queue/")
    expect(r.stderr).toContain("RunJob.ts imports ../queue/Job.ts")
    expect(r.stderr).toContain("engine/plugins/ is not in the engine's allowed-edges table")
  })
})

describe("the worker's rooms (WORKER_ROOMS in tools/layer-rules.ts)", () => {
  const base = {
    "engine/worker/WorkerOptions.ts": "export type Settings = { n: number }\n",
    "engine/worker/Worker.ts":
      'import { keep } from "./lease/Keep.ts"\nimport { loop } from "./loop/Loop.ts"\nimport { run } from "./run/Run.ts"\nexport const w = [keep, loop, run]\n',
    "engine/worker/lease/Keep.ts":
      'import type { Settings } from "../WorkerOptions.ts"\nexport const keep = (s: Settings) => s\n',
    "engine/worker/loop/Loop.ts": 'import { keep } from "../lease/Keep.ts"\nexport const loop = keep\n',
    "engine/worker/run/Run.ts":
      'import { keep } from "../lease/Keep.ts"\nimport { loop } from "../loop/Loop.ts"\nexport const run = [keep, loop]\n',
  }

  it("pass rooms that import the rooms below them and the worker's base files", () => {
    const r = runCheck(base)
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
  })

  it("fail the lease keeper importing the loop, and the loop importing the run", () => {
    const r = runCheck({
      ...base,
      "engine/worker/lease/Keep.ts": 'import { loop } from "../loop/Loop.ts"\nexport const keep = loop\n',
      "engine/worker/loop/Loop.ts": 'import { run } from "../run/Run.ts"\nexport const loop = run\n',
    })
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("engine/worker/lease/ may not import engine/worker/loop/")
    expect(r.stderr).toContain("engine/worker/loop/ may not import engine/worker/run/")
  })

  it("fail a room importing the worker's assembly (a file that imports the rooms), naming the loop", () => {
    const r = runCheck({
      ...base,
      "engine/worker/loop/Loop.ts": 'import { w } from "../Worker.ts"\nexport const loop = w\n',
    })
    expect(r.status).toBe(1)
    expect(r.stderr).toContain(
      "engine/worker/loop/ may import only the worker's base files, not engine/worker/Worker.ts",
    )
    expect(r.stderr).toMatch(/folder loop .*engine\/worker\/loop/)
  })

  it("fail a room the table does not name", () => {
    const r = runCheck({
      ...base,
      "engine/worker/extra/X.ts": 'import { keep } from "../lease/Keep.ts"\nexport const x = keep\n',
    })
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("engine/worker/extra/ is not in the worker's rooms table")
  })
})

describe("the engine's table (tools/layer-rules.ts)", () => {
  it("names every sub-folder of src/engine/", () => {
    const folders = readdirSync(join(ROOT, "src/engine"), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
    expect(Object.keys(ENGINE_ALLOWED).sort()).toEqual(folders.sort())
  })
})
