/**
 * `leaseq/testing`: helpers for your own tests — a throw-away local redis-server,
 * and counters of live workers and connections for leak checks.
 * @module
 */

export { liveWorkers } from "./engine/worker/LiveWorkers.ts"
export { liveConnections } from "./redis/Client.ts"
export {
  freePort,
  hasRedisServer,
  type LocalRedis,
  RedisServerNotFound,
  type StartRedisOptions,
  startRedisServer,
} from "./testing/RedisServer.ts"
