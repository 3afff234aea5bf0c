/**
 * leaseq's Prometheus exposition, as a request handler to mount in an existing HTTP
 * server (`leaseq metrics` serves the same thing on its own).
 *
 * ```ts
 * import { createServer } from "node:http"
 * import { metricsHandler } from "leaseq/metrics"
 * createServer(metricsHandler({ connection: process.env.REDIS_URL })).listen(9464, "127.0.0.1")
 * ```
 * @module
 */
export { COUNTERS, EXPOSITION_CONTENT_TYPE } from "./metrics/Exposition.ts"
export {
  DEFAULT_MAX_QUEUES,
  DEFAULT_METRICS_CACHE_MS,
  type MetricsHandler,
  type MetricsHandlerOptions,
  metricsHandler,
  READ_TIMEOUT_MS,
} from "./metrics/MetricsHandler.ts"
