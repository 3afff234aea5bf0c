/**
 * leaseq benchmark: leaseq, BullMQ and Bee-Queue side by side on one Redis.
 *
 *   node bench/main.ts [--quick] [--only <id-prefix>[,…]] [--libs leaseq,bullmq,beequeue]
 *
 * Starts a throw-away redis-server on 127.0.0.1 (or uses REDIS_URL, which it
 * FLUSHALLs between runs). For every scenario it runs the libraries in turn —
 * leaseq, bullmq, beequeue, repeat — with the same payload and concurrency,
 * several repetitions, FLUSHALL before each run, and reports median and
 * min–max. Writes one record, bench/results/<date>-<mode>-<commit>.json (see
 * bench/README.md), and after a full run docs/performance.svg. The last line
 * printed is the headline: leaseq against BullMQ.
 */
import { writeFileSync } from "node:fs"
import { loadavg } from "node:os"
import { join, relative } from "node:path"
import { renderChart } from "./chart.ts"
import { type BenchConfig, parseConfig } from "./config.ts"
import { type BenchContext, openContext } from "./context.ts"
import { ROOT } from "./paths.ts"
import { buildResult, table, writeResult } from "./report.ts"
import { SECTIONS } from "./scenarios/index.ts"
import { targetsTable } from "./targets.ts"

const log = (line: string): void => {
  process.stdout.write(`${line}\n`)
}

/** Run every section of the registry; returns the seconds each took. */
const runSections = async (ctx: BenchContext): Promise<Record<string, number>> => {
  const sectionSeconds: Record<string, number> = {}
  for (const section of SECTIONS) {
    const t0 = Date.now()
    await section.run(ctx)
    sectionSeconds[section.name] = Math.round((Date.now() - t0) / 100) / 10
  }
  const text = Object.entries(sectionSeconds)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ")
  log(`sections (s): ${text}`)
  return sectionSeconds
}

const main = async (): Promise<void> => {
  let config: BenchConfig
  try {
    config = parseConfig(process.argv.slice(2))
  } catch (e) {
    process.stderr.write(`bench: ${(e as Error).message}\n`)
    process.exit(2)
  }
  const started = Date.now()
  const watchdog = setTimeout(() => {
    log(`benchmark: gave up after ${config.watchdogMinutes} minutes`)
    process.exit(1)
  }, config.watchdogMinutes * 60_000)
  watchdog.unref()

  const ctx = await openContext(config, log)
  let sectionSeconds: Record<string, number>
  try {
    sectionSeconds = await runSections(ctx)
  } finally {
    await ctx.close()
  }

  ctx.results.summarize()
  const seconds = Math.round((Date.now() - started) / 1000)
  const result = buildResult(ctx, { seconds, sectionSeconds, loadAtEnd: loadavg()[0] ?? 0 })
  const path = writeResult(result)
  if (!config.partial && !config.quick) writeFileSync(join(ROOT, "docs", "performance.svg"), renderChart(result))
  clearTimeout(watchdog)

  log("")
  for (const line of table(config.libs, ctx.results)) log(line)
  log("")
  log("targets:")
  for (const line of targetsTable(result.targets)) log(line)
  log("")
  const partial = config.partial ? " (partial run: --only/--libs)" : ""
  log(`${config.mode} run: ${seconds} s; results in ${relative(ROOT, path)}${partial}`)
  log(result.headline)
}

await main()
// Everything is written. Bee-Queue 2.0 keeps the process alive for about a minute
// after closing a worker whose handlers never settled (complete-cost scenario).
process.exit(0)
