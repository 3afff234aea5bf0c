/**
 * `leaseq jobs` (a page of the jobs in one state), `leaseq drain`, `leaseq clean`,
 * `leaseq obliterate` (with `--yes`), `leaseq promote <id>`, `leaseq retry <id>`: the
 * operator's calls of one queue (`--queue`; a partitioned queue's name covers every
 * partition). Flags are checked before anything is sent; a refusal (a job in another state,
 * active jobs) is a one-line reason and exit 1, having changed nothing.
 */
import * as Effect from "effect/Effect"
import { LIST_STATES } from "../engine/model/CallDefaults.ts"
import type { JobPage, QueueOps } from "../engine/queue/OpsApi.ts"
import { openQueueApi, withRedis } from "./CliSession.ts"
import type { JobFlags } from "./Jobs.ts"
import { DEFAULT_LIST_STATE } from "./OpsFlags.ts"
import {
  type CliFailure,
  clip,
  ExitCode,
  type ExitCodeValue,
  escapeControl,
  type Io,
  table,
  toFailure,
  writeJson,
  writeText,
} from "./Output.ts"

type Run = Effect.Effect<ExitCodeValue, CliFailure>

/** Run `use` with the operator's calls of the queue `--queue` stands for, errors as one line under `context`. */
const onOps = <A>(url: string, flags: JobFlags, context: string, use: (ops: QueueOps) => Effect.Effect<A, unknown>) =>
  withRedis(url, (client) =>
    openQueueApi(client, flags.prefix, flags.queue).pipe(
      Effect.flatMap(({ api }) => use(api.ops)),
      Effect.mapError((e) => toFailure(e, context)),
    ),
  )

const when = (ms: number | undefined): string => (ms === undefined ? "" : new Date(ms).toISOString())

/**
 * A cursor as one shell word that pastes back as it is: as it is when it holds only
 * characters no shell treats specially (a job cursor is digits, or a score and a job id of
 * `[A-Za-z0-9._:-]`), else single-quoted with each `'` written `'\''`.
 */
export const shellWord = (text: string): string =>
  /^[A-Za-z0-9._:+,/-]+$/.test(text) ? text : `'${escapeControl(text).replaceAll("'", "'\\''")}'`

/** A row's outcome: the last error (reason and message) of a job not completed, a completed job's result. */
const outcomeOf = (j: JobPage["jobs"][number]): string =>
  j.error !== undefined
    ? `${j.error.reason ?? "failed"}: ${j.error.tag ?? j.error.name ?? "Error"}${j.error.message ? `: ${j.error.message}` : ""}`
    : j.result !== undefined
      ? JSON.stringify(j.result)
      : j.resultBytes
        ? `(result of ${j.resultBytes} bytes)`
        : ""

/**
 * The text form of a page: one row per job (every cell escaped by `table`), then the cursor.
 * `defaulted`: `--state` was not given, so the header says the state is the default.
 */
export const formatPage = (queue: string, state: string, page: JobPage, defaulted = false): string => {
  const rows = page.jobs.map((j) => [
    j.id,
    when(j.addedAt || undefined),
    when(j.dueAt ?? j.leaseDeadline ?? j.finishedAt),
    j.name ?? "",
    `${j.attempt}/${j.maxAttempts}`,
    clip(outcomeOf(j), 60),
    clip(j.payload ?? "", 80),
  ])
  const others = LIST_STATES.filter((s) => s !== state).join("|")
  const note = defaulted ? ` (the default state; --state ${others} for others)` : ""
  const head = `queue ${queue}: ${page.jobs.length} of ${page.total} ${state} jobs${note}\n`
  const next = page.cursor === undefined ? "" : `next page: --cursor ${shellWord(page.cursor)}\n`
  return (
    head +
    (rows.length > 0 ? table(["id", "added", "at", "name", "attempt", "error / result", "payload"], rows) : "") +
    next
  )
}

interface ListFlags extends JobFlags {
  /** Absent: {@link DEFAULT_LIST_STATE}. */
  readonly state?: string
  readonly count?: number
  readonly cursor?: string
  readonly order?: string
}

/** Run `leaseq jobs`. */
export const runJobs = (io: Io, url: string, flags: ListFlags): Run => {
  const state = flags.state ?? DEFAULT_LIST_STATE
  return onOps(url, flags, `listing ${state} jobs of queue ${flags.queue}`, (ops) =>
    ops.getJobs(state, { count: flags.count, cursor: flags.cursor, order: flags.order }),
  ).pipe(
    Effect.map((page) => {
      if (flags.json) writeJson(io, { queue: flags.queue, state, ...page })
      else writeText(io, formatPage(flags.queue, state, page, flags.state === undefined))
      return ExitCode.ok
    }),
  )
}

/** Run one of drain, clean, obliterate, promote, retry: `act` does it, `say` tells what it did. */
const runOp =
  <A>(context: string, act: (ops: QueueOps) => Effect.Effect<A, unknown>, say: (a: A) => string) =>
  (io: Io, url: string, flags: JobFlags): Run =>
    onOps(url, flags, context, act).pipe(
      Effect.map((a) => {
        if (flags.json) writeJson(io, { queue: flags.queue, ...(typeof a === "object" ? a : { was: a }) })
        else writeText(io, `queue ${flags.queue}: ${say(a)}\n`)
        return ExitCode.ok
      }),
    )

/** Run `leaseq drain`. */
export const runDrain = (io: Io, url: string, o: JobFlags & { readonly delayed?: boolean }): Run =>
  runOp(
    `draining queue ${o.queue}`,
    (ops) => ops.drain({ delayed: o.delayed === true }),
    (r: { waiting: number; delayed: number; calls: number }) =>
      `removed ${r.waiting} waiting and ${r.delayed} delayed jobs in ${r.calls} calls`,
  )(io, url, o)

/** Run `leaseq clean`. */
export const runClean = (
  io: Io,
  url: string,
  o: JobFlags & { readonly state: string; readonly olderThanMs?: number; readonly limit?: number },
): Run =>
  runOp(
    `cleaning ${o.state} jobs of queue ${o.queue}`,
    (ops) => ops.clean(o.state, { olderThanMs: o.olderThanMs, limit: o.limit }),
    (r: { deleted: number; calls: number }) => `deleted ${r.deleted} ${o.state} jobs in ${r.calls} calls`,
  )(io, url, o)

/** Run `leaseq obliterate` (its `--yes` already given). */
export const runObliterate = (io: Io, url: string, o: JobFlags & { readonly force?: boolean }): Run =>
  runOp(
    `obliterating queue ${o.queue}`,
    (ops) => ops.obliterate({ force: o.force === true }),
    (r: { active: number }) => `deleted (${r.active} active jobs had their leases revoked)`,
  )(io, url, o)

/** Run `leaseq promote <id>` or `leaseq retry <id>`. */
export const runMove = (io: Io, url: string, name: "promote" | "retry", id: string, o: JobFlags): Run =>
  runOp(
    `${name} job ${id} of queue ${o.queue}`,
    (ops) => (name === "promote" ? ops.promote(id) : ops.retry(id)),
    (was) => `job ${id} ${name === "promote" ? "promoted" : "queued again"} (it was ${was})`,
  )(io, url, o)
