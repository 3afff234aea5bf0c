import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import { LongestFirst } from "./test/support/sequencer.ts"
import { TEST_WORKERS } from "./test/support/workers.ts"

/**
 * The processes tests spawn (the CLI from src/, workers, examples) keep Node's compile cache,
 * type-stripped sources included, in .tmp/ across runs: `node src/cli/main.ts --help` costs
 * ~0.2 s of CPU with it and ~0.5 s without (bench/HISTORY.md, "Import cost").
 */
const NODE_COMPILE_CACHE =
  process.env.NODE_COMPILE_CACHE ?? fileURLToPath(new URL(".tmp/node-compile-cache", import.meta.url))

export default defineConfig({
  test: {
    // every project: the leak check after each test, the timeouts, forked workers
    setupFiles: ["test/support/setup-each.ts"],
    env: { NODE_COMPILE_CACHE },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // files at once, each on a redis-server of its own (test/support/workers.ts)
    maxWorkers: TEST_WORKERS,
    // the longest files first, on a fresh clone too (test/support/sequencer.ts)
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        // test/unit/ runs on a fake command layer (no Redis, no module state a file leaves
        // behind), so its files share a worker and the engine's import instead of paying
        // both per file; the leak check still runs after each test
        extends: true,
        test: { name: "unit", include: ["test/unit/**/*.test.ts"], isolate: false },
      },
      {
        extends: true,
        test: {
          name: "suite",
          include: ["test/**/*.test.ts"],
          exclude: ["test/unit/**"],
          globalSetup: ["test/support/global-setup.ts"],
        },
      },
    ],
  },
})
