/**
 * The defaults of the metrics handler's options, apart from the handler: this module
 * imports nothing, so `leaseq metrics`' flags can state them without loading it.
 */

/** Default of `MetricsHandlerOptions.readTimeoutMs`: well under Prometheus' default scrape timeout of 10 s. */
export const READ_TIMEOUT_MS = 2000

/** Default of `MetricsHandlerOptions.maxQueues`. */
export const DEFAULT_MAX_QUEUES = 500
