/**
 * `leaseq sweep`: one bounded pass over the named queues (or every queue under the
 * prefix): reclaim expired leases and promote due delayed jobs, `--limit` jobs per
 * script call, until nothing is left or `--max-ms` runs out.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { emptyTotals, SWEEP_DEAD_LISTED, type SweepTotals, sweepPass } from "../engine/admin/Sweeper.ts"
import type { SweepResult } from "../engine/calls/Commands.ts"
import type { RedisClient } from "../redis/Client.ts"
import { openQueue, targetQueues, withRedis } from "./CliSession.ts"
import type { CommonFlags } from "./Flags.ts"
import {
  CliFailure,
  ExitCode,
  type ExitCodeValue,
  type Io,
  makeProgress,
  oneLine,
  plural,
  table,
  writeJson,
  writeText,
} from "./Output.ts"

/** Flags of `leaseq sweep`. */
export interface SweepFlags extends CommonFlags {
  /** `--queue`, repeatable; absent: every queue under the prefix. */
  readonly queue?: ReadonlyArray<string>
  readonly limit: number
  readonly maxMs: number
}

/** What the pass did to one queue: the sweeper's totals, or why it could not sweep it. */
export interface QueueSweep extends SweepTotals {
  /** Why this queue could not be swept (the pass went on with the others). */
  readonly error?: string
}

/** The one JSON object `leaseq sweep --json` prints. */
export interface SweepReport {
  readonly prefix: string
  readonly ok: boolean
  readonly queues: ReadonlyArray<QueueSweep>
  readonly totals: {
    readonly queues: number
    readonly reclaimed: number
    readonly dead: number
    readonly promoted: number
    readonly dedupeDropped: number
    readonly trimmed: number
    /** Jobs the schedules' due ticks made. */
    readonly scheduled: number
    readonly calls: number
    readonly incomplete: boolean
    readonly failed: number
  }
  readonly elapsedMs: number
}

/** Sweep every queue in turn; a queue-level refusal is recorded and the pass goes on. */
const sweepAll = (client: RedisClient, flags: SweepFlags, io: Io) =>
  Effect.gen(function* () {
    const start = yield* Clock.currentTimeMillis
    const progress = makeProgress(io, flags.json !== true)
    const queues = yield* targetQueues(client, flags.prefix, flags.queue, progress)
    const results: QueueSweep[] = []
    for (const [i, queue] of queues.entries()) {
      const spent = (yield* Clock.currentTimeMillis) - start
      const onBatch = (t: SweepTotals, _last: SweepResult) =>
        progress.update(
          `sweeping ${queue} (${i + 1}/${queues.length}): reclaimed ${t.reclaimed}, promoted ${t.promoted}, ${plural(t.calls, "call")}`,
        )
      const result = yield* openQueue(client, flags.prefix, queue).pipe(
        // Every queue gets at least one call; later calls stop when the pass's budget is spent.
        Effect.flatMap((c) => sweepPass(c, { limit: flags.limit, maxMs: Math.max(0, flags.maxMs - spent), onBatch })),
        Effect.catch((e) =>
          e._tag === "RedisUnavailable"
            ? Effect.fail(new CliFailure({ exitCode: ExitCode.redis, reason: `sweeping queue ${queue}: ${e.message}` }))
            : Effect.succeed<QueueSweep>({ ...emptyTotals(queue), error: oneLine(e.message) }),
        ),
      )
      results.push(result)
    }
    progress.done()
    const elapsedMs = (yield* Clock.currentTimeMillis) - start
    return report(flags.prefix, results, elapsedMs)
  })

/** Sum the per-queue results. */
export const report = (prefix: string, queues: ReadonlyArray<QueueSweep>, elapsedMs: number): SweepReport => {
  const sum = (f: (q: QueueSweep) => number) => queues.reduce((n, q) => n + f(q), 0)
  const failed = queues.filter((q) => q.error !== undefined).length
  return {
    prefix,
    ok: failed === 0,
    queues,
    totals: {
      queues: queues.length,
      reclaimed: sum((q) => q.reclaimed),
      dead: sum((q) => q.dead),
      promoted: sum((q) => q.promoted),
      dedupeDropped: sum((q) => q.dedupeDropped),
      trimmed: sum((q) => q.trimmed),
      scheduled: sum((q) => q.scheduled),
      calls: sum((q) => q.calls),
      incomplete: queues.some((q) => q.incomplete),
      failed,
    },
    elapsedMs,
  }
}

/** The text form of a sweep report. */
export const formatSweep = (r: SweepReport): string => {
  if (r.queues.length === 0) return `no queues under prefix ${r.prefix}: nothing to sweep (${r.elapsedMs}ms)\n`
  const t = r.totals
  const head =
    `swept ${plural(t.queues, "queue")} under prefix ${r.prefix} in ${r.elapsedMs}ms: ` +
    `reclaimed ${t.reclaimed} (dead ${t.dead}), promoted ${t.promoted}, ${plural(t.calls, "call")}` +
    (t.dedupeDropped > 0 || t.trimmed > 0
      ? `; dropped ${t.dedupeDropped} expired dedupe keys, trimmed ${t.trimmed} finished jobs past the retention`
      : "") +
    (t.scheduled > 0 ? `; scheduled ${t.scheduled} jobs (due ticks)` : "") +
    (t.incomplete ? "; stopped at --max-ms with work left: run again" : "")
  const rows = r.queues.map((q) => [
    q.queue,
    q.reclaimed,
    q.dead,
    q.promoted,
    q.calls,
    q.error !== undefined ? `error: ${q.error}` : q.incomplete ? "incomplete" : "",
  ])
  return `${head}\n${table(["QUEUE", "RECLAIMED", "DEAD", "PROMOTED", "CALLS", "NOTE"], rows)}${r.queues.map(deadLines).join("")}`
}

/** The jobs a queue's sweep moved to dead: at most {@link SWEEP_DEAD_LISTED} by id, then a count of the rest. */
const deadLines = (q: QueueSweep): string => {
  if (q.dead === 0) return ""
  const listed = q.deadJobs.map((d) => `  ${d.id} (token ${d.token}): ${d.message}\n`).join("")
  const rest = q.dead - q.deadJobs.length
  return `${q.queue}: ${plural(q.dead, "job")} moved to dead (lease-expired):\n${listed}${rest > 0 ? `  … and ${rest} more (leaseq dead list --queue ${q.queue})\n` : ""}`
}

/**
 * Run `leaseq sweep`: print the report (text or one JSON object) and return the exit
 * code: 0 when the pass ran, 1 when a queue could not be swept (its reason on stderr).
 */
export const runSweep = (io: Io, url: string, flags: SweepFlags): Effect.Effect<ExitCodeValue, CliFailure> =>
  withRedis(url, (client) => sweepAll(client, flags, io)).pipe(
    Effect.map((r) => {
      if (flags.json) writeJson(io, r)
      else writeText(io, formatSweep(r))
      const failed = r.queues.filter((q) => q.error !== undefined)
      const first = failed[0]
      if (first === undefined) return ExitCode.ok
      const more = failed.length > 1 ? ` (and ${failed.length - 1} more failed: see the output)` : ""
      io.err(`leaseq: ${oneLine(`cannot sweep queue ${first.queue}: ${first.error}${more}`)}\n`)
      return ExitCode.redis
    }),
  )
