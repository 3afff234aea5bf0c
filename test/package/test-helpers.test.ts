/**
 * Tests a newcomer copies take their helpers from one place: a test file that imports from
 * another folder of test/ imports from test/support/ (shared helpers), test/fixtures/ (the
 * programs tests run) or test/unit/support/ (the unit tests' fake command layer), never a
 * helper that lives beside the tests of another subject.
 */
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = resolve(import.meta.dirname, "../..")
const TEST = join(ROOT, "test")
/** Where a test may import from outside its own folder. */
const SHARED = ["test/support/", "test/fixtures/", "test/unit/support/"]

/** Every .ts file under `dir`, but fixtures (built packages, programs run as children). */
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return e.name === "fixtures" ? [] : sources(path)
    return e.name.endsWith(".ts") ? [path] : []
  })

/** The test folder of `file` (its first folder under test/): `test/cli/`, `test/unit/`. */
const folderOf = (file: string): string => `test/${relative(TEST, file).split("/")[0]}/`

describe("test helpers", () => {
  it("a test imports from another test folder only its shared helpers (test/support/, fixtures, the unit fake)", () => {
    const crossing = sources(TEST).flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/^\s*(?:import|export)[^"']*?from\s+["'](\.[^"']+)["']/gm)]
        .map((m) => relative(ROOT, resolve(dirname(file), m[1]!)))
        .filter((target) => target.startsWith("test/") && !target.startsWith(folderOf(file)))
        .filter((target) => !SHARED.some((s) => target.startsWith(s)))
        .map((target) => `${relative(ROOT, file)} imports ${target}`),
    )
    expect(crossing).toEqual([])
  })
})
