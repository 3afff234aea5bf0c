// docs/effect.md, "Schema payloads". Run: npm run example docs/examples/effect-schema.ts
import { Console, Context, Deferred, Effect, Layer, Schema } from "effect"
import { LeaseQueue, LeaseWorker } from "leaseq/effect"

// Type { sku: string; quantity: number }, stored as JSON { sku: string; quantity: string }
const Order = Schema.Struct({ sku: Schema.String.check(Schema.isMinLength(1)), quantity: Schema.FiniteFromString })
class Orders extends Context.Service<Orders, LeaseQueue.Service<typeof Order.Type>>()("app/Orders") {}
// another program writing the same queue without the Schema (plain JSON)
class LegacyOrders extends Context.Service<LegacyOrders, LeaseQueue.Service<unknown>>()("app/LegacyOrders") {}

const OrdersLive = LeaseQueue.layerConfig(Orders, { name: "effect-orders", schema: Order })
const QueuesLive = Layer.mergeAll(OrdersLive, LeaseQueue.layerConfig(LegacyOrders, { name: "effect-orders" }))

const program = Effect.gen(function* () {
  const orders = yield* Orders
  // encoded on add: a payload that does not match is an InvalidPayload and nothing is written
  const refused = yield* orders.add({ sku: "", quantity: 2 }).pipe(
    Effect.as("added"),
    Effect.catchTag("InvalidPayload", (e) => Effect.succeed(e.message)),
  )
  yield* Console.log(`refused: ${refused}`)

  const good = yield* orders.add({ sku: "A-1", quantity: 2 })
  const poison = yield* (yield* LegacyOrders).add({ sku: "B-2", quantity: "two" })
  const handled = yield* Deferred.make<number>()
  const dead = yield* Deferred.make<string>()
  yield* LeaseWorker.make(
    Orders,
    // decoded before the handler runs: job.payload.quantity is a number
    (job) => Deferred.succeed(handled, job.payload.quantity * 10),
    // a payload that does not decode goes straight to dead: no handler call, no retry
    { onDead: (job, reason) => Deferred.succeed(dead, `${job.id} ${reason}`).pipe(Effect.asVoid) },
  )
  yield* Console.log(`order ${good}: handler got quantity*10 = ${yield* Deferred.await(handled)}`)
  yield* Console.log(`dead: ${yield* Deferred.await(dead)}`)
  const { jobs } = yield* orders.deadJobs()
  const entry = jobs.find((j) => j.id === poison)
  yield* Console.log("dead-letter error:", JSON.stringify(entry?.error))
  yield* orders.purgeDead([poison])
})

await Effect.runPromise(Effect.scoped(program).pipe(Effect.provide(QueuesLive)))
// its worker closed with the scope: remove what this example made
await Effect.runPromise(Orders.use((orders) => orders.obliterate()).pipe(Effect.provide(OrdersLive)))
