/**
 * The one error the client layer raises of its own: an option it cannot use (a bad URL,
 * an empty cluster). The engine re-exports it with the rest of its errors
 * (`engine/model/Errors.ts`), so callers see one `InvalidOptions` class.
 */
import * as Data from "effect/Data"

/** A value shown in an error message: strings quoted and cut at 120 characters, arrays as given, plain objects by their keys. */
export const show = (value: unknown): string => {
  if (typeof value === "string") return JSON.stringify(value.length > 120 ? `${value.slice(0, 117)}...` : value)
  if (typeof value === "bigint") return `${value}n`
  if (typeof value === "function") return "a function"
  if (typeof value === "symbol") return value.toString()
  // an array as given (`["waiting"]`); an object by its keys only: its values may hold a secret
  if (Array.isArray(value)) {
    const text = `[${value.map((v) => (Array.isArray(v) ? "[…]" : show(v))).join(", ")}]`
    return text.length > 120 ? `${text.slice(0, 116)}...]` : text
  }
  if (typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    const keys = Object.keys(value)
    return keys.length === 0 ? "{}" : `{ ${keys.join(", ").slice(0, 110)} }`
  }
  return String(value)
}

/** An option had a bad value. Nothing was written to Redis. */
export class InvalidOptions extends Data.TaggedError("InvalidOptions")<{
  readonly field: string
  readonly value: unknown
  readonly reason: string
}> {
  override get message() {
    return `invalid option ${this.field} = ${show(this.value)}: ${this.reason}`
  }
}
