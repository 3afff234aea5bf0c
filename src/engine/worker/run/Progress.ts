/**
 * A running job's progress, live: `job.progress(value)` keeps the value's JSON on the lease
 * and stores it within {@link PROGRESS_FLUSH_MS} (one extend call of that lease, which also
 * records a `progress` event), so another process sees it at once with `getJob`. Values
 * set meanwhile are coalesced: at most one write per lease per {@link PROGRESS_FLUSH_MS},
 * with the latest value. A value still pending when the handler returns is stored before
 * the job is settled (Settle.ts, PlainRun.ts), so the last one is kept with a retained or
 * dead job. A lease whose handler never reports progress costs nothing: no timer, no write.
 * A flush whose call fails leaves the value for the next heartbeat.
 */
import * as Effect from "effect/Effect"
import { InvalidOptions } from "../../model/Errors.ts"
import type { Held } from "../lease/LeaseTable.ts"
import type { RunDeps } from "./RunDeps.ts"

/** What progress reporting uses: the queue's calls, the lease length, a fiber from plain code. */
export type ProgressDeps = Pick<RunDeps<unknown>, "commands" | "serverLeaseMs" | "fork">

/** Largest progress value, in bytes of JSON text: 64 KiB (it rides every heartbeat until stored). */
export const MAX_PROGRESS_BYTES = 65_536

/** How long a progress value waits for later ones before it is written (ms): at most four writes a second per job. */
export const PROGRESS_FLUSH_MS = 250

/** The JSON text of a progress value; throws {@link InvalidOptions} naming the value when it has none. */
export const progressText = (value: unknown): string => {
  let text: string | undefined
  try {
    text = JSON.stringify(value)
  } catch (e) {
    throw new InvalidOptions({ field: "progress", value, reason: `must be a JSON value: ${String(e)}` })
  }
  if (text === undefined) {
    throw new InvalidOptions({
      field: "progress",
      value,
      reason: "must be a JSON value (a number, string, boolean, null, array or plain object)",
    })
  }
  if (Buffer.byteLength(text, "utf8") > MAX_PROGRESS_BYTES) {
    throw new InvalidOptions({
      field: "progress",
      value: `${text.slice(0, 40)}…`,
      reason: `is ${Buffer.byteLength(text, "utf8")} bytes of JSON; the limit is ${MAX_PROGRESS_BYTES}: report a summary`,
    })
  }
  return text
}

/** The flush timer of each lease with a progress value waiting for it. */
const timers = new WeakMap<Held, ReturnType<typeof setTimeout>>()

/**
 * Store the lease's pending progress now: one extend of that lease carrying it (a heartbeat
 * of its own: the lease's answer is left to the heartbeat). Succeeds when it was answered or
 * nothing was pending; never fails (a value not stored stays for the next heartbeat).
 */
export const flushProgress = (ctx: ProgressDeps, held: Held): Effect.Effect<void> =>
  Effect.suspend(() => {
    const timer = timers.get(held)
    if (timer !== undefined) {
      clearTimeout(timer)
      timers.delete(held)
    }
    const sent = held.progress
    if (sent === undefined || held.state.ended !== undefined) return Effect.void
    return ctx.commands.extend([{ id: held.id, token: held.token, progress: sent }], ctx.serverLeaseMs).pipe(
      Effect.tap(() =>
        Effect.sync(() => {
          if (held.progress === sent) held.progress = undefined
        }),
      ),
      Effect.ignore,
    )
  })

/** `job.progress` of a lease: validate now; stored within {@link PROGRESS_FLUSH_MS} (a later value replaces it). */
export const reportProgress =
  (ctx: ProgressDeps, held: Held) =>
  (value: unknown): void => {
    const text = progressText(value)
    if (held.state.ended !== undefined) return
    held.progress = text
    if (timers.has(held)) return
    const timer = setTimeout(() => {
      timers.delete(held)
      ctx.fork(flushProgress(ctx, held))
    }, PROGRESS_FLUSH_MS)
    timer.unref?.()
    timers.set(held, timer)
  }

/** True when the lease has a progress value not stored yet (its handler's end then stores it first). */
export const progressPending = (held: Held): boolean => held.progress !== undefined && held.state.ended === undefined
