/**
 * The outbox signal of one command set (flows, docs/flows.md): poked when a completion left
 * notes for parents in other queues, waited on by the worker's outbox loop.
 */
import * as Effect from "effect/Effect"

/**
 * Whether a completion of this command set left notes for parents in its queue's outbox
 * (flows, docs/flows.md): `poke` when one did, `wait` until one did (once per poke, however
 * many came meanwhile). A worker drains the outbox when woken; nothing waits without flows.
 */
export interface OutboxSignal {
  readonly poke: () => void
  readonly wait: Effect.Effect<void>
}

/** A fresh {@link OutboxSignal}. */
export const outboxSignal = (): OutboxSignal => {
  let pending = false
  let wake: (() => void) | undefined
  return {
    poke: () => {
      pending = true
      const w = wake
      wake = undefined
      w?.()
    },
    wait: Effect.callback<void>((resume) => {
      if (pending) {
        pending = false
        return resume(Effect.void)
      }
      wake = () => {
        pending = false
        resume(Effect.void)
      }
      return Effect.sync(() => {
        wake = undefined
      })
    }),
  }
}

/** Poke `outbox` when an answer may have left notes (default: `complete`'s `notes`). */
export const pokeOnNotes =
  <A>(outbox: OutboxSignal, left: (answer: A) => boolean = (a) => (a as { readonly notes?: boolean }).notes === true) =>
  (answer: A): Effect.Effect<void> =>
    Effect.sync(() => (left(answer) ? outbox.poke() : undefined))
