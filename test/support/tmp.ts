/** Temp directories for tests. */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** A fresh directory `<tmpdir>/leaseq-<tag>-XXXXXX`, removed (recursively) by the returned `remove`. */
export const tempDir = (tag: string): { readonly dir: string; readonly remove: () => void } => {
  const dir = mkdtempSync(join(tmpdir(), `leaseq-${tag}-`))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}
