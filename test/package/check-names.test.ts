/**
 * tools/check-names.ts: no two files of src/ share a name unless the check lists them, as
 * one concept on two faces or as a misnaming to fix. It passes on the tree as it is, fails
 * on a new clash, on a new file under a listed name, and on an entry whose clash is gone.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { onCleanup } from "../support/cleanup.ts"

const ROOT = join(import.meta.dirname, "../..")

const runCheck = (files: readonly string[] | undefined) => {
  const args = [join(ROOT, "tools/check-names.ts")]
  if (files !== undefined) {
    const dir = mkdtempSync(join(tmpdir(), "check-names-"))
    onCleanup(() => rmSync(dir, { recursive: true, force: true }))
    for (const name of files) {
      mkdirSync(join(dir, name, ".."), { recursive: true })
      writeFileSync(join(dir, name), "export {}\n")
    }
    args.push(dir)
  }
  return spawnSync(process.execPath, args, { encoding: "utf8", cwd: ROOT })
}

describe("name-clash check", () => {
  it("passes on src as it is, counting the clashes still to rename", () => {
    const r = runCheck(undefined)
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/\(0 of them to rename/)
  })

  it("fails on two files that share a name the check does not list, naming both", () => {
    const r = runCheck(["engine/queue/Flow.ts", "engine/model/Flow.ts"])
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("2 files share the name Flow.ts (engine/model/Flow.ts, engine/queue/Flow.ts)")
  })

  it("fails on a new file under a listed name", () => {
    const r = runCheck(["engine/partition/Queue.ts", "promise/Queue.ts", "cli/Queue.ts"])
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("the files named Queue.ts are cli/Queue.ts, engine/partition/Queue.ts, promise/Queue.ts")
  })

  it("fails on an entry whose clash is gone (one of its files renamed)", () => {
    const r = runCheck(["cli/Groups.ts", "engine/queue/GroupCalls.ts"])
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("cli/Groups.ts, engine/queue/Groups.ts no longer share a name: remove its entry")
  })
})
