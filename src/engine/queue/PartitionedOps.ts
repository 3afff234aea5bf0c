/**
 * The operator's calls of a partitioned queue, over the partitions' own ({@link makePartitionedOps}):
 * a listing reads the partitions one after the other (its cursor names the partition), drain,
 * clean and obliterate run in every partition and add up, and a call on one job goes to every
 * partition at once: the job is in exactly one, and the others refuse it as unknown, writing nothing.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { InvalidOptions, QueueHasActiveJobs, WrongJobState } from "../model/Errors.ts"
import type { JobPage, ListState, MovedFrom, OpsError, QueueOps } from "./OpsApi.ts"
import { checkListOptions, checkObliterateOptions, checkUpgradeOptions } from "./OpsChecks.ts"

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
const onJob = (each: ReadonlyArray<QueueOps>, f: (o: QueueOps) => Effect.Effect<MovedFrom, OpsError>) =>
  Effect.forEach(each, (o) => Effect.result(f(o)), { concurrency: "unbounded" }).pipe(
    Effect.flatMap((results): Effect.Effect<MovedFrom, OpsError> => {
      const found = results.find(
        (r) => Result.isSuccess(r) || !(r.failure instanceof WrongJobState) || r.failure.state !== "unknown",
      )
      const chosen = found ?? results[0]!
      return Result.isSuccess(chosen) ? Effect.succeed(chosen.success) : Effect.fail(chosen.failure)
    }),
  )

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
 * The operator's calls of the partitioned queue `name` of `each` partition's calls. A clean's
 * `limit` applies per partition.
 */
export const makePartitionedOps = (name: string, each: ReadonlyArray<QueueOps>): QueueOps => {
  const all = <A>(f: (o: QueueOps) => Effect.Effect<A, OpsError>) =>
    Effect.forEach(each, f, { concurrency: "unbounded" })
  return {
    getJobs: (state, options) =>
      Effect.gen(function* () {
        const o = yield* Effect.fromResult(checkListOptions(state, options))
        const at = yield* Effect.fromResult(splitCursor(o.cursor, each.length))
        return yield* pageFrom(each, o, at.part, at.inner)
      }),
    drain: (options) =>
      all((o) => o.drain(options)).pipe(
        Effect.map((r) => ({
          waiting: r.reduce((n, x) => n + x.waiting, 0),
          delayed: r.reduce((n, x) => n + x.delayed, 0),
          calls: r.reduce((n, x) => n + x.calls, 0),
        })),
      ),
    clean: (state, options) =>
      all((o) => o.clean(state, options)).pipe(
        Effect.map((r) => ({
          deleted: r.reduce((n, x) => n + x.deleted, 0),
          calls: r.reduce((n, x) => n + x.calls, 0),
        })),
      ),
    obliterate: (options) =>
      Effect.gen(function* () {
        const { force } = yield* Effect.fromResult(checkObliterateOptions(options))
        // refused in every partition unless none has an active job: count them all first
        const active = (yield* all((o) => o.getJobs("active", { count: 1 }))).reduce((n, p) => n + p.total, 0)
        if (active > 0 && !force) return yield* Effect.fail(new QueueHasActiveJobs({ queue: name, active }))
        const r = yield* all((o) => o.obliterate({ force }))
        return { active: r.reduce((n, x) => n + x.active, 0) }
      }),
    upgrade: (options) =>
      Effect.gen(function* () {
        yield* Effect.fromResult(checkUpgradeOptions(options))
        const r = yield* all((o) => o.upgrade(options))
        const waiting = r.find((x) => !x.done)
        return {
          queue: name,
          done: waiting === undefined,
          layout: waiting?.layout ?? r[0]!.layout,
          steps: r.reduce((n, x) => n + x.steps, 0),
          moved: r.reduce((n, x) => n + x.moved, 0),
          longestCallMs: Math.max(...r.map((x) => x.longestCallMs)),
          waitingFor: r.flatMap((x) => x.waitingFor),
        }
      }),
    promote: (id) => onJob(each, (o) => o.promote(id)),
    reschedule: (id, options) => onJob(each, (o) => o.reschedule(id, options)),
    retry: (id) => onJob(each, (o) => o.retry(id)),
    updatePayload: (id, payload) => onJob(each, (o) => o.updatePayload(id, payload)),
  }
}
