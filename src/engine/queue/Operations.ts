/**
 * The operator's calls of one queue ({@link makeQueueOps}): the listing, drain, clean,
 * obliterate and the calls on one job, each script call bounded by the queue's
 * `callTimeoutMs` and by {@link OPS_CHUNK} jobs; how each spreads over a partitioned queue
 * is {@link OPS_SPREAD}. Bad input fails with InvalidOptions before anything is sent.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { upgradeQueue } from "../admin/LayoutUpgrade.ts"
import { farewellParents } from "../admin/Outbox.ts"
import { runScript } from "../calls/Commands.ts"
import { operationError } from "../calls/Replies.ts"
import { Scripts } from "../calls/Scripts.ts"
import { InvalidOptions, QueueClosed, QueueHasActiveJobs, WrongJobState } from "../model/Errors.ts"
import type { QueueKeys } from "../model/Keys.ts"
import { newRequestId } from "../model/RequestId.ts"
import type { ListInput, OneJob, RawPage, RawRow } from "../scripts/OpsScripts.ts"
import type { ScriptDef } from "../scripts/Script.ts"
import { readOnly } from "./Adding.ts"
import { ulidTimeOf } from "./JobCommands.ts"
import { type ControlledQueue, validateJobId } from "./JobControl.ts"
import type { JobPage, ListedJob, ListState, MovedFrom, OpsError, QueueOps } from "./OpsApi.ts"
import {
  checkCleanOptions,
  checkCursor,
  checkDrainOptions,
  checkListOptions,
  checkObliterateOptions,
  checkRescheduleOptions,
  checkUpgradeOptions,
} from "./OpsChecks.ts"
import { type SpreadTable, sums } from "./Spread.ts"

/** Most jobs one drain or clean script call removes: each call stays short (bench/ops.ts measures it). */
export const OPS_CHUNK = 1000

/** `text` parsed as JSON, else the text itself. */
const jsonOr = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** The times a row's score gives: due (delayed), lease deadline (active), else finished. */
const timesOf = (state: ListInput["state"], r: RawRow): Pick<ListedJob, "dueAt" | "leaseDeadline" | "finishedAt"> => {
  if (r.score === "") return {}
  const score = Number(r.score)
  return state === "delayed" ? { dueAt: score } : state === "active" ? { leaseDeadline: score } : { finishedAt: score }
}

/** What a row carries beyond its id, state, payload and times: name, start, last error, result. */
const extrasOf = (
  state: ListInput["state"],
  r: RawRow,
): Pick<ListedJob, "name" | "startedAt" | "error" | "result" | "resultBytes"> => ({
  ...(r.name === undefined ? {} : { name: r.name }),
  ...(r.startedAt === undefined ? {} : { startedAt: r.startedAt }),
  ...(r.error === undefined ? {} : { error: jsonOr(r.error) as NonNullable<ListedJob["error"]> }),
  ...(r.result === undefined ? {} : { result: jsonOr(r.result) }),
  ...(state === "completed" ? { resultBytes: r.resultBytes } : {}),
})

/** A page as `job-list` answered it, as a {@link JobPage}. */
export const jobPageOf = (state: ListInput["state"], raw: RawPage): JobPage => {
  const jobs = raw.rows.map((r): ListedJob => {
    const used = r.failures + r.lostLeases
    return {
      id: r.id,
      state,
      payload: r.payload,
      addedAt: r.addedAt ?? ulidTimeOf(r.id),
      ...timesOf(state, r),
      attempt: state === "dead" ? Math.max(used, 1) : used + 1,
      maxAttempts: r.maxAttempts,
      failures: r.failures,
      lostLeases: r.lostLeases,
      ...extrasOf(state, r),
    }
  })
  return { jobs, total: raw.total, ...(raw.next === "" ? {} : { cursor: raw.next }) }
}

/** A checked value, or its InvalidOptions as a failure. */
const take = <A>(r: Result.Result<A, OpsError>): Effect.Effect<A, OpsError> => Effect.fromResult(r)

/** The job id, checked (InvalidOptions as a failure). */
const jobId = (id: unknown): Effect.Effect<string, OpsError> =>
  Effect.try({ try: () => validateJobId(id), catch: (e) => e as OpsError })

/** The operator's calls of one queue, on its bounded calls. `chunk` is the most jobs per drain or clean call. */
export const makeQueueOps = (core: ControlledQueue, chunk: number = OPS_CHUNK): QueueOps => {
  const { client } = core.calls
  const keys: QueueKeys = core.keys
  const open = <Out>(call: Effect.Effect<Out, OpsError>): Effect.Effect<Out, OpsError> =>
    Effect.suspend(() => (core.isClosed() ? Effect.fail(new QueueClosed({ queue: core.name })) : call))
  const run = <In, Out>(script: ScriptDef<In, Out>, input: In) => open(runScript(client, keys, script, input))
  /** A call on one job: a refusal naming the job's state, else the state it was in. */
  const onJob = <In extends OneJob>(script: ScriptDef<In, ReadonlyArray<unknown>>, input: In) =>
    run(script, input).pipe(
      Effect.flatMap((r): Effect.Effect<MovedFrom, OpsError> => {
        const refused = operationError(keys, r)
        return refused ? Effect.fail(refused) : Effect.succeed(r[1] as MovedFrom)
      }),
    )
  const drainFrom = (delayed: boolean) =>
    Effect.gen(function* () {
      let waiting = 0
      let delayedN = 0
      let calls = 0
      let target = Number.POSITIVE_INFINITY
      for (;;) {
        const r = yield* run(Scripts.drain, { delayed, limit: chunk })
        calls++
        if (calls === 1) target = r.waiting + r.delayed + r.left
        waiting += r.waiting
        delayedN += r.delayed
        // what was there at the first call, not what producers add meanwhile
        if (r.left === 0 || r.waiting + r.delayed === 0 || waiting + delayedN >= target) break
      }
      return { waiting, delayed: delayedN, calls }
    })
  return {
    getJobs: (state, options) =>
      Effect.gen(function* () {
        const o = yield* take(checkListOptions(state, options))
        const cursor = yield* take(checkCursor(o.state, o.cursor))
        const raw = yield* readOnly(run(Scripts.jobList, { ...o, cursor }))
        return jobPageOf(o.state, raw)
      }),
    drain: (options) => take(checkDrainOptions(options)).pipe(Effect.flatMap((o) => drainFrom(o.delayed))),
    clean: (state, options) =>
      Effect.gen(function* () {
        const o = yield* take(checkCleanOptions(state, options))
        let deleted = 0
        let calls = 0
        let target = o.limit
        for (;;) {
          const limit = Math.min(chunk, target - deleted)
          const r = yield* run(Scripts.clean, { state: o.state, olderThanMs: o.olderThanMs, limit })
          calls++
          if (calls === 1) target = Math.min(target, r.deleted + r.left)
          deleted += r.deleted
          if (r.deleted < limit || deleted >= target) break
        }
        return { deleted, calls }
      }),
    obliterate: (options) =>
      take(checkObliterateOptions(options)).pipe(
        // parents in other queues are told first: none waits for ever on this queue's children
        Effect.flatMap((o) =>
          open(farewellParents(client, keys, o.force)).pipe(Effect.andThen(run(Scripts.obliterate, o.force))),
        ),
        Effect.flatMap((r): Effect.Effect<{ readonly active: number }, OpsError> => {
          const refused = operationError(keys, r)
          return refused ? Effect.fail(refused) : Effect.succeed({ active: Number(r[1]) })
        }),
      ),
    upgrade: (options) => take(checkUpgradeOptions(options)).pipe(Effect.flatMap((o) => upgradeQueue(core.calls, o))),
    promote: (id) => jobId(id).pipe(Effect.flatMap((id) => onJob(Scripts.promote, { requestId: newRequestId(), id }))),
    reschedule: (id, options) =>
      Effect.gen(function* () {
        const valid = yield* jobId(id)
        const { delayMs } = yield* take(checkRescheduleOptions(options))
        return yield* onJob(Scripts.reschedule, { requestId: newRequestId(), id: valid, delayMs })
      }),
    retry: (id) => jobId(id).pipe(Effect.flatMap((id) => onJob(Scripts.jobRetry, { requestId: newRequestId(), id }))),
    updatePayload: (id, payload) =>
      jobId(id).pipe(Effect.flatMap((id) => onJob(Scripts.updatePayload, { requestId: newRequestId(), id, payload }))),
  }
}

/** A partitioned cursor: `<partition>~<the partition's cursor>`. */
const CURSOR = /^([0-9]{1,4})~(.*)$/s

/** The partition and its cursor a partitioned listing's cursor names ({ 0, "" } for the first page). */
const splitCursor = (
  cursor: unknown,
  partitions: number,
): Result.Result<{ part: number; inner: string }, InvalidOptions> => {
  if (cursor === undefined || cursor === "") return Result.succeed({ part: 0, inner: "" })
  const m = typeof cursor === "string" ? CURSOR.exec(cursor) : null
  if (m && Number(m[1]) < partitions) return Result.succeed({ part: Number(m[1]), inner: m[2]! })
  return Result.fail(
    new InvalidOptions({
      field: "cursor",
      value: cursor,
      reason: "must be the cursor of a previous getJobs page of this queue (omit it for the first page)",
    }),
  )
}

/** The one answer of the partition that has the job, else the refusal that names the job unknown. */
const holderOf = (results: ReadonlyArray<Result.Result<MovedFrom, OpsError>>): Effect.Effect<MovedFrom, OpsError> => {
  const found = results.find(
    (r) => Result.isSuccess(r) || !(r.failure instanceof WrongJobState) || r.failure.state !== "unknown",
  )
  const chosen = found ?? results[0]!
  return Result.isSuccess(chosen) ? Effect.succeed(chosen.success) : Effect.fail(chosen.failure)
}

/**
 * A page from partition `part` on (at its cursor `inner`): a partition read to its end hands
 * on to the next one's first page, and an empty one is skipped, so each call still reads one page.
 */
const pageFrom = (
  each: ReadonlyArray<QueueOps>,
  options: { readonly state: ListState; readonly count: number; readonly order: "asc" | "desc" },
  part: number,
  inner: string,
): Effect.Effect<JobPage, OpsError> =>
  Effect.gen(function* () {
    for (let i = part, cursor = inner; ; i++, cursor = "") {
      const page = yield* each[i]!.getJobs(options.state, { count: options.count, order: options.order, cursor })
      const last = i === each.length - 1
      if (page.cursor !== undefined) return { ...page, cursor: `${i}~${page.cursor}` }
      if (last) return page
      if (page.jobs.length > 0) return { ...page, cursor: `${i + 1}~` }
    }
  })

/**
 * The operator's calls over a partitioned queue: a listing reads the partitions one after
 * the other (its cursor names the partition), drain, clean and obliterate run in every
 * partition and add up (a clean's `limit` applies per partition), and a call on one job goes
 * to every partition at once: the job is in exactly one, and the others refuse it as
 * unknown, writing nothing.
 */
export const OPS_SPREAD: SpreadTable<QueueOps> = {
  getJobs: {
    over: "custom",
    run: (each) => (state, options) =>
      Effect.gen(function* () {
        const o = yield* take(checkListOptions(state, options))
        const at = yield* take(splitCursor(o.cursor, each.length))
        return yield* pageFrom(each, o, at.part, at.inner)
      }),
  },
  drain: { over: "every", merge: sums },
  clean: { over: "every", merge: sums },
  obliterate: {
    over: "custom",
    run: (each, at) => (options) =>
      Effect.gen(function* () {
        const { force } = yield* take(checkObliterateOptions(options))
        const all = <A>(f: (o: QueueOps) => Effect.Effect<A, OpsError>) =>
          Effect.forEach(each, f, { concurrency: "unbounded" })
        // refused in every partition unless none has an active job: count them all first
        const active = (yield* all((o) => o.getJobs("active", { count: 1 }))).reduce((n, p) => n + p.total, 0)
        if (active > 0 && !force) return yield* Effect.fail(new QueueHasActiveJobs({ queue: at.name, active }))
        const r = yield* all((o) => o.obliterate({ force }))
        return { active: r.reduce((n, x) => n + x.active, 0) }
      }),
  },
  upgrade: {
    over: "every",
    merge: (r, _, at) => {
      const waiting = r.find((x) => !x.done)
      return {
        queue: at.name,
        done: waiting === undefined,
        layout: waiting?.layout ?? r[0]!.layout,
        steps: r.reduce((n, x) => n + x.steps, 0),
        moved: r.reduce((n, x) => n + x.moved, 0),
        longestCallMs: Math.max(...r.map((x) => x.longestCallMs)),
        waitingFor: r.flatMap((x) => x.waitingFor),
      }
    },
  },
  promote: { over: "holder", pick: holderOf },
  reschedule: { over: "holder", pick: holderOf },
  retry: { over: "holder", pick: holderOf },
  updatePayload: { over: "holder", pick: holderOf },
}
