/**
 * Adaptive batching: a call made while none is in flight goes out at once, from the
 * caller's own fiber; calls made while one is in flight wait for it and then go out
 * together, in one script call. No added latency (and no hand-off between fibers)
 * when calls are rare; one call per round trip when they are many.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"

/** A batching front for a many-at-once operation. */
export interface Batcher<I, O, E> {
  readonly submit: (item: I) => Effect.Effect<O, E>
}

/** Make a batcher over `run`, which must answer one output per input, in order. At most `maxBatch` inputs per call. */
export const makeBatcher = <I, O, E>(
  run: (items: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<O>, E>,
  maxBatch: number,
): Batcher<I, O, E> => {
  let pending: Array<{ readonly item: I; readonly done: Deferred.Deferred<O, E> }> = []
  let inFlight = false

  /** Send what queued up meanwhile, batch after batch, then stand down. */
  const drain: Effect.Effect<void> = Effect.gen(function* () {
    while (pending.length > 0) {
      const batch = pending.length <= maxBatch ? pending : pending.slice(0, maxBatch)
      pending = pending.length <= maxBatch ? [] : pending.slice(maxBatch)
      const exit = yield* Effect.exit(run(batch.map((p) => p.item)))
      for (let i = 0; i < batch.length; i++) {
        const p = batch[i]!
        if (exit._tag === "Success") Deferred.doneUnsafe(p.done, Effect.succeed(exit.value[i] as O))
        else Deferred.doneUnsafe(p.done, Effect.failCause(exit.cause))
      }
    }
  }).pipe(
    Effect.ensuring(
      Effect.sync(() => {
        inFlight = false
      }),
    ),
    Effect.uninterruptible,
  )

  /** After the caller's own call: hand what queued up meanwhile to a drainer, or stand down. */
  const handOver = Effect.suspend(() => {
    if (pending.length === 0) {
      inFlight = false
      return Effect.void
    }
    return Effect.asVoid(Effect.forkDetach(drain, { startImmediately: true }))
  })

  return {
    submit: (item) =>
      Effect.suspend(() => {
        if (inFlight) {
          const done = Deferred.makeUnsafe<O, E>()
          pending.push({ item, done })
          return Deferred.await(done)
        }
        inFlight = true
        return run([item]).pipe(
          Effect.map((out) => out[0] as O),
          Effect.onExit(() => handOver),
          Effect.uninterruptible,
        )
      }),
  }
}
