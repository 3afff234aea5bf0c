/**
 * A Promise face handler as the engine runs it: the handler's promise as an Effect that ends
 * only once it settled, and the JSON payload decoded for it (shared by the Worker's forms).
 */
import * as Effect from "effect/Effect"
import { InvalidPayload } from "../engine/model/Errors.ts"
import type { Job } from "../engine/queue/Job.ts"
import { JobSpan } from "../engine/telemetry/Spans.ts"

/**
 * Run a Promise handler as an Effect that ends only once the handler's promise has
 * settled: when the fiber is interrupted (lease lost, self-fenced, close past its grace),
 * it waits for the promise, so the job's slot stays taken (and, at close, its lease stays
 * held) while the handler may still run. The engine bounds that wait at close.
 */
export const runHandler = <T, R>(handler: (job: Job<T>) => Promise<R> | R, job: Job<T>): Effect.Effect<R, unknown> =>
  Effect.flatMap(Effect.service(JobSpan), (span) => {
    let promise: Promise<R>
    try {
      // a traced job's process span is the active OpenTelemetry span while the handler runs
      promise = Promise.resolve(span ? span.runIn(() => handler(job)) : handler(job))
    } catch (e) {
      return Effect.fail(e)
    }
    // waiting for the promise to settle is set up only when interrupted (rare)
    return Effect.tryPromise({ try: () => promise, catch: (e) => e }).pipe(
      Effect.onInterrupt(() =>
        Effect.promise(() =>
          promise.then(
            () => undefined,
            () => undefined,
          ),
        ),
      ),
    )
  })

/** The error for a payload that is not JSON (what `JSON.parse` threw). */
export const invalidJson = (e: unknown) =>
  new InvalidPayload({ field: "payload", reason: `is not valid JSON: ${String(e)}` })

/** A payload's JSON text decoded, or an {@link InvalidPayload} thrown. */
export const decodeJson = <T>(text: string): T => {
  try {
    return JSON.parse(text) as T
  } catch (e) {
    throw invalidJson(e)
  }
}
