/**
 * Fails when a user's TypeScript would resolve one of the package's entry points wrongly:
 * `node tools/check-pack.ts` packs the package (`npm pack`, which builds it) into a temp
 * folder and runs `@arethetypeswrong/cli` on that tarball for every entry point in
 * `exports`, under the `esm-only` profile (leaseq is ESM only: the node10 and
 * CommonJS-from-TypeScript resolutions are not claimed). Needs no network.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

const root = resolve(import.meta.dirname, "..")
const work = mkdtempSync(join(tmpdir(), "leaseq-attw-"))
try {
  const out = execFileSync("npm", ["pack", "--silent", "--pack-destination", work], { cwd: root, encoding: "utf8" })
  const tarball = join(work, out.trim().split("\n").pop()!)
  execFileSync(join(root, "node_modules/.bin/attw"), [tarball, "--profile", "esm-only", "--format", "table-flipped"], {
    stdio: "inherit",
  })
  console.log("check:pack: every entry point's types resolve (attw, esm-only profile)")
} catch (e) {
  console.error(`check:pack failed: ${(e as Error).message}`)
  process.exitCode = 1
} finally {
  rmSync(work, { recursive: true, force: true })
}
