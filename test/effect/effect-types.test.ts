/**
 * Type-level tests of the Effect face: what `LeaseQueue` and `LeaseWorker` infer for
 * requirements (R) and errors (E). `tsc --noEmit` (npm run typecheck, in CI) checks them;
 * at run time `expectTypeOf` does nothing, so the test only proves the file compiles as
 * asserted. A change that widens an error channel or leaks a requirement fails here.
 */
import { Context, Data, Effect, type Layer, type Scope } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import {
  type InvalidOptions,
  type InvalidPayload,
  type Job,
  LeaseQueue,
  LeaseWorker,
  type NotReplicated,
  type QueueClosed,
  type ScriptFailure,
  type ValidationError,
} from "../../src/effect.ts"

interface Mail {
  readonly to: string
}
class Mails extends Context.Service<Mails, LeaseQueue.Service<Mail>>()("types/Mails") {}
class Smtp extends Context.Service<Smtp, { readonly send: (to: string) => Effect.Effect<void> }>()("types/Smtp") {}
class SendFailed extends Data.TaggedError("SendFailed")<{ readonly to: string }> {}

const send = (job: Job<Mail>): Effect.Effect<string, SendFailed, Smtp> =>
  Effect.gen(function* () {
    const smtp = yield* Smtp
    yield* smtp.send(job.payload.to)
    return job.payload.to
  })

describe("Effect face types", () => {
  it("a queue service's add takes the payload type and fails only with the documented errors", () => {
    type Add = LeaseQueue.Service<Mail>["add"]
    expectTypeOf<Parameters<Add>[0]>().toEqualTypeOf<Mail>()
    expectTypeOf<ReturnType<Add>>().toEqualTypeOf<
      Effect.Effect<string, InvalidOptions | InvalidPayload | QueueClosed | ScriptFailure | NotReplicated>
    >()
  })

  it("a queue service's verify takes the Promise face's options and fails only with the documented errors", () => {
    type Verify = LeaseQueue.Service<Mail>["verify"]
    expectTypeOf<Parameters<Verify>[0]>().toEqualTypeOf<
      { readonly maxLines?: number | undefined; readonly pageSize?: number | undefined } | undefined
    >()
    expectTypeOf<ReturnType<Verify>>().toEqualTypeOf<
      Effect.Effect<
        { readonly violations: number; readonly jobs: number; readonly lines: string[] },
        InvalidOptions | QueueClosed | ScriptFailure
      >
    >()
  })

  it("LeaseQueue.make needs a Scope and nothing else; layer provides the service", () => {
    const made = LeaseQueue.make<Mail>({ name: "types" })
    expectTypeOf(made).toEqualTypeOf<Effect.Effect<LeaseQueue.Service<Mail>, ValidationError, Scope.Scope>>()
    const layer = LeaseQueue.layer(Mails, { name: "types" })
    expectTypeOf(layer).toEqualTypeOf<Layer.Layer<Mails, ValidationError>>()
  })

  it("LeaseWorker.make requires the queue, a Scope and the handler's services; its errors are the start errors only", () => {
    const worker = LeaseWorker.make(Mails, send, { concurrency: 2 })
    expectTypeOf(worker).toEqualTypeOf<
      Effect.Effect<LeaseWorker.Handle, LeaseWorker.StartError, Mails | Scope.Scope | Smtp>
    >()
    // the handler's typed error (SendFailed) retries the job: it is not an error of the worker
    expectTypeOf<Effect.Error<typeof worker>>().not.toEqualTypeOf<SendFailed>()
  })

  it("LeaseWorker.layer requires the queue and the handler's services, not a Scope", () => {
    const layer = LeaseWorker.layer(Mails, send)
    expectTypeOf(layer).toEqualTypeOf<Layer.Layer<never, LeaseWorker.StartError, Mails | Smtp>>()
  })

  it("a handler that needs a Scope gets one per job: the worker does not ask the caller for it", () => {
    const scoped = (_job: Job<Mail>): Effect.Effect<void, never, Scope.Scope> => Effect.void
    const layer = LeaseWorker.layer(Mails, scoped)
    expectTypeOf(layer).toEqualTypeOf<Layer.Layer<never, LeaseWorker.StartError, Mails>>()
  })
})
