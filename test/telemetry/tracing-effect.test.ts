/**
 * Traces through Effect's tracer, Effect face: an application that provides its own
 * tracer sees leaseq's send, process and settle spans inside its traces (names, kinds,
 * parents, links, attributes, the error path), and they do not go to the global
 * OpenTelemetry provider as well; without a tracer of its own, the Effect face's spans
 * go to that provider. Metrics go through the OpenTelemetry metrics API either way.
 */
import { expect, it } from "@effect/vitest"
import { SpanKind, SpanStatusCode } from "@opentelemetry/api"
import { Context, Data, Deferred, Effect, Exit, Option, Tracer } from "effect"
import { afterAll, beforeAll, describe } from "vitest"
import { LeaseQueue, LeaseWorker } from "../../src/effect.ts"
import { installOtel, total } from "../support/otel.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"

const q = queueNamer("tracing-effect")
let otel: ReturnType<typeof installOtel>
beforeAll(() => {
  otel = installOtel()
})
afterAll(async () => {
  await otel.uninstall()
})

class Jobs extends Context.Service<Jobs, LeaseQueue.Service<{ readonly n: number }>>()("test/TracedJobs") {}
class Boom extends Data.TaggedError("Boom")<{ readonly n: number }> {}

/** An application's tracer: Effect's own spans, kept for the test to read. */
const recordingTracer = () => {
  const spans: Tracer.NativeSpan[] = []
  const tracer = Tracer.make({
    span(options) {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      return span
    },
  })
  const named = (name: string) => spans.filter((s) => s.name === name)
  return { tracer, spans, named }
}

const wait = <A, E>(d: Deferred.Deferred<A, E>) => Deferred.await(d).pipe(Effect.timeout("10 seconds"))
const parentId = (s: Tracer.NativeSpan) => Option.getOrUndefined(s.parent)?.spanId
const ended = (s: Tracer.NativeSpan) => (s.status._tag === "Ended" ? s.status.exit : undefined)

describe("tracing, Effect face", () => {
  it.live(
    "an app's tracer sees send → process (child of send, linked to it) → settle, and the handler's spans inside process",
    () => {
      const name = q()
      const app = recordingTracer()
      return Effect.gen(function* () {
        const jobs = yield* Jobs
        const id = yield* jobs.add({ n: 1 }).pipe(Effect.withSpan("request"))
        const done = yield* Deferred.make<void>()
        const worker = yield* LeaseWorker.make(
          Jobs,
          (job) => Effect.succeed(job.payload.n).pipe(Effect.withSpan("handler work")),
          { onCompleted: () => Deferred.succeed(done, undefined) },
          // started inside a span of the app's: its jobs' spans still hang from their producers
        ).pipe(Effect.withSpan("start worker"))
        yield* wait(done)
        yield* worker.close

        const [request] = app.named("request")
        const [send] = app.named(`send ${name}`)
        const [process] = app.named(`process ${name}`)
        const [settle] = app.named(`settle ${name}`)
        const [work] = app.named("handler work")
        expect(send!.kind).toBe("producer")
        expect(parentId(send!)).toBe(request!.spanId)
        expect(Object.fromEntries(send!.attributes)).toMatchObject({
          "messaging.system": "leaseq",
          "messaging.destination.name": name,
          "messaging.operation.type": "send",
          "messaging.operation.name": "add",
          "messaging.batch.message_count": 1,
          "messaging.message.id": id,
        })
        expect(process!.kind).toBe("consumer")
        expect(process!.traceId).toBe(send!.traceId)
        expect(parentId(process!)).toBe(send!.spanId)
        expect(process!.links.map((l) => l.span.spanId)).toEqual([send!.spanId])
        expect(Object.fromEntries(process!.attributes)).toMatchObject({
          "messaging.operation.type": "process",
          "messaging.message.id": id,
          "messaging.client.id": expect.any(String),
          "messaging.leaseq.attempt": 1,
          "messaging.leaseq.lease_token": expect.any(Number),
          "messaging.leaseq.lease_ms": 30_000,
        })
        expect(Exit.isSuccess(ended(process!)!)).toBe(true)
        expect(parentId(work!)).toBe(process!.spanId)
        expect(settle!.kind).toBe("client")
        expect(parentId(settle!)).toBe(process!.spanId)
        expect(settle!.attributes.get("messaging.operation.name")).toBe("complete")
        // the app's tracer got them: the global OpenTelemetry provider did not get them too
        expect(otel.spans().filter((s) => s.name.endsWith(name))).toEqual([])
        // metrics go through the OpenTelemetry metrics API whichever tracer is used
        const where = { "messaging.destination.name": name }
        expect(total(yield* Effect.promise(() => otel.points("messaging.client.sent.messages", where)))).toBe(1)
        expect(total(yield* Effect.promise(() => otel.points("messaging.process.duration", where)))).toBe(1)
      }).pipe(
        Effect.provide(LeaseQueue.layer(Jobs, { name, connection: redisUrl() })),
        Effect.provideService(Tracer.Tracer, app.tracer),
      )
    },
  )

  it.live("a failed run ends its process span with the failure and error.type; the settle span is a fail", () => {
    const name = q()
    const app = recordingTracer()
    return Effect.gen(function* () {
      const jobs = yield* Jobs
      yield* jobs.add({ n: 2 }, { maxAttempts: 1 })
      const failed = yield* Deferred.make<void>()
      const worker = yield* LeaseWorker.make(Jobs, (job) => Effect.fail(new Boom({ n: job.payload.n })), {
        onDead: () => Deferred.succeed(failed, undefined),
      })
      yield* wait(failed)
      yield* worker.close
      const [process] = app.named(`process ${name}`)
      const [settle] = app.named(`settle ${name}`)
      const exit = ended(process!)!
      expect(Exit.isFailure(exit)).toBe(true)
      expect(Exit.isFailure(exit) && exit.cause.reasons[0]).toMatchObject({
        _tag: "Fail",
        error: { _tag: "Boom", n: 2 },
      })
      expect(process!.attributes.get("error.type")).toBe("Boom")
      expect(settle!.attributes.get("messaging.operation.name")).toBe("fail")
    }).pipe(
      Effect.provide(LeaseQueue.layer(Jobs, { name, connection: redisUrl() })),
      Effect.provideService(Tracer.Tracer, app.tracer),
    )
  })

  it.live("without a tracer of its own, the Effect face's spans go to the global OpenTelemetry provider", () => {
    const name = q()
    return Effect.gen(function* () {
      const jobs = yield* Jobs
      yield* jobs.add({ n: 3 })
      const done = yield* Deferred.make<void>()
      const worker = yield* LeaseWorker.make(Jobs, (job) => Effect.succeed(job.payload.n), {
        onCompleted: () => Deferred.succeed(done, undefined),
      })
      yield* wait(done)
      yield* worker.close
      const spans = otel.spans().filter((s) => s.name.endsWith(` ${name}`))
      const send = spans.find((s) => s.name === `send ${name}`)
      const process = spans.find((s) => s.name === `process ${name}`)
      expect(send?.kind).toBe(SpanKind.PRODUCER)
      expect(process?.kind).toBe(SpanKind.CONSUMER)
      expect(process?.parentSpanContext?.spanId).toBe(send?.spanContext().spanId)
      expect(process?.status.code).toBe(SpanStatusCode.UNSET)
    }).pipe(Effect.provide(LeaseQueue.layer(Jobs, { name, connection: redisUrl() })))
  })
})
