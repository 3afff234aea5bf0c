// docs/getting-started.md, "Errors". Run: npm run example docs/examples/errors.ts
import { InvalidOptions, InvalidPayload, InvalidQueueName, Queue } from "leaseq"

try {
  new Queue("orders:eu", { connection: process.env.REDIS_URL })
} catch (e) {
  if (e instanceof InvalidQueueName) console.log(e.message)
}

const queue = new Queue("errors-example", { connection: process.env.REDIS_URL })
// #region payload
try {
  await queue.add({ amount: 10n })
} catch (e) {
  if (e instanceof InvalidPayload) console.log(e.message)
  // invalid payload: contains a BigInt at key "amount"; convert it to a string or number
}
// #endregion
try {
  await queue.add({ amount: 10 }, { maxAttempts: 0 })
} catch (e) {
  if (e instanceof InvalidOptions) console.log(e.message, `(field ${e.field})`)
}
console.log("nothing was written:", (await queue.stats()).waiting === 0)
await queue.close()
