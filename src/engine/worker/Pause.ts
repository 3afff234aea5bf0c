/**
 * Pausing one worker (BullMQ's local `worker.pause()`; the queue-wide pause is
 * `queue.pause()`): the worker moves to `paused` (WorkerState.ts) and its reserve loop
 * stops leasing. What it holds and has not started goes back at once, attempts unchanged
 * (prefetched jobs, a reserve call that lands now); running handlers go on, their leases
 * heartbeated and fenced as ever, and their completes go on their own (no reserve call to
 * ride). `resume` moves it back to `running`, and the loop leases again.
 *
 * The reserve loop's step while paused is its `pausedTurn` (ReserveLoop.ts).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { InvalidOptions, WorkerNotRunning } from "../model/Errors.ts"
import { type Checked, checkKnownKeys, checkObject } from "../model/Validate.ts"
import type { PauseOptions, WorkerContext } from "./Context.ts"
import { jobsEnded } from "./Lifecycle.ts"
import { transition } from "./WorkerState.ts"

/** `pause`'s options checked: an object with at most `wait`, a boolean. */
export const checkPauseOptions = (given: unknown): Checked<PauseOptions> =>
  Result.flatMap(checkObject("options", given), (o) =>
    Result.flatMap(checkKnownKeys("options", o, ["wait"]), () =>
      o.wait === undefined || typeof o.wait === "boolean"
        ? Result.succeed({ wait: o.wait as boolean | undefined })
        : Result.fail(new InvalidOptions({ field: "options.wait", value: o.wait, reason: "must be true or false" })),
    ),
  )

/**
 * Pause the worker: a running worker moves to `paused` (its loop gives back what it holds
 * unstarted); a paused one stays. A worker closing, closed or failed takes no jobs anyway:
 * nothing changes. With `wait`, ends once the handlers running now have ended.
 */
export const pause = <A>(ctx: WorkerContext<A>, options: PauseOptions = {}): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (ctx.state === "running") transition(ctx, "paused")
    return options.wait === true ? jobsEnded(ctx) : Effect.void
  })

/** Resume a paused worker (a running one stays running); fails with {@link WorkerNotRunning} when it is closing, closed or failed. */
export const resume = <A>(ctx: WorkerContext<A>): Effect.Effect<void, WorkerNotRunning> =>
  Effect.suspend(() => {
    if (ctx.state === "paused") transition(ctx, "running")
    if (ctx.state === "running") return Effect.void
    return Effect.fail(new WorkerNotRunning({ queue: ctx.commands.keys.queue, state: ctx.state }))
  })
