/**
 * One small adapter per face (the Promise `Queue`/`Worker`, the Effect `LeaseQueue`/
 * `LeaseWorker`) with the same operations, so the behaviour suite runs the same cases
 * against both. Each adapter uses its face natively: a Promise handler that throws or
 * waits for its signal; an Effect handler that fails or never ends (interruptible).
 * Everything made is closed by the test's cleanup, registered where it is made.
 */
import { Context, Effect, Exit, Scope } from "effect"
import { LeaseQueue, LeaseWorker } from "../../src/effect.ts"
import type { QueueStats } from "../../src/engine/calls/Commands.ts"
import type { VerifyOptions, VerifyResult } from "../../src/engine/calls/Verify.ts"
import type { FinishedJob } from "../../src/engine/events/QueueEvents.ts"
import type { GroupLimits, GroupPage } from "../../src/engine/queue/Groups.ts"
import type { Job, JobOptions } from "../../src/engine/queue/Job.ts"
import type { JobInfo } from "../../src/engine/queue/JobCommands.ts"
import type { FailOptions, ReservedJob } from "../../src/engine/queue/Manual.ts"
import type {
  CleanResult,
  CleanState,
  DrainResult,
  JobPage,
  ListOptions,
  ListState,
} from "../../src/engine/queue/OpsApi.ts"
import type { Retention } from "../../src/engine/queue/Retention.ts"
import type { ScheduleInfo, ScheduleSet, ScheduleWhen } from "../../src/engine/queue/Schedules.ts"
import type { WorkerState } from "../../src/engine/worker/Context.ts"
import { Queue, Worker } from "../../src/index.ts"
import { onCleanup } from "../support/cleanup.ts"
import { redisUrl } from "../support/redis.ts"

/** The operator's calls of a queue, the same for both faces. */
export interface OpsAdapter {
  readonly getJobs: (state: ListState, options?: ListOptions) => Promise<JobPage<Payload>>
  readonly promote: (id: string) => Promise<string>
  readonly reschedule: (id: string, options: { readonly delayMs: number }) => Promise<string>
  readonly retry: (id: string) => Promise<string>
  readonly updatePayload: (id: string, payload: Payload) => Promise<string>
  readonly drain: (options?: { readonly delayed?: boolean }) => Promise<DrainResult>
  readonly clean: (state: CleanState, options?: { readonly olderThanMs?: number }) => Promise<CleanResult>
  readonly obliterate: (options?: { readonly force?: boolean }) => Promise<{ readonly active: number }>
}

/** The group calls of a queue, the same for both faces (docs/flow-control.md). */
export interface GroupsAdapter {
  readonly setGroupLimits: (group: string | GroupLimits | null, limits?: GroupLimits | null) => Promise<void>
  readonly pauseGroup: (group: string) => Promise<boolean>
  readonly resumeGroup: (group: string) => Promise<boolean>
  readonly groups: (options?: { readonly cursor?: string; readonly count?: number }) => Promise<GroupPage>
}

/** A payload of the suite. */
export interface Payload {
  readonly n: number
}

/**
 * What a handler does with a job: succeed, fail, or run until its lease ends (then it
 * records the abort); a promise: wait for it, then succeed (whatever its lease did);
 * "bad-error": fail with an Error whose `message` getter throws; "map-result": return a Map.
 */
export type Plan = "ok" | "fail" | "bad-error" | "map-result" | "hang" | Promise<void>

/** What a worker saw, the same for both faces. */
export interface Seen {
  /** Each handler run: the job's id, attempt and payload. */
  readonly runs: Array<{ readonly id: string; readonly attempt: number; readonly token: number; readonly n: number }>
  readonly completed: string[]
  readonly failed: Array<{ readonly id: string; readonly willRetry: boolean }>
  readonly leaseLost: Array<{ readonly id: string; readonly token: number; readonly reason: string }>
  readonly dead: Array<{ readonly id: string; readonly reason: string }>
  /** Jobs the worker said were cancelled while their handler ran. */
  readonly cancelled: string[]
  /** Jobs whose handler was stopped (Promise: its signal aborted; Effect: its fiber interrupted). */
  readonly stopped: string[]
  readonly errors: unknown[]
  /** How many times the worker told `drained` (Promise: the event; Effect: `onDrained`). */
  drained: number
}

/** Worker options the suite uses (a subset both faces take). */
export interface WorkerOpts {
  readonly concurrency?: number
  readonly leaseMs?: number
  readonly heartbeatMs?: number
  /** Redis keeps a lease this much past the worker's own deadline (default max(1000, leaseMs / 10)). */
  readonly leaseGraceMs?: number
  readonly shutdownGraceMs?: number
  readonly backoff?: { readonly type: "fixed"; readonly delayMs: number }
  readonly sweep?: boolean | { readonly intervalMs: number }
  /** The worker's own Redis URL (e.g. a proxy that can cut it off); default the queue's. */
  readonly connection?: string
  /** A batch worker: the handler runs each job of a batch by its plan, settling each on its own. */
  readonly batch?: { readonly size: number; readonly waitMs?: number }
}

/** A started worker, as the suite sees it. */
export interface WorkerAdapter {
  readonly seen: Seen
  readonly state: () => Promise<WorkerState>
  readonly close: () => Promise<void>
  readonly pause: (options?: { readonly wait?: boolean }) => Promise<void>
  readonly resume: () => Promise<void>
}

/** Manual processing, as the suite sees it (both faces: reserve, then settle by id and token). */
export interface ManualAdapter {
  readonly reserve: (options?: { count?: number; leaseMs?: number }) => Promise<ReadonlyArray<ReservedJob<Payload>>>
  readonly complete: (id: string, token: number, result?: unknown) => Promise<void>
  readonly fail: (id: string, token: number, error: unknown, options?: FailOptions) => Promise<"retry" | "dead">
  readonly extend: (id: string, token: number, leaseMs: number) => Promise<number>
  readonly release: (id: string, token: number) => Promise<void>
}

/** A queue, as the suite sees it. */
export interface QueueAdapter {
  readonly manual: ManualAdapter
  readonly name: string
  readonly add: (payload: Payload, options?: JobOptions) => Promise<string>
  readonly addBulk: (jobs: ReadonlyArray<{ payload: Payload; options?: JobOptions }>) => Promise<ReadonlyArray<string>>
  readonly stats: () => Promise<QueueStats>
  readonly sweep: () => Promise<{ readonly reclaimed: number }>
  /** The queue's invariants (both faces take the same options). */
  readonly verify: (options?: unknown) => Promise<VerifyResult>
  readonly deadJobs: () => Promise<{ readonly total: number }>
  readonly retryDead: (ids: unknown) => Promise<number>
  readonly purgeDead: (ids: unknown) => Promise<number>
  readonly cancel: (id: string) => Promise<string | undefined>
  readonly changePriority: (id: string, priority: number) => Promise<string>
  readonly getJob: (id: string) => Promise<JobInfo<Payload> | undefined>
  readonly waitFor: (id: string, timeoutMs: number) => Promise<FinishedJob>
  readonly setEventRetention: (maxLen: number) => Promise<void>
  /** Schedules: create or replace, list, remove (payloads decoded). */
  readonly schedule: (name: string, when: ScheduleWhen, payload: Payload) => Promise<ScheduleSet>
  readonly schedules: () => Promise<ReadonlyArray<ScheduleInfo<Payload>>>
  readonly unschedule: (name: string) => Promise<boolean>
  /** The operator's calls (docs/operations.md), as each face offers them. */
  readonly ops: OpsAdapter
  /** The group calls, as each face offers them. */
  readonly groups: GroupsAdapter
  readonly setRetention: (policy: unknown) => Promise<void>
  readonly retention: () => Promise<Retention>
  readonly worker: (
    plan: (job: Omit<Job<Payload>, "log" | "dependencies">) => Plan,
    options?: WorkerOpts,
  ) => Promise<WorkerAdapter>
  /** Close the queue (Promise: `close()`; Effect: its scope closes). */
  readonly close: () => Promise<void>
}

/** Queue options the suite uses; its workers are given the same. */
export interface QueueOpts {
  /** Store the queue as this many partitions (sub-queues); default 1. */
  readonly partitions?: number
  /** Wait for replicas after adds and completes; default off. */
  readonly durability?: { readonly replicas?: number; readonly timeoutMs?: number }
}

/** One face: how to open a queue on it. */
export interface Face {
  readonly name: string
  readonly open: (queue: string, options?: QueueOpts) => Promise<QueueAdapter>
}

/** An Error whose `message` getter throws (security review F15). */
export const badError = (): Error =>
  Object.defineProperty(new Error("x"), "message", {
    get() {
      throw new Error("the message getter throws")
    },
  })

const newSeen = (): Seen => ({
  runs: [],
  completed: [],
  failed: [],
  leaseLost: [],
  dead: [],
  cancelled: [],
  stopped: [],
  errors: [],
  drained: 0,
})

const recordRun = (seen: Seen, job: Omit<Job<Payload>, "log" | "dependencies">) =>
  seen.runs.push({ id: job.id, attempt: job.attempt, token: job.token, n: job.payload.n })

/** The Promise face: `new Queue`, `new Worker`, events. */
export const promiseFace: Face = {
  name: "Promise (Queue, Worker)",
  open: async (name, queueOpts = {}) => {
    const queue = new Queue<Payload>(name, { connection: redisUrl(), ...queueOpts })
    onCleanup(() => queue.close())
    return {
      name,
      manual: {
        reserve: (o) => queue.reserve(o),
        complete: (id, token, result) => queue.complete(id, token, result),
        fail: (id, token, e, o) => queue.fail(id, token, e, o),
        extend: (id, token, ms) => queue.extend(id, token, ms),
        release: (id, token) => queue.release(id, token),
      },
      add: (p, o) => queue.add(p, o),
      addBulk: (jobs) => queue.addBulk(jobs),
      stats: () => queue.stats(),
      sweep: () => queue.sweep(),
      verify: (o) => queue.verify(o as VerifyOptions),
      deadJobs: () => queue.deadJobs(),
      retryDead: (ids) => queue.retryDead(ids as ReadonlyArray<string>),
      purgeDead: (ids) => queue.purgeDead(ids as ReadonlyArray<string>),
      cancel: (id) => queue.cancel(id),
      changePriority: (id, p) => queue.changePriority(id, p),
      getJob: (id) => queue.getJob(id),
      waitFor: (id, timeoutMs) => queue.waitFor(id, { timeoutMs }),
      setEventRetention: (n) => queue.setEventRetention(n),
      schedule: (s, when, payload) => queue.schedule(s, when, { payload }),
      schedules: () => queue.schedules(),
      unschedule: (s) => queue.unschedule(s),
      groups: {
        setGroupLimits: (g, l) => queue.setGroupLimits(g, l),
        pauseGroup: (g) => queue.pauseGroup(g),
        resumeGroup: (g) => queue.resumeGroup(g),
        groups: (o) => queue.groups(o),
      },
      ops: {
        getJobs: (s, o) => queue.getJobs(s, o),
        promote: (id) => queue.promote(id),
        reschedule: (id, o) => queue.reschedule(id, o),
        retry: (id) => queue.retry(id),
        updatePayload: (id, p) => queue.updatePayload(id, p),
        drain: (o) => queue.drain(o),
        clean: (s, o) => queue.clean(s, o),
        obliterate: (o) => queue.obliterate(o),
      },
      setRetention: (p) => queue.setRetention(p as never),
      retention: () => queue.retention(),
      close: () => queue.close(),
      worker: async (plan, options = {}) => {
        const seen = newSeen()
        const one = async (job: Omit<Job<Payload>, "log" | "dependencies">) => {
          recordRun(seen, job)
          const what = plan(job)
          if (what === "fail") throw new Error(`planned failure of ${job.id}`)
          if (what === "bad-error") throw badError()
          if (what === "map-result") return new Map([["n", job.payload.n]]) as never
          if (what instanceof Promise) {
            await what
            return job.payload.n
          }
          if (what === "hang") {
            await new Promise<void>((resolve) => {
              if (job.signal.aborted) resolve()
              job.signal.addEventListener("abort", () => resolve())
            })
            seen.stopped.push(job.id)
            throw new Error("stopped")
          }
          return job.payload.n
        }
        const { batch, ...rest } = options
        const given = { ...rest, ...queueOpts, connection: options.connection ?? redisUrl() }
        const worker = batch
          ? new Worker<Payload>(
              name,
              async (jobs) => {
                await Promise.all(jobs.map((job) => one(job).then((v) => job.complete(v), job.fail)))
              },
              { ...given, batch },
            )
          : new Worker<Payload>(name, one, given)
        onCleanup(() => worker.close())
        worker.on("completed", (job) => seen.completed.push(job.id))
        worker.on("failed", (job, _e, willRetry) => seen.failed.push({ id: job.id, willRetry }))
        worker.on("lease-lost", (job, reason) => seen.leaseLost.push({ id: job.id, token: job.token, reason }))
        worker.on("dead", (job, reason) => seen.dead.push({ id: job.id, reason }))
        worker.on("cancelled", (job) => seen.cancelled.push(job.id))
        worker.on("error", (e) => seen.errors.push(e))
        worker.on("drained", () => seen.drained++)
        await worker.ready
        return {
          seen,
          state: async () => worker.state,
          close: () => worker.close(),
          pause: (o) => worker.pause(o),
          resume: () => worker.resume(),
        }
      },
    }
  },
}

class Jobs extends Context.Service<Jobs, LeaseQueue.Service<Payload>>()("behaviour/Jobs") {}

/** Run `effect` in `scope` (closed by the test's cleanup). */
const inScope = <A, E>(scope: Scope.Closeable, effect: Effect.Effect<A, E, Scope.Scope>) =>
  Effect.runPromise(Scope.provide(scope)(effect))

/**
 * Run a service call: rejects with its typed failure; a defect (a throw the face did not
 * turn into a failure) rejects with an error saying so, so a case can tell the two apart.
 */
const failureOnly = async <A, E>(effect: Effect.Effect<A, E>): Promise<A> => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) return exit.value
  const failure = exit.cause.reasons.find((r) => r._tag === "Fail")
  if (failure !== undefined) throw failure.error
  throw new Error(`the Effect face died instead of failing: ${String(exit.cause)}`)
}

/** What an Effect handler does for `what` (see {@link Plan}). */
const effectRun = (
  seen: Seen,
  job: Omit<Job<Payload>, "log" | "dependencies">,
  what: Plan,
): Effect.Effect<number, Error> => {
  if (what === "fail") return Effect.fail(new Error(`planned failure of ${job.id}`))
  if (what === "bad-error") return Effect.fail(badError())
  if (what === "map-result") return Effect.succeed(new Map([["n", job.payload.n]]) as never)
  if (what instanceof Promise)
    return Effect.as(
      Effect.promise(() => what),
      job.payload.n,
    )
  if (what === "hang") return Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => seen.stopped.push(job.id))))
  return Effect.succeed(job.payload.n)
}

/** The Effect face: `LeaseQueue.make`, `LeaseWorker.make` in scopes, hooks. */
export const effectFace: Face = {
  name: "Effect (LeaseQueue, LeaseWorker)",
  open: async (name, queueOpts = {}) => {
    const scope = Effect.runSync(Scope.make())
    onCleanup(() => Effect.runPromise(Scope.close(scope, Exit.void)))
    // the options are passed as given (typed loosely): an option this face lacks is refused by its validation
    const options = { name, connection: redisUrl(), ...queueOpts } as LeaseQueue.Options<Payload>
    const queue = await inScope(scope, LeaseQueue.make<Payload>(options))
    return {
      name,
      manual: {
        reserve: (o) => failureOnly(queue.reserve(o)),
        complete: (id, token, result) => failureOnly(queue.complete(id, token, result)),
        fail: (id, token, e, o) => failureOnly(queue.fail(id, token, e, o)),
        extend: (id, token, ms) => failureOnly(queue.extend(id, token, ms)),
        release: (id, token) => failureOnly(queue.release(id, token)),
      },
      add: (p, o) => failureOnly(queue.add(p, o)),
      addBulk: (jobs) => failureOnly(queue.addBulk(jobs)),
      stats: () => failureOnly(queue.stats),
      sweep: () => failureOnly(queue.sweep()),
      verify: (o) => failureOnly(queue.verify(o as VerifyOptions)),
      deadJobs: () => failureOnly(queue.deadJobs()),
      retryDead: (ids) => failureOnly(queue.retryDead(ids as ReadonlyArray<string>)),
      purgeDead: (ids) => failureOnly(queue.purgeDead(ids as ReadonlyArray<string>)),
      cancel: (id) => failureOnly(queue.cancel(id)),
      changePriority: (id, p) => failureOnly(queue.changePriority(id, p)),
      getJob: (id) => failureOnly(queue.getJob(id)),
      waitFor: (id, timeoutMs) => failureOnly(queue.waitFor(id, { timeoutMs })),
      setEventRetention: (n) => failureOnly(queue.setEventRetention(n)),
      schedule: (s, when, payload) => failureOnly(queue.schedule(s, when, { payload })),
      schedules: () => failureOnly(queue.schedules),
      unschedule: (s) => failureOnly(queue.unschedule(s)),
      groups: {
        setGroupLimits: (g, l) => failureOnly(queue.setGroupLimits(g, l)),
        pauseGroup: (g) => failureOnly(queue.pauseGroup(g)),
        resumeGroup: (g) => failureOnly(queue.resumeGroup(g)),
        groups: (o) => failureOnly(queue.groups(o)),
      },
      ops: {
        getJobs: (s, o) => failureOnly(queue.getJobs(s, o)),
        promote: (id) => failureOnly(queue.promote(id)),
        reschedule: (id, o) => failureOnly(queue.reschedule(id, o)),
        retry: (id) => failureOnly(queue.retry(id)),
        updatePayload: (id, p) => failureOnly(queue.updatePayload(id, p)),
        drain: (o) => failureOnly(queue.drain(o)),
        clean: (s, o) => failureOnly(queue.clean(s, o)),
        obliterate: (o) => failureOnly(queue.obliterate(o)),
      },
      setRetention: (p) => failureOnly(queue.setRetention(p as never)),
      retention: () => failureOnly(queue.retention),
      close: () => Effect.runPromise(Scope.close(scope, Exit.void)),
      worker: async (plan, { connection, ...options } = {}) => {
        const seen = newSeen()
        const wscope = Effect.runSync(Scope.make())
        onCleanup(() => Effect.runPromise(Scope.close(wscope, Exit.void)))
        // an Effect worker uses its queue service's connection: another connection is another service
        const own =
          connection === undefined
            ? queue
            : await inScope(wscope, LeaseQueue.make<Payload>({ name, connection, ...queueOpts }))
        const run = <A, E>(e: Effect.Effect<A, E, Jobs>) => Effect.runPromise(Effect.provideService(e, Jobs, own))
        const record = (f: () => void) => Effect.sync(f)
        const hooks: LeaseWorker.Hooks<Payload, unknown, Error, never> = {
          onCompleted: (job) => record(() => seen.completed.push(job.id)),
          onFailed: (job, _cause, willRetry) => record(() => seen.failed.push({ id: job.id, willRetry })),
          onLeaseLost: (job, reason) => record(() => seen.leaseLost.push({ id: job.id, token: job.token, reason })),
          onDead: (job, reason) => record(() => seen.dead.push({ id: job.id, reason })),
          onCancelled: (job) => record(() => seen.cancelled.push(job.id)),
          onError: (e) => record(() => seen.errors.push(e)),
          onDrained: () =>
            record(() => {
              seen.drained++
            }),
        }
        const handle = await run(
          Scope.provide(wscope)(
            LeaseWorker.make(
              Jobs,
              // a batch worker runs each job of the batch by its plan and settles it on its own
              (options.batch
                ? (jobs: ReadonlyArray<LeaseWorker.BatchJob<Payload>>) =>
                    Effect.forEach(
                      jobs,
                      (job) =>
                        Effect.suspend(() => {
                          recordRun(seen, job)
                          return effectRun(seen, job, plan(job))
                        }).pipe(Effect.matchEffect({ onSuccess: job.complete, onFailure: job.fail })),
                      { concurrency: "unbounded", discard: true },
                    )
                : (job: LeaseWorker.Job<Payload>) =>
                    Effect.suspend(() => {
                      recordRun(seen, job)
                      return effectRun(seen, job, plan(job))
                    })) as never,
              { ...options, ...hooks } as never,
            ),
          ),
        )
        return {
          seen,
          state: () => Effect.runPromise(handle.state),
          close: () => Effect.runPromise(Scope.close(wscope, Exit.void)),
          pause: (o) => Effect.runPromise(handle.pause(o)),
          resume: () => Effect.runPromise(handle.resume),
        }
      },
    }
  },
}

/** Both faces, for `describe.each`. */
export const faces: ReadonlyArray<Face> = [promiseFace, effectFace]
