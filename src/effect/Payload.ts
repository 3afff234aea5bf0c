/**
 * How the Effect face turns payloads into the JSON text the engine stores, and back:
 * plain JSON, or an Effect `Schema` (encoded on add, decoded on reserve). Also the
 * bridge from the engine's throwing validators to typed failures.
 */
import { Effect, Schema } from "effect"
import { InvalidOptions, InvalidPayload, InvalidQueueName } from "../engine/Errors.ts"
import { serializePayload } from "../engine/Validate.ts"

/**
 * A Schema for a queue's payload: `Type` is what producers add and handlers receive,
 * `Encoded` is what is stored (it must be JSON: objects, arrays, strings, finite
 * numbers, booleans, null). It may not need services to encode or decode.
 */
export type PayloadSchema<A> = Schema.Codec<A, unknown, never, never>

/** Errors the engine's validators throw; every one names the field and the value. */
export type ValidationError = InvalidOptions | InvalidPayload | InvalidQueueName

const isValidationError = (e: unknown): e is ValidationError =>
  e instanceof InvalidOptions || e instanceof InvalidPayload || e instanceof InvalidQueueName

/**
 * Turn the {@link ValidationError} an engine validator throws inside `effect` into a
 * typed failure `V` (the validators called say which); anything else thrown stays a defect.
 */
export const validated = <A, E, V extends ValidationError = InvalidOptions>(
  effect: Effect.Effect<A, E>,
): Effect.Effect<A, E | V> =>
  effect.pipe(Effect.catchDefect((e) => (isValidationError(e) ? Effect.fail(e as V) : Effect.die(e))))

/** Run a synchronous validator: see {@link validated}. */
export const attempt = <A, V extends ValidationError = InvalidOptions>(f: () => A): Effect.Effect<A, V> =>
  validated<A, never, V>(Effect.sync(f))

/** The payload codec of one queue. */
export interface PayloadCodec<A> {
  /** Encode a payload for `add`: Schema encode (when given), then JSON with the size limit. Fails with {@link InvalidPayload} naming `field`. */
  readonly encode: (field: string, payload: unknown) => Effect.Effect<string, InvalidPayload>
  /** Decode stored JSON text for a handler. Fails with {@link InvalidPayload}; the engine then moves the job to dead (`invalid-payload`). */
  readonly decode: (text: string) => Effect.Effect<A, InvalidPayload>
}

/** Build the codec of a queue: with `schema`, Schema-encoded JSON; without, plain JSON. */
export const makePayloadCodec = <A>(schema: PayloadSchema<A> | undefined, maxPayloadBytes: number): PayloadCodec<A> => {
  const toJson = (field: string, value: unknown) =>
    attempt<string, InvalidPayload>(() => serializePayload(field, value, maxPayloadBytes))
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
