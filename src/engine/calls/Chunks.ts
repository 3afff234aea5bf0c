/**
 * Calls over caller-sized lists, in chunks: a Lua script can `unpack` only a few thousand
 * values at once, so a list longer than {@link SCRIPT_CHUNK} goes out in several calls.
 */
import * as Effect from "effect/Effect"

/**
 * Most leases (or jobs) one script call takes: a Lua script can `unpack` only a few
 * thousand values at once, so calls over caller-sized lists go out in chunks of this.
 */
export const SCRIPT_CHUNK = 500

/** `items` in consecutive chunks of {@link SCRIPT_CHUNK}. */
const chunksOf = <I>(items: ReadonlyArray<I>): Array<ReadonlyArray<I>> => {
  const parts: Array<ReadonlyArray<I>> = []
  for (let i = 0; i < items.length; i += SCRIPT_CHUNK) parts.push(items.slice(i, i + SCRIPT_CHUNK))
  return parts
}

/** Run `f` over consecutive chunks of `items` (one call when they fit), in order, and join the answers. */
export const chunked = <I, O, E>(
  items: ReadonlyArray<I>,
  f: (part: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<O>, E>,
): Effect.Effect<ReadonlyArray<O>, E> => {
  if (items.length <= SCRIPT_CHUNK) return f(items)
  return Effect.forEach(chunksOf(items), f).pipe(Effect.map((answers) => answers.flat()))
}

/**
 * {@link chunked}, the chunks sent last to first (answers still in the items' order): each
 * release call puts its jobs at the front of ready in their order, so the first chunk goes
 * last and every job keeps its place among the others.
 */
export const chunkedLastFirst = <I, O, E>(
  items: ReadonlyArray<I>,
  f: (part: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<O>, E>,
): Effect.Effect<ReadonlyArray<O>, E> => {
  if (items.length <= SCRIPT_CHUNK) return f(items)
  return Effect.forEach(chunksOf(items).reverse(), f).pipe(Effect.map((answers) => answers.reverse().flat()))
}
