/**
 * The outbox signal of one command set (flows, docs/flows.md): poked when a completion left
 * notes for parents in other queues, waited on by the worker's outbox loop.
 */
import * as Effect from "effect/Effect"

/**
 * Whether a completion of this command set left notes for parents in its queue's outbox
 * (flows, docs/flows.md): `poke` when one did, with the notes when its answer carried them;
 * `wait` until one did (once per poke, however many came meanwhile), then `take` the notes
 * given since (at most {@link HELD_NOTES} and {@link HELD_BYTES}; the outbox keeps them all). A worker applies
 * them, then drains the outbox; nothing waits without flows.
 */
export interface OutboxSignal {
  readonly poke: (notes?: ReadonlyArray<string> | undefined) => void
  readonly wait: Effect.Effect<void>
  readonly take: () => ReadonlyArray<string>
}

/** Most notes a signal holds for its drainer: past it they are read from the outbox instead. */
export const HELD_NOTES = 1000

/** Most bytes of notes a signal holds (a completed child's note carries its result, ≤ 64 KiB). */
export const HELD_BYTES = 1024 * 1024

/** A fresh {@link OutboxSignal}. */
export const outboxSignal = (): OutboxSignal => {
  let pending = false
  let wake: (() => void) | undefined
  let held: string[] = []
  let bytes = 0
  return {
    poke: (notes) => {
      if (notes)
        for (const n of notes)
          if (held.length < HELD_NOTES && bytes + n.length <= HELD_BYTES) {
            held.push(n)
            bytes += n.length
          }
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
    take: () => {
      const out = held
      held = []
      bytes = 0
      return out
    },
  }
}

/** Poke `outbox` when an answer may have left notes (default: `complete`'s `notes`, with its `outbox`). */
export const pokeOnNotes =
  <A>(outbox: OutboxSignal, left: (answer: A) => boolean = (a) => (a as { readonly notes?: boolean }).notes === true) =>
  (answer: A): Effect.Effect<void> =>
    Effect.sync(() =>
      left(answer) ? outbox.poke((answer as { readonly outbox?: ReadonlyArray<string> }).outbox) : undefined,
    )
