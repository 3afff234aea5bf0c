// docs/effect.md, "Partitions and durability"; docs/scaling.md. Run: REDIS_URL=… node docs/examples/effect-partitions.ts
import { Console, Context, Deferred, Effect, Layer, Ref } from "effect"
import { LeaseQueue, LeaseWorker } from "leaseq/effect"

interface Order {
  readonly id: number
}

class Orders extends Context.Service<Orders, LeaseQueue.Service<Order>>()("app/Orders") {}
class Audits extends Context.Service<Audits, LeaseQueue.Service<Order>>()("app/Audits") {}

const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"
// one queue stored as 4 sub-queues (orders~0 … orders~3): on a cluster they spread over the masters
const OrdersLive = LeaseQueue.layer(Orders, { name: "effect-sharded", connection: url, partitions: 4 })
// adds succeed only once a replica has them (Redis WAIT); this example's Redis may have none
const AuditsLive = LeaseQueue.layer(Audits, {
  name: "effect-audits",
  connection: url,
  durability: { replicas: 1, timeoutMs: 200 },
})

const program = Effect.gen(function* () {
  const orders = yield* Orders
  const done = yield* Deferred.make<void>()
  const count = yield* Ref.make(0)
  // the worker serves every partition of its queue: one engine worker per partition
  yield* LeaseWorker.make(Orders, (job) => Effect.succeed(job.payload.id), {
    concurrency: 8,
    onCompleted: () =>
      Ref.updateAndGet(count, (n) => n + 1).pipe(
        Effect.flatMap((n) => (n === 8 ? Deferred.succeed(done, undefined) : Effect.void)),
      ),
  })
  yield* orders.addBulk([1, 2, 3, 4, 5, 6, 7, 8].map((id) => ({ payload: { id } })))
  yield* Deferred.await(done)
  const stats = yield* orders.stats
  yield* Console.log(`completed 8 jobs over ${stats.partitions?.length} partitions; ${stats.waiting} waiting`)

  const audits = yield* Audits
  const outcome = yield* audits.add({ id: 1 }).pipe(
    Effect.as("added and replicated"),
    // written on the master, not confirmed by a replica in time: the error says so and carries the job id
    Effect.catchTag("NotReplicated", (e) => Effect.succeed(`written, not replicated (${e.acknowledged} replicas)`)),
  )
  yield* Console.log(`audit: ${outcome}`)
})

await Effect.runPromise(Effect.scoped(program).pipe(Effect.provide(Layer.mergeAll(OrdersLive, AuditsLive))))
