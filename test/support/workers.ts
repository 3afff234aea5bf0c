/**
 * How many test files run at once: `TEST_WORKERS` (default 3). The suite's tests mostly
 * wait on Redis and on timers, so on a 2-core machine three files at a time take about
 * half the time of one. Each worker gets a redis-server of its own
 * (test/support/global-setup.ts), so a file that pauses or reconfigures "its" Redis
 * never stalls a file running beside it.
 */
const raw = process.env.TEST_WORKERS
export const TEST_WORKERS = raw === undefined || raw === "" ? 3 : Math.max(1, Math.floor(Number(raw)) || 1)
