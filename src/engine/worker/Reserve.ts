/**
 * One reserve call and the marker wait. A reserve call leases up to `want` jobs for free
 * slots and carries the completes riding with it (Riders.ts); it runs in a fiber of its
 * own, so close may stop waiting for it but never cuts it off. When the queue looks empty,
 * the loop blocks on the queue's marker on the worker's own connection.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { redisError } from "../Replies.ts"
import { RESERVE_PROMOTE_LIMIT } from "../scripts/Lease.ts"
import { refusedBeforeRun } from "./Acks.ts"
import type { RideAnswer, Rider, WorkerContext } from "./Context.ts"
import { freshen } from "./Heartbeat.ts"
import { monotonicNow } from "./Lease.ts"

/**
 * How much later than its own timeout a BZPOPMIN may answer before its connection is
 * taken for silent (half-open) and replaced: 5 s, room for a loaded Redis or process.
 */
export const BLOCK_REPLY_SLACK_MS = 5_000

/**
 * One reserve call, in a fiber of its own: close may stop waiting for it, never cut it
 * off. It answers its riders whatever happens (a failed call sends them on their own),
 * and when it lands after close began, it gives its jobs back at once, unstarted.
 */
const reserveCall = <A>(ctx: WorkerContext<A>, want: number, ride: ReadonlyArray<Rider>) =>
  Effect.gen(function* () {
    const sentAt = monotonicNow()
    const items = ride.map((r) => r.item)
    const reserved = yield* Effect.exit(
      ctx.commands.reserve(want, ctx.serverLeaseMs, RESERVE_PROMOTE_LIMIT, items, ctx.settings.keepCompleted, {
        workerId: ctx.workerId,
        requestId: String(++ctx.reserveSeq),
        timeoutMs: ctx.settings.timeoutMs,
      }),
    )
    const uncertain = Exit.isFailure(reserved) && !refusedBeforeRun(Cause.squash(reserved.cause))
    for (let i = 0; i < ride.length; i++) {
      const answer: RideAnswer = Exit.isSuccess(reserved)
        ? reserved.value.completed[i] === true
        : { resend: true, uncertain }
      ride[i]!.answer(answer)
    }
    const starts =
      Exit.isSuccess(reserved) && ctx.state === "running" ? yield* freshen(ctx, reserved.value.jobs, sentAt) : []
    if (Exit.isSuccess(reserved) && ctx.state !== "running") {
      // closed while the call was in flight: give the jobs straight back, unstarted
      if (reserved.value.jobs.length > 0)
        yield* ctx.commands.release(reserved.value.jobs).pipe(Effect.catch(ctx.report))
      return { reserved, starts, handled: true }
    }
    return { reserved, starts, handled: false }
  })

/**
 * Send a reserve call in a fiber of its own; when it lands, its answer is queued for
 * the loop (woken when the fiber ends), or, once close began, its jobs are given back at once.
 */
export const sendReserve = <A>(ctx: WorkerContext<A>, want: number, ride: ReadonlyArray<Rider>) =>
  Effect.gen(function* () {
    ctx.asked += want
    const call = reserveCall(ctx, want, ride).pipe(
      Effect.flatMap((l) => {
        if (l.handled || ctx.state === "running") {
          ctx.landed.push({ ...l, want })
          return Effect.void
        }
        // close began while the jobs were being freshened: give them straight back
        const jobs = Exit.isSuccess(l.reserved) ? l.reserved.value.jobs : []
        return jobs.length > 0 ? ctx.commands.release(jobs).pipe(Effect.catch(ctx.report)) : Effect.void
      }),
    )
    const fiber = yield* Effect.forkDetach(call, { startImmediately: true })
    ctx.inFlight.add(fiber)
    // the loop is woken once the call is no longer counted as out
    fiber.addObserver(() => {
      ctx.inFlight.delete(fiber)
      ctx.wakeLoop()
    })
  })

/**
 * Wait for the marker on the blocking connection. A reply later than the wait plus
 * {@link BLOCK_REPLY_SLACK_MS} means the connection went silent (half-open): it is
 * replaced and the call fails, so the loop reports it and goes on.
 */
export const blockOnMarker = <A>(ctx: WorkerContext<A>, timeoutMs: number) =>
  Effect.tryPromise({
    try: () =>
      ctx.blocking.commandWithin(
        "BZPOPMIN",
        [ctx.commands.keys.marker, Math.max(0.01, timeoutMs / 1000).toFixed(3)],
        timeoutMs + BLOCK_REPLY_SLACK_MS,
      ),
    catch: (e) => redisError("BZPOPMIN", e, ctx.blocking.describe, ctx.blocking.lastError?.()),
  })
