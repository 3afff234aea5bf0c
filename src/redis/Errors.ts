/**
 * The one error the client layer raises of its own: an option it cannot use (a bad URL,
 * an empty cluster). The engine re-exports it with the rest of its errors
 * (`engine/model/Errors.ts`), so callers see one `InvalidOptions` class.
 */
import * as Data from "effect/Data"

/** A value shown in an error message: strings quoted and cut at 120 characters. */
export const show = (value: unknown): string => {
  if (typeof value === "string") return JSON.stringify(value.length > 120 ? `${value.slice(0, 117)}...` : value)
  if (typeof value === "bigint") return `${value}n`
  if (typeof value === "function") return "a function"
  if (typeof value === "symbol") return value.toString()
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
