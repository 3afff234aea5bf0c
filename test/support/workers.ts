/**
 * How many test files run at once: `TEST_WORKERS` (default 7). The suite's tests mostly
 * wait on Redis and on timers, so a 2-core machine runs seven files at a time faster than
 * five or eight (measured: CONTRIBUTING.md, "Where the time goes"). Each worker gets a redis-server of its own
 * (test/support/global-setup.ts), so a file that pauses or reconfigures "its" Redis
 * never stalls a file running beside it.
 */
const raw = process.env.TEST_WORKERS
export const TEST_WORKERS = raw === undefined || raw === "" ? 7 : Math.max(1, Math.floor(Number(raw)) || 1)
