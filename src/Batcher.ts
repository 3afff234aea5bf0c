/**
 * Explicit batching: calls made in the same tick share one script call. The first
 * caller of a batch yields once, then sends everything queued meanwhile (up to
 * `maxBatch`) and hands each caller its own answer.
 */
import { Deferred, Effect } from "effect"

/** A batching front for a many-at-once operation. */
export interface Batcher<I, O, E> {
  readonly submit: (item: I) => Effect.Effect<O, E>
}

/** Make a batcher over `run`, which must answer one output per input, in order. */
export const makeBatcher = <I, O, E>(
  run: (items: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<O>, E>,
  maxBatch: number,
): Batcher<I, O, E> => {
  let pending: Array<{ readonly item: I; readonly done: Deferred.Deferred<O, E> }> = []
  let leading = false

  const flush: Effect.Effect<void> = Effect.gen(function* () {
    while (pending.length > 0) {
      const batch = pending.slice(0, maxBatch)
      pending = pending.slice(batch.length)
      const exit = yield* Effect.exit(run(batch.map((p) => p.item)))
      for (let i = 0; i < batch.length; i++) {
        const p = batch[i]!
        if (exit._tag === "Success") yield* Deferred.succeed(p.done, exit.value[i] as O)
        else yield* Deferred.failCause(p.done, exit.cause)
      }
    }
  })

  return {
    submit: (item) =>
      Effect.gen(function* () {
        const done = yield* Deferred.make<O, E>()
        pending.push({ item, done })
        if (!leading) {
          leading = true
          yield* Effect.yieldNow.pipe(
            Effect.andThen(flush),
            Effect.ensuring(
              Effect.sync(() => {
                leading = false
              }),
            ),
            Effect.uninterruptible,
          )
        }
        return yield* Deferred.await(done)
      }),
  }
}
