/**
 * A run's outcome as its ack carries it: the handler's result encoded (when completed jobs
 * are kept), or the failure that a result which cannot be encoded becomes.
 */
import * as Exit from "effect/Exit"
import { InvalidPayload } from "../../model/Errors.ts"
import { serializePayload } from "../../model/Validate.ts"
import { oneLine } from "../WorkerHooks.ts"

/**
 * A handler's result as JSON text to keep (completed jobs are retained, see queue.setRetention): `undefined` is kept as null;
 * what JSON would drop or change (a Map, a nested undefined, a BigInt, a cycle…) throws an
 * InvalidPayload naming its path, which fails the job (see {@link encodeOutcome}).
 */
export const resultJson = (result: unknown): string =>
  serializePayload("result", result ?? null, Number.MAX_SAFE_INTEGER)

/**
 * What to acknowledge for a handler's exit: the result serialised with `encode` (when
 * results are kept), or, when it cannot be serialised, a failed exit carrying an
 * {@link InvalidPayload} for the field `result` — the job then fails like any other.
 */
export const encodeOutcome = (
  exit: Exit.Exit<unknown, unknown>,
  encode: ((result: unknown) => string) | undefined,
): { readonly exit: Exit.Exit<unknown, unknown>; readonly result: string } => {
  // no result (undefined) stores nothing: the usual case costs no bytes on the wire
  if (!Exit.isSuccess(exit) || encode === undefined || exit.value === undefined) return { exit, result: "" }
  try {
    const text: unknown = encode(exit.value)
    return { exit, result: typeof text === "string" ? text : "null" }
  } catch (e) {
    const reason = `cannot be serialised to keep it (completed jobs are retained per queue.setRetention): ${oneLine(e)}; return JSON data`
    return { exit: Exit.fail(new InvalidPayload({ field: "result", reason })), result: "" }
  }
}
