/**
 * The operator's calls of one queue ({@link makeQueueOps}): the listing, drain, clean,
 * obliterate and the calls on one job, each script call bounded by the queue's
 * `callTimeoutMs` and by {@link OPS_CHUNK} jobs; the partitioned queue's are in
 * `PartitionedOps.ts`. Bad input fails with InvalidOptions before anything is sent.
 */
import * as Effect from "effect/Effect"
import type * as Result from "effect/Result"
import { upgradeQueue } from "../admin/LayoutUpgrade.ts"
import { farewellParents } from "../admin/Outbox.ts"
import { runScript } from "../calls/Commands.ts"
import { operationError } from "../calls/Replies.ts"
import { Scripts } from "../calls/Scripts.ts"
import { QueueClosed } from "../model/Errors.ts"
import type { QueueKeys } from "../model/Keys.ts"
import { newRequestId } from "../model/RequestId.ts"
import type { ListInput, OneJob, RawPage, RawRow } from "../scripts/OpsScripts.ts"
import type { ScriptDef } from "../scripts/Script.ts"
import { readOnly } from "./Adding.ts"
import { ulidTimeOf } from "./JobCommands.ts"
import { type ControlledQueue, validateJobId } from "./JobControl.ts"
import type { JobPage, ListedJob, MovedFrom, OpsError, QueueOps } from "./OpsApi.ts"
import {
  checkCleanOptions,
  checkCursor,
  checkDrainOptions,
  checkListOptions,
  checkObliterateOptions,
  checkRescheduleOptions,
  checkUpgradeOptions,
} from "./OpsChecks.ts"

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
