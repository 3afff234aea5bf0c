/**
 * How the Effect face turns payloads into the JSON text the engine stores, and back:
 * plain JSON, or an Effect `Schema` (encoded on add, decoded on reserve). Also the
 * bridge from the few option parsers that throw (their contract in the Promise face's
 * constructors) to typed failures.
 */
import { Effect, Schema } from "effect"
import { InvalidOptions, InvalidPayload } from "../engine/model/Errors.ts"
import { encodePayload } from "../engine/model/Validate.ts"

export type { ValidationError } from "../engine/model/Validate.ts"

/**
 * A Schema for a queue's payload: `Type` is what producers add and handlers receive,
 * `Encoded` is what is stored (it must be JSON: objects, arrays, strings, finite
 * numbers, booleans, null). It may not need services to encode or decode.
 */
export type PayloadSchema<A> = Schema.Codec<A, unknown, never, never>

/**
 * Run `f`, an option parser whose contract is to throw {@link InvalidOptions} (the
 * worker's options, `connect`): that error becomes the Effect's failure; anything else
 * thrown is a bug and stays a defect. The engine's own checks return a `Result` instead
 * (taken with `Effect.fromResult`).
 */
export const parseOptions = <A>(f: () => A): Effect.Effect<A, InvalidOptions> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(f())
    } catch (e) {
      if (e instanceof InvalidOptions) return Effect.fail(e)
      throw e
    }
  })

/** The payload codec of one queue. */
export interface PayloadCodec<A> {
  /** Encode a payload for `add`: Schema encode (when given), then JSON with the size limit. Fails with {@link InvalidPayload} naming `field`. */
  readonly encode: (field: string, payload: unknown) => Effect.Effect<string, InvalidPayload>
  /** Decode stored JSON text for a handler. Fails with {@link InvalidPayload}; the engine then moves the job to dead (`invalid-payload`). */
  readonly decode: (text: string) => Effect.Effect<A, InvalidPayload>
}

/** Build the codec of a queue: with `schema`, Schema-encoded JSON; without, plain JSON. */
export const makePayloadCodec = <A>(schema: PayloadSchema<A> | undefined, maxPayloadBytes: number): PayloadCodec<A> => {
  const toJson = (field: string, value: unknown) => Effect.fromResult(encodePayload(field, value, maxPayloadBytes))
  const parse = (text: string) =>
    Effect.try({
      try: (): unknown => JSON.parse(text),
      catch: (e) =>
        new InvalidPayload({
          field: "payload",
          reason: `is not valid JSON: ${e instanceof Error ? e.message : String(e)}`,
        }),
    })
  if (schema === undefined) {
    return {
      encode: toJson,
      decode: (text) => parse(text) as Effect.Effect<A, InvalidPayload>,
    }
  }
  const encodeSchema = Schema.encodeUnknownEffect(schema, { errors: "all" })
  const decodeSchema = Schema.decodeUnknownEffect(schema, { errors: "all" })
  return {
    encode: (field, payload) =>
      encodeSchema(payload).pipe(
        Effect.mapError(
          (e) => new InvalidPayload({ field, reason: `does not match the queue's schema: ${e.message}` }),
        ),
        Effect.flatMap((encoded) => toJson(field, encoded)),
      ),
    decode: (text) =>
      parse(text).pipe(
        Effect.flatMap((json) =>
          decodeSchema(json).pipe(
            Effect.mapError(
              (e) =>
                new InvalidPayload({ field: "payload", reason: `does not match the queue's schema: ${e.message}` }),
            ),
          ),
        ),
      ),
  }
}
