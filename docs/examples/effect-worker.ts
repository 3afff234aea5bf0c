// docs/effect.md, "Workers". Run: npm run example docs/examples/effect-worker.ts
import { Cause, Console, Context, Data, Effect, Fiber, Layer, Schedule } from "effect"
import { type Job, LeaseQueue, LeaseWorker } from "leaseq/effect"

interface Thumbnail {
  readonly image: string
}
class Thumbnails extends Context.Service<Thumbnails, LeaseQueue.Service<Thumbnail>>()("app/Thumbnails") {}
const ThumbnailsLive = LeaseQueue.layerConfig(Thumbnails, { name: "effect-thumbnails" })

/** Succeeds once nothing of the queue is waiting, delayed or running (polls its stats). */
const idle = Effect.gen(function* () {
  const thumbnails = yield* Thumbnails
  yield* Effect.repeat(thumbnails.stats, {
    until: (s) => s.waiting === 0 && s.delayed === 0 && s.active === 0,
    schedule: Schedule.spaced("20 millis"),
  })
})

// 1. a worker as a scoped Effect: it closes gracefully when its scope closes
// #region scoped
class ResizeFailed extends Data.TaggedError("ResizeFailed")<{ readonly image: string }> {}

// a handler returns an Effect; its typed error retries the job (then dead, when attempts run out).
// If the lease is lost, the handler's fiber is interrupted: finalizers run, the job is not acked.
const resize = (job: Job<Thumbnail>): Effect.Effect<string, ResizeFailed> =>
  job.payload.image.endsWith(".gif") && job.attempt === 1
    ? Effect.fail(new ResizeFailed({ image: job.payload.image }))
    : Effect.succeed(`thumb-${job.payload.image}`)

const scoped = Effect.gen(function* () {
  yield* LeaseWorker.make(Thumbnails, resize, {
    concurrency: 4,
    backoff: { type: "fixed", delayMs: 50 },
    onCompleted: (job, thumb) => Console.log(`${job.payload.image} -> ${thumb}`),
    onFailed: (job, cause, willRetry) =>
      Console.log(`${job.payload.image} failed (${Cause.squash(cause)}); retry: ${willRetry}`),
  })
  yield* (yield* Thumbnails).addBulk([{ payload: { image: "a.png" } }, { payload: { image: "b.gif" } }])
  yield* idle // until both are done (idle polls the stats); the worker closes with the scope
})
await Effect.runPromise(Effect.scoped(scoped).pipe(Effect.provide(ThumbnailsLive)))
// #endregion

// 2. a worker as a layer, for Layer.launch: it runs until the fiber is interrupted
// #region layer
const WorkerLive = LeaseWorker.layer(Thumbnails, resize, { concurrency: 4 })
const main = Layer.launch(WorkerLive.pipe(Layer.provide(ThumbnailsLive)))

const fiber = Effect.runFork(main)
process.once("SIGTERM", () => Effect.runFork(Fiber.interrupt(fiber))) // graceful close, then connections close
// #endregion

await Effect.runPromise(
  Effect.gen(function* () {
    yield* (yield* Thumbnails).add({ image: "d.png" })
    yield* idle // the launched worker took it and finished it
    yield* Console.log("the launched worker finished d.png")
  }).pipe(Effect.provide(ThumbnailsLive)),
)
process.kill(process.pid, "SIGTERM") // what a process manager sends to stop the service
await Effect.runPromise(Fiber.await(fiber))
console.log("worker layer stopped")
// remove what this example made: its jobs and every key of its queue
await Effect.runPromise(Thumbnails.use((thumbnails) => thumbnails.obliterate()).pipe(Effect.provide(ThumbnailsLive)))
