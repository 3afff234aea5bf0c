/**
 * Adaptive batching: a call made while none is in flight goes out at once, from the
 * caller's own fiber; calls made while one is in flight wait for it and then go out
 * together, in one script call. No added latency (and no hand-off between fibers)
 * when calls are rare; one call per round trip when they are many.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

/** A batching front for a many-at-once operation. */
export interface Batcher<I, O, E> {
  readonly submit: (item: I) => Effect.Effect<O, E>
  /**
   * Queue `item` without a fiber of the caller's: `done` is called with its outcome once
   * its batch is answered. When no call is in flight, a batch goes out at once (in a fiber
   * of its own); else the item goes with the next batch.
   */
  readonly offer: (item: I, done: (exit: Exit.Exit<O, E>) => void) => void
}

/** Limits of one batch. */
export interface BatchLimits<I> {
  /** At most this many inputs per call. */
  readonly maxItems: number
  /** At most this much total `weight` per call (an input heavier than that goes alone). Default: no limit. */
  readonly maxWeight?: number
  /** The weight of one input (for example its payload bytes). Default: 0. */
  readonly weight?: (item: I) => number
  /**
   * After answering a batch, wait one turn of the event loop before taking the next, so
   * the callers it answered (their next item comes after a Promise continuation) join it:
   * N callers in a loop make calls of N rather than alternate calls of 1 and N - 1.
   * Default false.
   */
  readonly awaitCallers?: boolean
}

/** How many of the first pending items one call takes: at most `maxItems`, and within `maxWeight` (at least one). */
const batchSize = <I>(
  pending: ReadonlyArray<{ readonly item: I }>,
  maxItems: number,
  maxWeight: number,
  weight: (item: I) => number,
): number => {
  let n = 0
  let total = 0
  while (n < pending.length && n < maxItems) {
    const w = weight(pending[n]!.item)
    if (n > 0 && total + w > maxWeight) break
    total += w
    n++
  }
  return n
}

/** A promise settled on the next turn of the event loop, after the microtasks queued before it. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** Queue `item` for the drainer and wait for its answer (which may come before the wait starts). */
const waitInQueue = <I, O, E>(
  pending: Array<{ readonly item: I; readonly done: (exit: Exit.Exit<O, E>) => void }>,
  item: I,
): Effect.Effect<O, E> => {
  let answer: Exit.Exit<O, E> | undefined
  let wake: ((exit: Exit.Exit<O, E>) => void) | undefined
  pending.push({
    item,
    done: (exit) => {
      if (wake) wake(exit)
      else answer = exit
    },
  })
  return Effect.callback<O, E>((resume) => {
    if (answer) resume(answer)
    else wake = resume
  })
}

/**
 * Make a batcher over `run`, which must answer one output per input, in order.
 * `limits` is a count (at most that many inputs per call) or {@link BatchLimits}.
 */
export const makeBatcher = <I, O, E>(
  run: (items: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<O>, E>,
  limits: number | BatchLimits<I>,
): Batcher<I, O, E> => {
  const {
    maxItems,
    maxWeight = Number.POSITIVE_INFINITY,
    weight = () => 0,
    awaitCallers = false,
  } = typeof limits === "number" ? { maxItems: limits } : limits
  let pending: Array<{ readonly item: I; readonly done: (exit: Exit.Exit<O, E>) => void }> = []
  let inFlight = false

  /**
   * The next batch, or undefined when nothing waits. Clearing `inFlight` happens in the
   * same synchronous step as the emptiness check: a submit can never slip in between
   * (see it queue an item) and find no drainer left to send it.
   */
  const takeBatch = () => {
    if (pending.length === 0) {
      inFlight = false
      return undefined
    }
    const n = batchSize(pending, maxItems, maxWeight, weight)
    const batch = pending.slice(0, n)
    pending = pending.slice(n)
    return batch
  }

  /** Send what queued up meanwhile, batch after batch, then stand down. */
  const drain: Effect.Effect<void> = Effect.gen(function* () {
    while (true) {
      const batch = takeBatch()
      if (batch === undefined) return
      const exit = yield* Effect.exit(run(batch.map((p) => p.item)))
      for (let i = 0; i < batch.length; i++) {
        const p = batch[i]!
        p.done(exit._tag === "Success" ? Exit.succeed(exit.value[i] as O) : Exit.failCause(exit.cause))
      }
      // still in flight meanwhile: what the answered callers submit next queues for this drainer
      if (awaitCallers) yield* Effect.promise(nextTurn)
    }
  }).pipe(Effect.uninterruptible)

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
        // queued in this same synchronous step as the check (a drainer is surely still to come)
        if (inFlight) return waitInQueue(pending, item)
        inFlight = true
        return run([item]).pipe(
          Effect.map((out) => out[0] as O),
          Effect.onExit(() => handOver),
          Effect.uninterruptible,
        )
      }),
    offer: (item, done) => {
      pending.push({ item, done })
      if (inFlight) return
      inFlight = true
      Effect.runFork(drain)
    },
  }
}
