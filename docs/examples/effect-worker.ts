// docs/effect.md, "Workers". Run: REDIS_URL=… node docs/examples/effect-worker.ts
import { Cause, Console, Context, Data, Deferred, Effect, Fiber, Layer, Ref } from "effect"
import { type Job, LeaseQueue, LeaseWorker } from "leaseq/effect"

interface Thumbnail {
  readonly image: string
}
class Thumbnails extends Context.Service<Thumbnails, LeaseQueue.Service<Thumbnail>>()("app/Thumbnails") {}
const ThumbnailsLive = LeaseQueue.layerConfig(Thumbnails, { name: "effect-thumbnails" })

class ResizeFailed extends Data.TaggedError("ResizeFailed")<{ readonly image: string }> {}

// a handler returns an Effect; its typed error retries the job (then dead, when attempts run out).
// If the lease is lost, the handler's fiber is interrupted: finalizers run, the job is not acked.
const resize = (job: Job<Thumbnail>): Effect.Effect<string, ResizeFailed> =>
  job.payload.image.endsWith(".gif") && job.attempt === 1
    ? Effect.fail(new ResizeFailed({ image: job.payload.image }))
    : Effect.succeed(`thumb-${job.payload.image}`)

// 1. a worker as a scoped Effect: it closes gracefully when its scope closes
const scoped = Effect.gen(function* () {
  const thumbnails = yield* Thumbnails
  const left = yield* Ref.make(3)
  const allDone = yield* Deferred.make<void>()
  yield* LeaseWorker.make(Thumbnails, resize, {
    concurrency: 4,
    backoff: { type: "fixed", delayMs: 50 },
    onCompleted: (job, thumb) =>
      Console.log(`${job.payload.image} -> ${thumb}`).pipe(
        Effect.andThen(Ref.updateAndGet(left, (n) => n - 1)),
        Effect.flatMap((n) => (n === 0 ? Deferred.succeed(allDone, undefined) : Effect.void)),
      ),
    onFailed: (job, cause, willRetry) =>
      Console.log(`${job.payload.image} failed (${Cause.squash(cause)}); retry: ${willRetry}`),
  })
  yield* thumbnails.addBulk([
    { payload: { image: "a.png" } },
    { payload: { image: "b.gif" } },
    { payload: { image: "c.jpg" } },
  ])
  yield* Deferred.await(allDone)
})
await Effect.runPromise(Effect.scoped(scoped).pipe(Effect.provide(ThumbnailsLive)))

// 2. a worker as a layer, for Layer.launch: it runs until the fiber is interrupted
const handled = Effect.runSync(Deferred.make<string>())
const WorkerLive = LeaseWorker.layer(Thumbnails, resize, {
  concurrency: 4,
  onCompleted: (_job, thumb) => Deferred.succeed(handled, thumb).pipe(Effect.asVoid),
})
const main = Layer.launch(WorkerLive.pipe(Layer.provide(ThumbnailsLive)))

const fiber = Effect.runFork(main)
// in a service: process.once("SIGTERM", () => Effect.runFork(Fiber.interrupt(fiber)))
await Effect.runPromise(
  Effect.gen(function* () {
    yield* (yield* Thumbnails).add({ image: "d.png" })
    yield* Console.log(`launched worker made ${yield* Deferred.await(handled)}`)
  }).pipe(Effect.provide(ThumbnailsLive)),
)
await Effect.runPromise(Fiber.interrupt(fiber)) // graceful close, then the connections close
console.log("worker layer stopped")
