/**
 * `leaseq/testing`: helpers for your own tests — `perform` (one job through a handler with
 * the real engine), `enqueued` / `assertEnqueued` / `refuteEnqueued` (what was put on a
 * queue), a throw-away local redis-server, and counters of live workers and connections
 * for leak checks.
 * @module
 */

export { liveWorkers } from "./engine/worker/LiveWorkers.ts"
export { liveConnections } from "./redis/Client.ts"
export {
  assertEnqueued,
  type DeepPartial,
  ENQUEUED_MAX,
  type EnqueuedFilter,
  enqueued,
  matchesPartial,
  type PerformOptions,
  type PerformOutcome,
  perform,
  refuteEnqueued,
} from "./testing/Perform.ts"
export {
  freePort,
  hasRedisServer,
  type LocalRedis,
  RedisServerNotFound,
  type StartRedisOptions,
  startRedisServer,
} from "./testing/RedisServer.ts"
