/**
 * Script-level test helpers: a job as `add` sends it, with a fresh id each time, and a
 * shorthand to run an Effect as a Promise.
 */
import * as Effect from "effect/Effect"
import type { NewJob, Reservation } from "../../src/engine/calls/Commands.ts"

let seq = 0

/** A ready job (no delay, 3 attempts, no dedupe key) with a unique id; `over` replaces fields. */
export const newJob = (over: Partial<NewJob> = {}): NewJob => {
  seq++
  return {
    id: `job-${seq}-${Math.random().toString(36).slice(2, 8)}`,
    payload: JSON.stringify({ n: seq }),
    delayMs: 0,
    maxAttempts: 3,
    dedupeKey: "",
    dedupeTtlMs: 0,
    ...over,
  }
}

/** Run an Effect as a Promise (it rejects with the Effect's own error). */
export const run = <A, E>(e: Effect.Effect<A, E>): Promise<A> => Effect.runPromise(e)

/** A leased job as reserve answers it (token 1, first attempt of 3, no timeout), with `payload`. */
export const reservation = (id: string, payload: string): Reservation => ({
  id,
  token: 1,
  deadline: 0,
  attempt: 1,
  maxAttempts: 3,
  payload,
  timeoutMs: 0,
})
