/**
 * The API reference (docs/api/, `npm run docs:api`, tools/api-docs.ts) is current: made again
 * from the declarations `tsc` emits now, every page is byte for byte what is committed, so
 * an export added or a JSDoc changed without regenerating fails here. And it covers what a
 * user imports: each entry point's page lists the exports its `.d.ts` names.
 */
import { readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { apiPages } from "../../tools/api-docs.ts"

const ROOT = resolve(import.meta.dirname, "../..")

describe("docs/api", () => {
  const pages = apiPages()

  it("is current: regenerated, every page equals the committed one (else run npm run docs:api)", () => {
    for (const [file, text] of pages) expect(readFileSync(join(ROOT, "docs/api", file), "utf8"), file).toBe(text)
  })

  it("documents the exports users reach for, with their JSDoc and declaration, and nothing internal", () => {
    const main = pages.get("leaseq.md") ?? ""
    for (const name of ["Queue", "Worker", "JobOptions", "WrongJobState", "RateLimited"])
      expect(main, name).toMatch(new RegExp(`^## ${name}$`, "m"))
    // a method Queue inherits from a base class that is not exported is still listed
    expect(main).toMatch(/Inherited from `QueueOperations`:[\s\S]*getJobs\(/)
    expect(pages.get("leaseq-testing.md")).toMatch(/## perform\n\nRun one job with `payload` through `handler`/)
    expect(pages.get("leaseq-effect.md")).toMatch(/^## LeaseQueue\.layer$/m)
    for (const [file, text] of pages) {
      expect(text, file).not.toContain("#private")
      expect(text, file).not.toContain("declaration not found")
      expect(text, file).not.toMatch(/^@internal/m)
    }
  })
})
