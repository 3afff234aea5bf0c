/**
 * A fake command layer for unit tests of the worker engine: an object with the commands
 * the worker calls (reserve, extend, complete, fail, release, sweep), which records every
 * call and answers from a script the test writes. It is not a fake of Redis: it keeps no
 * queue, moves no job between states, and answers only what the test scripted
 * (`ready` jobs for the next reserve calls; an `on.<op>` override for any other answer).
 *
 * With it, `startWorker` runs unchanged (its loops, slots, riders, leases, shutdown)
 * under Effect's TestClock, with no server, in milliseconds.
 */
import { Clock, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { expect, onTestFinished, vi } from "vitest"
import type { Commands, LeaseRef, Reservation, ScriptFailure, SweepResult } from "../../../src/engine/calls/Commands.ts"
import { markerArgs } from "../../../src/engine/calls/Marker.ts"
import { redisError } from "../../../src/engine/calls/Replies.ts"
import { InvalidPayload } from "../../../src/engine/model/Errors.ts"
import { queueKeys } from "../../../src/engine/model/Keys.ts"
import type { Job } from "../../../src/engine/queue/Job.ts"
import type { WorkerHandle, WorkerProgram } from "../../../src/engine/worker/Context.ts"
import { startWorker } from "../../../src/engine/worker/Worker.ts"
import { resolveWorkerOptions, type WorkerSettings } from "../../../src/engine/worker/WorkerOptions.ts"
import type { RedisClient } from "../../../src/redis/Client.ts"

/** The commands the worker engine calls: the part of {@link Commands} the fake implements. */
export type WorkerCommands = Pick<
  Commands,
  | "keys"
  | "client"
  | "outbox"
  | "peer"
  | "reserve"
  | "markerThenReserve"
  | "extend"
  | "complete"
  | "fail"
  | "release"
  | "sweep"
  | "workerLeave"
>

type Args<K extends keyof WorkerCommands> = WorkerCommands[K] extends (...a: infer P) => unknown ? P : never
type Reply<K extends keyof WorkerCommands> = WorkerCommands[K] extends (...a: never[]) => infer R ? R : never

/** One call the worker made, with its arguments. */
export type Call =
  | {
      readonly op: "reserve"
      /** The call's request id (a re-send carries the same). */
      readonly requestId?: string | undefined
      readonly count: number
      readonly leaseMs: number
      readonly completes: ReadonlyArray<LeaseRef>
    }
  | { readonly op: "extend"; readonly leases: ReadonlyArray<LeaseRef>; readonly leaseMs: number }
  /** An extend call with no lease, carrying only the worker's registry record (at start, or idle). */
  | { readonly op: "register"; readonly workerId: string }
  | { readonly op: "complete"; readonly items: ReadonlyArray<LeaseRef> }
  | {
      readonly op: "fail"
      readonly lease: LeaseRef
      readonly delayMs: number
      readonly mode: string
      readonly error: string
    }
  | { readonly op: "release"; readonly leases: ReadonlyArray<LeaseRef> }
  | { readonly op: "sweep"; readonly limit: number }
  /** A marker wait; `withReserve`: the count of the reserve call sent behind it, if one was. */
  | {
      readonly op: "block"
      readonly timeoutMs: number
      readonly withReserve?: number
      /** The request id of the reserve sent behind the wait. */
      readonly reserveId?: string
    }

/** A job the next reserve call hands out. */
export interface ScriptedJob {
  readonly id: string
  readonly payload?: string
  readonly attempt?: number
  readonly maxAttempts?: number
}

const refs = (xs: ReadonlyArray<LeaseRef>): LeaseRef[] => xs.map((l) => ({ id: l.id, token: l.token }))

/** A client for what the fake does not script: every command rejects, naming itself. */
const inertClient = (describe: string, block?: (args: ReadonlyArray<string | number>) => Promise<unknown>) => {
  const no = (what: string) => () => Promise.reject(new Error(`fake ${describe}: ${what} is not scripted`))
  const client: RedisClient = {
    script: no("script"),
    command: no("command"),
    duplicate: () => client,
    masters: () => Promise.resolve([]),
    scriptThenWait: no("scriptThenWait"),
    isCluster: false,
    status: () => "ready",
    describe,
    writable: () => true,
    whenWritable: () => Promise.resolve(true),
    commandWithin: (name, args) => (name === "BZPOPMIN" && block ? block(args) : no(name)()),
    close: () => Promise.resolve(),
    disconnect: () => {},
  }
  return client
}

/** Make a fake command layer for queue `queue` (keys are built, never sent anywhere). */
export const makeFake = (queue = "unit") => {
  const keys = queueKeys(queue)
  const calls: Call[] = []
  const ready: ScriptedJob[] = []
  let nextToken = 0
  /** Wakes a marker wait in progress (a `ready` push or close ends it). */
  let wakeBlock: (() => void) | undefined
  /** Error replies the next marker waits get at once (Redis refusing the wait, e.g. BUSY), in order. */
  const blockRefusals: Error[] = []
  const blocking = inertClient("blocking", (args) => {
    calls.push({ op: "block", timeoutMs: Math.round(Number(args[1]) * 1000) })
    const refusal = blockRefusals.shift()
    if (refusal !== undefined) return Promise.reject(refusal)
    return new Promise<unknown>((resolve) => {
      wakeBlock = () => resolve(null)
    })
  })
  const ring = () => {
    const w = wakeBlock
    wakeBlock = undefined
    w?.()
  }
  const origClose = blocking.close
  Object.assign(blocking, {
    close: (t?: number) => {
      ring()
      return origClose(t)
    },
  })

  /** The default answers: reserve hands out `ready` jobs; every lease is held; fail retries. */
  const defaults = {
    reserve: (...[count, _lease, _promote, completes = []]: Args<"reserve">): Reply<"reserve"> => {
      const jobs: Reservation[] = ready.splice(0, count).map((j) => ({
        id: j.id,
        token: ++nextToken,
        deadline: 0,
        attempt: j.attempt ?? 1,
        maxAttempts: j.maxAttempts ?? 3,
        payload: j.payload ?? JSON.stringify({ id: j.id }),
        timeoutMs: 0,
      }))
      return Effect.succeed({ jobs, nextDueMs: -1, completed: completes.map(() => true) })
    },
    extend: (...[leases]: Args<"extend">): Reply<"extend"> => Effect.succeed(leases.map(() => 1)),
    complete: (...[items]: Args<"complete">): Reply<"complete"> => Effect.succeed(items.map(() => true)),
    fail: (...[, options]: Args<"fail">): Reply<"fail"> =>
      Effect.succeed(options.mode === "retry" ? ("retry" as const) : ("dead" as const)),
    release: (...[leases]: Args<"release">): Reply<"release"> => Effect.succeed(leases.map(() => true)),
    sweep: (..._: Args<"sweep">): Reply<"sweep"> => Effect.succeed(emptySweep),
    workerLeave: (..._: Args<"workerLeave">): Reply<"workerLeave"> => Effect.succeed(true),
  }
  /** Per-command overrides the test sets; each may delegate to `defaults`. */
  const on: { -readonly [K in keyof typeof defaults]?: (typeof defaults)[K] } = {}

  const commands: WorkerCommands = {
    keys,
    client: inertClient("client"),
    // no flows in the fake: nothing pokes the outbox, the worker's outbox loop waits for ever
    outbox: { poke: () => undefined, wait: Effect.never, take: () => [] },
    // nor a fan-in peer: completes ride reserve calls as without flows
    peer: { learn: () => undefined, current: () => undefined },
    reserve: (...a) =>
      Effect.suspend(() => {
        calls.push({
          op: "reserve",
          requestId: a[4]?.requestId,
          count: a[0],
          leaseMs: a[1],
          completes: refs(a[3] ?? []),
        })
        return (on.reserve ?? defaults.reserve)(...a)
      }),
    // the marker wait, with the reserve sent behind it answered once the wait ends (as Redis does)
    markerThenReserve: (blocking, wait, input) =>
      Effect.sync(() => {
        const reply = blocking.commandWithin("BZPOPMIN", markerArgs(keys, wait.timeoutMs), wait.deadlineMs)
        reply.catch(() => {})
        const i = calls.length - 1
        if (calls[i]?.op === "block") calls[i] = { ...calls[i], withReserve: input.count, reserveId: input.requestId }
        const woke = Effect.tryPromise({ try: () => reply, catch: (e) => redisError("BZPOPMIN", e) })
        const { count, leaseMs, promoteLimit, completes } = input
        const reserved = Effect.flatMap(woke, () => commands.reserve(count, leaseMs, promoteLimit, completes, input))
        return { woke, reserved }
      }),
    extend: (...a) =>
      Effect.suspend(() => {
        const worker = a[2]
        calls.push(
          a[0].length === 0 && worker !== undefined
            ? { op: "register", workerId: worker.id }
            : { op: "extend", leases: refs(a[0]), leaseMs: a[1] },
        )
        return (on.extend ?? defaults.extend)(...a)
      }),
    complete: (...a) =>
      Effect.suspend(() => {
        calls.push({ op: "complete", items: refs(a[0]) })
        return (on.complete ?? defaults.complete)(...a)
      }),
    fail: (...a) =>
      Effect.suspend(() => {
        const { delayMs, mode, error } = a[1]
        calls.push({ op: "fail", lease: { id: a[0].id, token: a[0].token }, delayMs, mode, error })
        return (on.fail ?? defaults.fail)(...a)
      }),
    release: (...a) =>
      Effect.suspend(() => {
        calls.push({ op: "release", leases: refs(a[0]) })
        return (on.release ?? defaults.release)(...a)
      }),
    sweep: (...a) =>
      Effect.suspend(() => {
        calls.push({ op: "sweep", limit: a[0] })
        return (on.sweep ?? defaults.sweep)(...a)
      }),
    // the worker's registry record leaving at close (not recorded: no test scripts it)
    workerLeave: (...a) => (on.workerLeave ?? defaults.workerLeave)(...a),
  }

  return {
    keys,
    /** The fake, typed as the engine's commands (the engine calls only the {@link WorkerCommands} part). */
    commands: commands as unknown as Commands,
    blocking,
    blockRefusals,
    calls,
    defaults,
    on,
    /** Script jobs for the next reserve calls, and wake a marker wait (as an add does). */
    ready: (...jobs: ReadonlyArray<ScriptedJob | string>) => {
      for (const j of jobs) ready.push(typeof j === "string" ? { id: j } : j)
      ring()
    },
    /** Calls of one kind, in order. */
    of: <O extends Call["op"]>(op: O) => calls.filter((c): c is Extract<Call, { op: O }> => c.op === op),
  }
}

/** A fake command layer. */
export type Fake = ReturnType<typeof makeFake>

const emptySweep: SweepResult = {
  reclaimed: 0,
  dead: 0,
  promoted: 0,
  dedupeDropped: 0,
  trimmed: 0,
  more: false,
  nextDeadlineMs: -1,
  deadJobs: [],
}

/** A script call's failure as the engine classifies it, for `message` as Redis's error reply. */
export const replyError = (message: string): ScriptFailure =>
  redisError("fake script", Object.assign(new Error(message), { name: "ReplyError" })) as ScriptFailure

/** What the worker told its hooks, in order. */
export interface Events {
  readonly completed: string[]
  readonly failed: Array<{ readonly id: string; readonly willRetry: boolean; readonly error: unknown }>
  readonly leaseLost: Array<{ readonly id: string; readonly token: number; readonly why: string }>
  readonly dead: Array<{ readonly id: string; readonly reason: string }>
  readonly errors: unknown[]
}

/** A payload's JSON text decoded, or an {@link InvalidPayload} thrown (both programs below decode with it). */
const decodeJson = <A>(text: string): A => {
  try {
    return JSON.parse(text) as A
  } catch {
    throw new InvalidPayload({ field: "payload", reason: `not JSON: ${text}` })
  }
}

/** A program whose payload is JSON and whose hooks record into the returned events. */
export const program = <A = { readonly id: string }>(
  handler: WorkerProgram<A>["handler"],
): { readonly program: WorkerProgram<A>; readonly events: Events } => {
  const events: Events = { completed: [], failed: [], leaseLost: [], dead: [], errors: [] }
  return {
    events,
    program: {
      decode: (text) =>
        Effect.try({
          try: () => decodeJson<A>(text),
          catch: (e) => (e instanceof InvalidPayload ? e : new InvalidPayload({ field: "payload", reason: String(e) })),
        }),
      handler,
      hooks: {
        completed: (job) => events.completed.push(job.id),
        failed: (job, error, willRetry) => events.failed.push({ id: job.id, willRetry, error }),
        leaseLost: (job, why) => events.leaseLost.push({ id: job.id, token: job.token, why }),
        dead: (job, reason) => events.dead.push({ id: job.id, reason }),
        error: (e) => events.errors.push(e),
      },
    },
  }
}

/**
 * A Promise-face program: the same hooks, and a plain `run` (value or Promise) the engine
 * runs without a fiber (PlainRun.ts). Its Effect `handler` is never used for a job without
 * a timeout; it fails the test if it is.
 */
export const plainProgram = <A = { readonly id: string }>(
  run: (job: Job<A>) => unknown,
): { readonly program: WorkerProgram<A>; readonly events: Events } => {
  const base = program<A>(() => Effect.die(new Error("the fiber path ran a plain job")))
  return { events: base.events, program: { ...base.program, plain: { decode: decodeJson<A>, run } } }
}

/** A program for JSON payloads `{ id }` and the events its hooks record. */
export type Made = ReturnType<typeof program<{ readonly id: string }>>

/** A program whose handler keeps the signal of the last job it started, read as the job starts. */
export type Watched = Made & { readonly signal: () => AbortSignal | undefined }

/**
 * The two ways the worker runs a job, for a scenario that must hold on both: `fiber`, an
 * Effect handler in a fiber of its own (RunJob.ts → Settle.ts), and `plain`, a plain
 * function run without one (PlainRun.ts). Each makes its program from the same job bodies;
 * use it as `describe.each(paths)("… ($path)", (path) => …)`.
 */
export interface Path {
  readonly path: "fiber" | "plain"
  /** A handler that ends at once (`Effect.void`; a resolved promise). */
  readonly ends: () => Made
  /**
   * A handler that ends when `until` settles and not before, deaf to its abort (an
   * uninterruptible wait; a promise that ignores its signal).
   */
  readonly endsWith: (until: Promise<unknown>) => Watched
  /**
   * A handler that runs until its lease ends (interrupted; its promise rejects when its
   * signal aborts), and whether it was ended so.
   */
  readonly untilAborted: () => Watched & { readonly aborted: () => boolean }
}

/** The fiber path and the plain path (see {@link Path}). */
export const paths: ReadonlyArray<Path> = [
  {
    path: "fiber",
    ends: () => program(() => Effect.void),
    endsWith: (until) => {
      let signal: AbortSignal | undefined
      const made = program((job) =>
        Effect.suspend(() => {
          signal = job.signal
          return Effect.uninterruptible(Effect.promise(() => until))
        }),
      )
      return { ...made, signal: () => signal }
    },
    untilAborted: () => {
      let signal: AbortSignal | undefined
      let aborted = false
      const made = program((job) =>
        Effect.suspend(() => {
          signal = job.signal
          return Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => (aborted = true))))
        }),
      )
      return { ...made, signal: () => signal, aborted: () => aborted }
    },
  },
  {
    path: "plain",
    ends: () => plainProgram(() => Promise.resolve()),
    endsWith: (until) => {
      let signal: AbortSignal | undefined
      const made = plainProgram((job) => {
        signal = job.signal
        return until
      })
      return { ...made, signal: () => signal }
    },
    untilAborted: () => {
      let signal: AbortSignal | undefined
      let aborted = false
      const made = plainProgram((job) => {
        const s = job.signal
        signal = s
        return new Promise<void>((_, reject) => {
          s.addEventListener("abort", () => {
            aborted = true
            reject(s.reason)
          })
        })
      })
      return { ...made, signal: () => signal, aborted: () => aborted }
    },
  },
]

/** A promise and the functions that settle it. */
export const gate = <A = void>() => {
  let resolve!: (a: A) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<A>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** Worker settings from options (validated as the faces do); no in-process sweep unless asked. */
export const settings = (options: Record<string, unknown> = {}, rideAlong?: boolean): WorkerSettings => ({
  ...resolveWorkerOptions({ leaseMs: 3_000, sweep: false, ...options }),
  ...(rideAlong === undefined ? {} : { rideAlong }),
})

/**
 * Make the engine's monotonic clock (`performance.now`, read by the lease fence and the
 * ack deadlines) read the TestClock, so `TestClock.adjust` moves both together.
 */
export const virtualMonotonic = Effect.gen(function* () {
  const clock = yield* Clock.clockWith(Effect.succeed)
  const spy = vi.spyOn(performance, "now").mockImplementation(() => clock.currentTimeMillisUnsafe())
  onTestFinished(() => spy.mockRestore())
})

/** Let every fiber that can run, run (the TestClock does not move). */
export const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow
})

/** Advance the TestClock by `ms` in steps of `step` ms, letting fibers run after each. */
export const advance = (ms: number, step = 100) =>
  Effect.gen(function* () {
    for (let t = 0; t < ms; t += step) {
      yield* TestClock.adjust(Math.min(step, ms - t))
      yield* settle
    }
  })

/** Wait (on the TestClock, in steps) until `cond` holds; fails the test after `maxMs` of virtual time. */
export const until = (cond: () => boolean, what: string, maxMs = 120_000, step = 100) =>
  Effect.gen(function* () {
    yield* settle
    for (let t = 0; !cond(); t += step) {
      if (t >= maxMs) return yield* Effect.die(new Error(`not reached within ${maxMs} virtual ms: ${what}`))
      yield* TestClock.adjust(step)
      yield* settle
    }
  })

/**
 * Start a worker on the fake and close it when the test's scope ends (cleanup registered
 * where the worker is made). Closing runs the TestClock forward until close returns.
 */
export const start = <A>(fake: Fake, s: WorkerSettings, p: WorkerProgram<A>) =>
  Effect.acquireRelease(startWorker(fake.commands, fake.blocking, s, p), (h) => closeWorker(h))

/** Close `h`, moving the TestClock until close returns (its phases wait on timeouts). */
export const closeWorker = (h: WorkerHandle) =>
  Effect.gen(function* () {
    const f = yield* Effect.forkChild(h.close, { startImmediately: true })
    yield* until(() => f.pollUnsafe() !== undefined, "close returns", 600_000, 500)
    yield* Fiber.join(f)
  })

/** Nothing was acknowledged: no complete (alone or riding a reserve) and no fail. */
export const expectNeverAcked = (fake: Fake): void => {
  expect(fake.of("complete")).toEqual([])
  expect(fake.of("fail")).toEqual([])
  expect(fake.of("reserve").flatMap((c) => c.completes)).toEqual([])
}
