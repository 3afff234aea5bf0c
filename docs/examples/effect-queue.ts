// docs/effect.md, "Queues as services" and "Typed errors". Run: npm run example docs/examples/effect-queue.ts
// REDIS_URL and LEASEQ_PREFIX come from Config (the environment by default).
// #region services
import { Console, Context, Effect, Layer } from "effect"
import { LeaseQueue } from "leaseq/effect"

class Invoices extends Context.Service<Invoices, LeaseQueue.Service<Invoice>>()("app/Invoices") {}
class Reports extends Context.Service<Reports, LeaseQueue.Service<Report>>()("app/Reports") {}

const QueuesLive = Layer.mergeAll(
  LeaseQueue.layerConfig(Invoices, { name: "effect-invoices", defaultJobOptions: { maxAttempts: 5 } }),
  LeaseQueue.layerConfig(Reports, { name: "effect-reports" }),
)

const program = Effect.gen(function* () {
  const invoices = yield* Invoices
  const id = yield* invoices.add({ id: 1, cents: 4200 })
  yield* invoices.addBulk([
    { payload: { id: 2, cents: 100 } },
    { payload: { id: 3, cents: 250 }, options: { delayMs: 60_000 } },
  ])
  const stats = yield* invoices.stats
  yield* Console.log(`added ${id}: ${stats.waiting} waiting, ${stats.delayed} delayed`)
})

await Effect.runPromise(program.pipe(Effect.provide(QueuesLive)))
// #endregion

// one service key per queue; the payload type is part of the key's shape
interface Invoice {
  readonly id: number
  readonly cents: number
}
interface Report {
  readonly day: string
}

const more = Effect.gen(function* () {
  const invoices = yield* Invoices
  const reports = yield* Reports
  // a dedupe key: the same report is enqueued once per hour, whatever the number of calls
  const first = yield* reports.add({ day: "2026-11-29" }, { dedupeKey: "report:2026-11-29" })
  const again = yield* reports.add({ day: "2026-11-29" }, { dedupeKey: "report:2026-11-29" })
  yield* Console.log(`report ${first === again ? "deduplicated" : "added twice"}`)

  // bad input is a typed error naming the field and the value; nothing is written
  // #region typed-error
  const message = yield* invoices.add({ id: 4, cents: 1 }, { maxAttempts: 0 }).pipe(
    Effect.as("added"),
    Effect.catchTag("InvalidOptions", (e) => Effect.succeed(`refused: ${e.message}`)),
  )
  // refused: invalid option options.maxAttempts = 0: must be from 1 to 1000
  // #endregion
  yield* Console.log(message)
  // remove what this example made: its jobs and every key of its queues
  yield* invoices.obliterate()
  yield* reports.obliterate()
})

// the layer's connection is closed when the program ends
await Effect.runPromise(more.pipe(Effect.provide(QueuesLive)))
