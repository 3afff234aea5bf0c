/**
 * The dashboard's browser script (src/dashboard/browser/*.js) is type-checked by
 * `npm run typecheck` through tsconfig.browser.json: it passes on the script as it is, and
 * fails on what the browser would get wrong: a DOM value that may be null, a Node global
 * (the script runs in a browser: no Node types), a reading's field that does not exist, an
 * untyped parameter. Biome lints every file of it, as it does the rest.
 */
import { spawnSync } from "node:child_process"
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { onCleanup } from "../support/cleanup.ts"

const ROOT = join(import.meta.dirname, "../..")
const TSC = join(ROOT, "node_modules/.bin/tsc")

/** tsc over a copy of the browser folder plus `extra` files, with tsconfig.browser.json's options. */
const checkWith = (extra: Record<string, string>) => {
  const dir = mkdtempSync(join(tmpdir(), "browser-check-"))
  onCleanup(() => rmSync(dir, { recursive: true, force: true }))
  cpSync(join(ROOT, "src/dashboard/browser"), join(dir, "browser"), { recursive: true })
  for (const [name, text] of Object.entries(extra)) writeFileSync(join(dir, "browser", name), text)
  const config = { extends: join(ROOT, "tsconfig.browser.json"), include: ["browser"] }
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(config))
  return spawnSync(TSC, ["-p", dir], { encoding: "utf8" })
}

describe("the browser script's type check", () => {
  it("passes on the script as it is (the config npm run typecheck runs)", () => {
    const r = spawnSync(TSC, ["-p", join(ROOT, "tsconfig.browser.json")], { encoding: "utf8" })
    expect(r.stdout + r.stderr).toBe("")
    expect(r.status).toBe(0)
  })

  it("fails on a possibly-null element, a Node global, a missing reading field and an untyped parameter", () => {
    const r = checkWith({
      "bad.js": [
        "// @ts-check",
        '/** @import { QueueView } from "./types.js" */',
        'document.getElementById("status").textContent = "x"',
        "export const where = process.cwd()",
        "/** @param {QueueView} d */",
        "export const nope = (d) => d.stats.nope",
        "export const untyped = (x) => x",
        "",
      ].join("\n"),
    })
    expect(r.status).not.toBe(0)
    expect(r.stdout).toMatch(/bad\.js\(3,\d+\): error TS2531: Object is possibly 'null'/)
    expect(r.stdout).toMatch(/bad\.js\(4,\d+\): error TS\d+: Cannot find name 'process'/)
    expect(r.stdout).toMatch(/bad\.js\(6,\d+\): error TS2339: Property 'nope' does not exist on type 'Stats'/)
    expect(r.stdout).toMatch(/bad\.js\(7,\d+\): error TS7006: Parameter 'x' implicitly has an 'any' type/)
  })

  it("Biome lints and format-checks every file of it (none is ignored)", () => {
    const dir = join(ROOT, "src/dashboard/browser")
    const r = spawnSync(join(ROOT, "node_modules/.bin/biome"), ["check", dir], { encoding: "utf8", cwd: ROOT })
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(r.stdout + r.stderr).toContain(`Checked ${readdirSync(dir).length} files`)
  })
})
