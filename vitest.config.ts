import { defineConfig } from "vitest/config"
import { TEST_WORKERS } from "./test/support/workers.ts"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    setupFiles: ["test/support/setup-each.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // files at once, each on a redis-server of its own (test/support/workers.ts)
    maxWorkers: TEST_WORKERS,
  },
})
