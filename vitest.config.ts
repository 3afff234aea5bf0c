import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import { LongestFirst, SeededFiles } from "./test/support/sequencer.ts"
import { TEST_WORKERS } from "./test/support/workers.ts"

/**
 * The processes tests spawn (the CLI from src/, workers, examples) keep Node's compile cache,
 * type-stripped sources included, in .tmp/ across runs: `node src/cli/main.ts --help` costs
 * ~0.2 s of CPU with it and ~0.5 s without (bench/HISTORY.md, "Import cost").
 */
const NODE_COMPILE_CACHE =
  process.env.NODE_COMPILE_CACHE ?? fileURLToPath(new URL(".tmp/node-compile-cache", import.meta.url))

/**
 * Suite files that run in a process of their own (vitest's isolation), each with why: what
 * they change lives as long as the process, so a file after them in a shared worker would
 * run against it.
 */
const ISOLATED = [
  // register the OpenTelemetry SDK as the global tracer, meter provider and context manager
  // (test/support/otel.ts); the engine keeps the instruments it made for that provider
  "test/telemetry/tracing.test.ts",
  "test/telemetry/tracing-effect.test.ts",
]

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
    // the longest files first, on a fresh clone too (test/support/sequencer.ts); with
    // TEST_SHUFFLE_FILES=1, an order drawn from --sequence.seed (files that leave state behind)
    sequence: { sequencer: process.env.TEST_SHUFFLE_FILES === "1" ? SeededFiles : LongestFirst },
    projects: [
      {
        // test/unit/ runs on a fake command layer (no Redis, no module state a file leaves
        // behind), so its files share a worker and the engine's import instead of paying
        // both per file; the leak check still runs after each test
        extends: true,
        test: { name: "unit", include: ["test/unit/**/*.test.ts"], isolate: false },
      },
      {
        // the files against Redis share a worker process too, and so the engine's import:
        // about 0.5 s of CPU per file (test/workers, jobs, scripts, events and effect, 58
        // files: 50 s of CPU isolated, 19 s shared). Each test still gets its own queues, its
        // cleanups and the leak check; a file that changes what a process holds for good is
        // in ISOLATED above, with the reason
        extends: true,
        test: {
          name: "suite",
          include: ["test/**/*.test.ts"],
          exclude: ["test/unit/**", ...ISOLATED],
          isolate: false,
          globalSetup: ["test/support/global-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "suite-isolated",
          include: [...ISOLATED],
          globalSetup: ["test/support/global-setup.ts"],
        },
      },
    ],
  },
})
