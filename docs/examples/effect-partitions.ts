// docs/effect.md, "Partitions and durability"; docs/scaling.md. Run: npm run example docs/examples/effect-partitions.ts
import { Console, Context, Deferred, Effect, Layer, Ref } from "effect"
import { LeaseQueue, LeaseWorker } from "leaseq/effect"

interface Order {
  readonly id: number
}

class Orders extends Context.Service<Orders, LeaseQueue.Service<Order>>()("app/Orders") {}
class Audits extends Context.Service<Audits, LeaseQueue.Service<Order>>()("app/Audits") {}

const connection = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"
// #region layers
// one queue stored as 4 sub-queues (effect-sharded~0 … ~3): on a cluster they spread over the masters
const OrdersLive = LeaseQueue.layer(Orders, { name: "effect-sharded", connection, partitions: 4 })
// adds succeed only once a replica has them (Redis WAIT); its workers' completes wait too
const AuditsLive = LeaseQueue.layer(Audits, {
  name: "effect-audits",
  connection,
  durability: { replicas: 1, timeoutMs: 200 },
})
// #endregion

const program = Effect.gen(function* () {
  const done = yield* Deferred.make<void>()
  const count = yield* Ref.make(0)
  const onCompleted = () =>
    Ref.updateAndGet(count, (n) => n + 1).pipe(
      Effect.flatMap((n) => (n === 8 ? Deferred.succeed(done, undefined) : Effect.void)),
    )
  // #region use
  const orders = yield* Orders
  // the worker serves every partition of its queue: one engine worker per partition
  yield* LeaseWorker.make(Orders, (job) => Effect.succeed(job.payload.id), { concurrency: 8, onCompleted })
  yield* orders.addBulk([1, 2, 3, 4, 5, 6, 7, 8].map((id) => ({ payload: { id } })))
  yield* Deferred.await(done)
  const stats = yield* orders.stats // summed; each partition's own in stats.partitions
  yield* Console.log(`completed 8 jobs over ${stats.partitions?.length} partitions; ${stats.waiting} waiting`)

  const audits = yield* Audits
  const outcome = yield* audits.add({ id: 1 }).pipe(
    Effect.as("added and replicated"),
    // written on the master, not confirmed by a replica in time: the error says so and carries the job id
    Effect.catchTag("NotReplicated", (e) => Effect.succeed(`written, not replicated (${e.acknowledged} replicas)`)),
  )
  yield* Console.log(`audit: ${outcome}`)
  // #endregion
})

const QueuesLive = Layer.mergeAll(OrdersLive, AuditsLive)
await Effect.runPromise(Effect.scoped(program).pipe(Effect.provide(QueuesLive)))
// its worker closed with the scope: remove what this example made, every partition
const cleanUp = Effect.all([Orders.use((q) => q.obliterate()), Audits.use((q) => q.obliterate())])
await Effect.runPromise(cleanUp.pipe(Effect.provide(QueuesLive)))
