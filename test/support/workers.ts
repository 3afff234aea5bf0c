/**
 * How many test files run at once: `TEST_WORKERS` (default 5). The suite's tests mostly
 * wait on Redis and on timers, so a 2-core machine runs five files at a time in about a
 * fifth of the time of one: 168 s against 242 s at three (in one session, the whole suite;
 * six were no faster, the two cores then busy throughout). Each worker gets a redis-server of its own
 * (test/support/global-setup.ts), so a file that pauses or reconfigures "its" Redis
 * never stalls a file running beside it.
 */
const raw = process.env.TEST_WORKERS
export const TEST_WORKERS = raw === undefined || raw === "" ? 5 : Math.max(1, Math.floor(Number(raw)) || 1)
