/**
 * Runs in every test file: names the waits (`until`) still running when a test ended, runs
 * the cleanups a test registered (onCleanup), then fails a test that leaves a leaseq
 * connection or worker open.
 */
import { afterEach, beforeEach, expect } from "vitest"
import { liveWorkers } from "../../src/engine/worker/LiveWorkers.ts"
import { liveConnections } from "../../src/redis/Client.ts"
import { runCleanups } from "./cleanup.ts"
import { abandonWaits } from "./until.ts"

let connections = 0
let workers = 0
beforeEach(() => {
  connections = liveConnections()
  workers = liveWorkers()
})
afterEach(async () => {
  // a test that failed or timed out while it waited says on what (a passing one awaits its waits)
  const pending = abandonWaits()
  // what the test registered with onCleanup first, so the leak check sees the result
  await runCleanups()
  const leakedWorkers = liveWorkers() - workers
  const leakedConnections = liveConnections() - connections
  expect(pending, "the test ended while these waits (until) were still running").toEqual([])
  expect(leakedWorkers, "the test left a worker running: close it (await worker.close())").toBe(0)
  expect(leakedConnections, "the test left a Redis connection open: close the queue/worker/client it made").toBe(0)
})
