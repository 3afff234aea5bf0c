/**
 * `leaseq stats` and `leaseq verify`: read-only views of the queues under a prefix
 * (or those named by `--queue`). Each queue is opened (key types and layout checked)
 * before its first script call.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Commands, QueueStats } from "../engine/calls/Commands.ts"
import { isNoPerm } from "../metrics/Fleet.ts"
import { openQueue, targetQueues, withRedis } from "./CliSession.ts"
import { type CommonFlags, DEFAULT_RATE_MS } from "./Flags.ts"
import {
  type CliFailure,
  duration,
  ExitCode,
  type ExitCodeValue,
  type Io,
  makeProgress,
  plural,
  table,
  toFailure,
  writeJson,
  writeText,
} from "./Output.ts"

export { statsFlags } from "./Flags.ts"

/** Flags of `leaseq stats` and `leaseq verify`. */
export interface QueuesFlags extends CommonFlags {
  /** `--queue`, repeatable; absent: every queue under the prefix. */
  readonly queue?: ReadonlyArray<string>
}

/** Flags of `leaseq stats`. */
export interface StatsFlags extends QueuesFlags {
  /** Counters are read twice this many ms apart for the rates; 0: no rates. Default {@link DEFAULT_RATE_MS}. */
  readonly rateMs?: number
}

/** Flags of `leaseq verify`. */
export interface VerifyFlags extends QueuesFlags {
  /** The most violation lines listed per queue (the count is always complete). */
  readonly maxLines: number
  /** Entries (set members, hash fields) checked per script call. Default {@link DEFAULT_VERIFY_PAGE}. */
  readonly pageSize: number
}

/** Defaults of `--max-lines` and `--page-size` (those of the library's verify). */
export { DEFAULT_VERIFY_LINES, DEFAULT_VERIFY_PAGE } from "../engine/calls/Verify.ts"

/** What the text and JSON reports say about a verify of a queue that changes meanwhile. */
export const VERIFY_APPROXIMATE =
  "checked page by page: if jobs moved meanwhile, one may be missed or reported by mistake; run again to confirm"

/** The one JSON object `leaseq stats --json` prints. */
export interface StatsReport {
  readonly prefix: string
  readonly queues: ReadonlyArray<QueueStats>
  readonly totals: {
    readonly queues: number
    readonly waiting: number
    readonly active: number
    readonly expired: number
    readonly delayed: number
    readonly dead: number
    /** Jobs completed since each queue was created (`counters.completed`). */
    readonly completed: number
    /** Attempts that failed since each queue was created, retried or not (`counters.failed`). */
    readonly failed: number
    /** The largest `oldestWaitingAgeMs` of any queue. */
    readonly oldestWaitingAgeMs: number
  }
  /** Per queue (same order as `queues`): completions and failed attempts per second over `rateWindowMs`; absent with `--rate-ms 0`. */
  readonly rates?: ReadonlyArray<QueueRate>
  /** The ms between the two readings the rates come from. */
  readonly rateWindowMs?: number
}

/** A queue's rates over the window between two readings of its counters. */
export interface QueueRate {
  readonly queue: string
  readonly completedPerSec: number
  readonly failedPerSec: number
}

/** What `verify` found in one queue. */
export interface QueueVerify {
  readonly queue: string
  readonly jobs: number
  readonly violations: number
  /** `<kind> <id> <detail>`, at most `--max-lines` of them. */
  readonly lines: ReadonlyArray<string>
}

/** The one JSON object `leaseq verify --json` prints. */
export interface VerifyReport {
  readonly prefix: string
  readonly ok: boolean
  readonly violations: number
  readonly queues: ReadonlyArray<QueueVerify>
  /** Always true: verify reads a queue in pages, so a queue that changes meanwhile gives an approximate result. */
  readonly approximate: true
  /** {@link VERIFY_APPROXIMATE} */
  readonly note: string
}

/**
 * Run `f` on every target queue in turn, each opened first. A queue this Redis user may
 * not read (`NOPERM`: an ACL naming other queues) is set aside and reported on stderr;
 * the others are still read. `then` runs with the opened queues (the connection still open).
 */
const eachQueue = <A, E, B = ReadonlyArray<A>>(
  io: Io,
  url: string,
  flags: QueuesFlags,
  verb: string,
  f: (commands: Commands) => Effect.Effect<A, E>,
  then?: (read: ReadonlyArray<{ readonly a: A; readonly commands: Commands }>) => Effect.Effect<B, CliFailure>,
): Effect.Effect<B, CliFailure> =>
  withRedis(url, (client) =>
    Effect.gen(function* () {
      const progress = makeProgress(io, flags.json !== true)
      const queues = yield* targetQueues(client, flags.prefix, flags.queue, progress)
      const out: Array<{ readonly a: A; readonly commands: Commands }> = []
      const unreadable: string[] = []
      for (const [i, queue] of queues.entries()) {
        progress.update(`${verb} ${queue} (${i + 1}/${queues.length})`)
        const one = yield* openQueue(client, flags.prefix, queue).pipe(
          Effect.flatMap((commands) => f(commands).pipe(Effect.map((a) => ({ a, commands })))),
          Effect.catch((e) => (isNoPerm(e) ? Effect.succeed({ noPerm: e.reason }) : Effect.fail(e))),
          Effect.mapError((e) => toFailure(e, `${verb} queue ${queue}`)),
        )
        if ("a" in one) out.push(one)
        else unreadable.push(`${queue} (${one.noPerm})`)
      }
      progress.done()
      if (unreadable.length > 0) io.err(`leaseq: not readable by this Redis user, left out: ${unreadable.join(", ")}\n`)
      return then === undefined ? (out.map((o) => o.a) as unknown as B) : yield* then(out)
    }),
  )

/** Sum per-queue stats. */
export const statsReport = (
  prefix: string,
  queues: ReadonlyArray<QueueStats>,
  rates?: { readonly windowMs: number; readonly queues: ReadonlyArray<QueueRate> },
): StatsReport => {
  const sum = (f: (q: QueueStats) => number) => queues.reduce((n, q) => n + f(q), 0)
  return {
    prefix,
    queues,
    totals: {
      queues: queues.length,
      waiting: sum((q) => q.waiting),
      active: sum((q) => q.active),
      expired: sum((q) => q.expired),
      delayed: sum((q) => q.delayed),
      dead: sum((q) => q.dead),
      completed: sum((q) => q.counters.completed),
      failed: sum((q) => q.counters.failed),
      oldestWaitingAgeMs: queues.reduce((m, q) => Math.max(m, q.oldestWaitingAgeMs), 0),
    },
    ...(rates === undefined ? {} : { rates: rates.queues, rateWindowMs: rates.windowMs }),
  }
}

/** Per-second rates of one queue between two readings `windowMs` apart (never negative: a reset counter reads 0). */
export const queueRate = (before: QueueStats, after: QueueStats, windowMs: number): QueueRate => {
  const perSec = (a: number, b: number) =>
    windowMs > 0 ? Math.round((Math.max(0, b - a) * 10_000) / windowMs) / 10 : 0
  return {
    queue: after.queue,
    completedPerSec: perSec(before.counters.completed, after.counters.completed),
    failedPerSec: perSec(before.counters.failed, after.counters.failed),
  }
}

/** A queue's flow limits in a stats row: "100/1000ms", "max 5 active", "held 2s", or "-" for none. */
const limitsText = (l: QueueStats["limits"]): string => {
  const parts: string[] = []
  if (l.rateLimit !== null) parts.push(`${l.rateLimit.max}/${l.rateLimit.perMs}ms`)
  if (l.concurrency !== null) parts.push(`max ${l.concurrency} active`)
  if (l.heldMs > 0) parts.push(`held ${duration(l.heldMs)}`)
  return parts.length > 0 ? parts.join(", ") : "-"
}

/** The text form of a stats report. */
export const formatStats = (r: StatsReport): string => {
  if (r.queues.length === 0) return `no queues under prefix ${r.prefix}\n`
  const rows = r.queues.map((q, i) => {
    const rate = r.rates?.[i]
    return [
      q.paused ? `${q.queue} (paused)` : q.queue,
      q.waiting,
      q.active,
      q.expired,
      q.delayed,
      q.dead,
      q.counters.completed,
      q.counters.failed,
      rate === undefined ? "-" : rate.completedPerSec.toFixed(1),
      rate === undefined ? "-" : rate.failedPerSec.toFixed(1),
      q.waiting > 0 ? duration(q.oldestWaitingAgeMs) : "-",
      limitsText(q.limits),
    ]
  })
  const head = ["QUEUE", "WAITING", "ACTIVE", "EXPIRED", "DELAYED", "DEAD", "COMPLETED", "FAILED"]
  const tail = ["COMPLETED/S", "FAILED/S", "OLDEST WAITING", "LIMITS"]
  const window =
    r.rateWindowMs === undefined
      ? "rates: not measured (--rate-ms 0)"
      : `rates: per second over ${duration(r.rateWindowMs)} (--rate-ms)`
  return `${table([...head, ...tail], rows)}(COMPLETED, FAILED: since each queue was created; FAILED counts attempts, retried or not; ${window})\n`
}

/**
 * Run `leaseq stats`: counts per queue (EXPIRED = active leases past their deadline, not yet
 * swept), and, unless `--rate-ms 0`, the rates between two readings `--rate-ms` apart.
 */
export const runStats = (io: Io, url: string, flags: StatsFlags): Effect.Effect<ExitCodeValue, CliFailure> => {
  const windowMs = flags.rateMs ?? DEFAULT_RATE_MS
  return eachQueue(
    io,
    url,
    flags,
    "reading",
    (c) => Effect.zip(c.stats, Clock.currentTimeMillis),
    (read) =>
      Effect.gen(function* () {
        const first = read.map((r) => r.a[0])
        if (windowMs === 0 || read.length === 0) return statsReport(flags.prefix, first)
        yield* Effect.sleep(windowMs)
        const rates: QueueRate[] = []
        for (const { a, commands } of read) {
          const again = yield* commands.stats.pipe(
            Effect.mapError((e) => toFailure(e, `reading queue ${commands.keys.queue} again for its rates`)),
          )
          const at = yield* Clock.currentTimeMillis
          rates.push(queueRate(a[0], again, at - a[1]))
        }
        return statsReport(flags.prefix, first, { windowMs, queues: rates })
      }),
  ).pipe(
    Effect.map((r) => {
      if (flags.json) writeJson(io, r)
      else writeText(io, formatStats(r))
      return ExitCode.ok
    }),
  )
}

/** The text form of a verify report. */
export const formatVerify = (r: VerifyReport): string => {
  if (r.queues.length === 0) return `no queues under prefix ${r.prefix}\n`
  const lines: string[] = []
  for (const q of r.queues) {
    if (q.violations === 0) {
      lines.push(`${q.queue}: ok (${plural(q.jobs, "job")})`)
      continue
    }
    lines.push(`${q.queue}: ${plural(q.violations, "violation")} (${plural(q.jobs, "job")})`)
    for (const l of q.lines) lines.push(`  ${l}`)
    if (q.lines.length < q.violations) lines.push(`  … ${q.violations - q.lines.length} more (raise --max-lines)`)
  }
  lines.push(`(${r.note})`)
  return `${lines.join("\n")}\n`
}

/**
 * Run `leaseq verify`: every job in exactly one state, no orphan data, read in short
 * calls of `--page-size` entries. Exit 3 when a violation is found (listed on stdout,
 * counted on stderr).
 */
export const runVerify = (io: Io, url: string, flags: VerifyFlags): Effect.Effect<ExitCodeValue, CliFailure> =>
  eachQueue(io, url, flags, "verifying", (c) =>
    c.verify(flags.maxLines, flags.pageSize).pipe(Effect.map((v): QueueVerify => ({ queue: c.keys.queue, ...v }))),
  ).pipe(
    Effect.map((queues) => {
      const violations = queues.reduce((n, q) => n + q.violations, 0)
      const r: VerifyReport = {
        prefix: flags.prefix,
        ok: violations === 0,
        violations,
        queues,
        approximate: true,
        note: VERIFY_APPROXIMATE,
      }
      if (flags.json) writeJson(io, r)
      else writeText(io, formatVerify(r))
      if (violations === 0) return ExitCode.ok
      const bad = queues.filter((q) => q.violations > 0).map((q) => q.queue)
      io.err(`leaseq: verify found ${plural(violations, "violation")} in ${bad.join(", ")}\n`)
      return ExitCode.violation
    }),
  )
