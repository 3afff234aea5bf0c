/**
 * Validators answer their errors as values: a bad option or payload is a `Result`
 * failure naming the field and the value (never a throw the caller must catch), and in
 * an Effect it is a typed failure. A bug thrown while parsing options stays a defect:
 * it is not passed off as bad input. No Redis.
 */
import { Cause, Effect, Exit, Result } from "effect"
import { describe, expect, it } from "vitest"
import { parseOptions } from "../../src/effect/Payload.ts"
import { InvalidOptions, InvalidPayload, InvalidQueueName } from "../../src/engine/model/Errors.ts"
import { checkPrefix, checkQueueName } from "../../src/engine/model/QueueName.ts"
import { checkPage, encodePayload, orThrow } from "../../src/engine/model/Validate.ts"
import { checkJobOptions } from "../../src/engine/queue/Job.ts"
import { checkQueueOptions } from "../../src/engine/queue/QueueCore.ts"

const failure = <A, E>(r: Result.Result<A, E>): E => {
  if (Result.isSuccess(r)) throw new Error(`expected a failure, got ${JSON.stringify(r.success)}`)
  return r.failure
}

describe("validators return errors as values", () => {
  it("job options: the first bad field, with its value, as a failure; good ones with defaults", () => {
    const e = failure(checkJobOptions("options", { delayMs: -1 }))
    expect(e).toBeInstanceOf(InvalidOptions)
    expect(e).toMatchObject({ field: "options.delayMs", value: -1 })
    expect(failure(checkJobOptions("options", { maxAttemps: 3 }))).toMatchObject({ field: "options.maxAttemps" })
    expect(failure(checkJobOptions("options", { dedupeTtlMs: 5 }))).toMatchObject({
      field: "options.dedupeTtlMs",
      reason: "needs a dedupeKey",
    })
    expect(checkJobOptions("options", undefined)).toEqual(
      Result.succeed({
        delayMs: 0,
        maxAttempts: 3,
        dedupeTtlMs: 3_600_000,
        dedupeKey: "",
        dedupeExtend: false,
        dedupeReplace: false,
        timeoutMs: 0,
        priority: 0,
        lifo: false,
        group: "",
      }),
    )
  })

  it("queue options, names and prefixes, pages", () => {
    expect(failure(checkQueueOptions({ callTimeoutMs: 5 }))).toMatchObject({ field: "callTimeoutMs", value: 5 })
    expect(failure(checkQueueOptions({ defaultJobOptions: { maxAttempts: 0 } }))).toMatchObject({
      field: "defaultJobOptions.maxAttempts",
    })
    expect(failure(checkQueueName("a{b}"))).toBeInstanceOf(InvalidQueueName)
    expect(failure(checkPrefix("x{"))).toMatchObject({ field: "prefix", value: "x{" })
    expect(failure(checkPage({ count: 0 }))).toMatchObject({ field: "count", value: 0 })
    expect(checkPage({})).toEqual(Result.succeed({ offset: 0, count: 100 }))
  })

  it("payloads: what JSON would change or cannot hold is a failure, including a throwing getter", () => {
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    expect(failure(encodePayload("payload", cyclic, 1000)).reason).toMatch(/circular/)
    expect(failure(encodePayload("payload", { n: Number.NaN }, 1000)).reason).toMatch(/NaN/)
    const getter = {
      get boom(): never {
        throw new Error("getter failed")
      },
    }
    expect(failure(encodePayload("payload", getter, 1000))).toBeInstanceOf(InvalidPayload)
    expect(failure(encodePayload("payload", "x".repeat(2000), 1000)).reason).toMatch(/limit is 1000 bytes/)
    expect(encodePayload("payload", { a: [1, "b", null] }, 1000)).toEqual(Result.succeed('{"a":[1,"b",null]}'))
  })

  it("orThrow throws the error itself (the Promise constructors' contract)", () => {
    expect(() => orThrow(checkPrefix("x{"))).toThrow(InvalidOptions)
    expect(orThrow(checkPrefix("ok"))).toBe("ok")
  })

  it("parseOptions: InvalidOptions is a typed failure, any other throw stays a defect", async () => {
    const bad = await Effect.runPromiseExit(
      parseOptions(() => {
        throw new InvalidOptions({ field: "x", value: 1, reason: "no" })
      }),
    )
    expect(Exit.isFailure(bad) && Cause.hasFails(bad.cause)).toBe(true)
    const bug = await Effect.runPromiseExit(
      parseOptions(() => {
        throw new TypeError("a bug")
      }),
    )
    expect(Exit.isFailure(bug) && Cause.hasDies(bug.cause) && !Cause.hasFails(bug.cause)).toBe(true)
  })
})
