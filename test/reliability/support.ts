/**
 * A thin re-export, kept so that branches written before the move still compile (no file
 * of this repository imports it any more): the helpers live in test/support/, one file per
 * concept — `until.ts` (until, redisNow, untilRedisClock), `proxy.ts` (TcpProxy,
 * proxyToSuiteRedis), `tmp.ts` (tempDir), `figures.ts` (FULL, size, report, summary),
 * `child.ts` (child processes, ROOT). Tests import from there, not from here.
 */
export {
  CHAOS_WORKER,
  type Child,
  COMPILE_CACHE,
  type Line,
  ROOT,
  startChild,
  startWorkerChild,
} from "../support/child.ts"
export { FIGURES_FILE, FULL, report, size, summary } from "../support/figures.ts"
export { proxyToSuiteRedis, TcpProxy } from "../support/proxy.ts"
export { tempDir } from "../support/tmp.ts"
export { redisNow, until, untilRedisClock } from "../support/until.ts"
