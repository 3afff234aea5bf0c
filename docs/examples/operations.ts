// docs/operations.md, the eviction-policy warning and TLS. Run: npm run example docs/examples/operations.ts
import { readFileSync } from "node:fs"
import { EvictionPolicyWarning, type Job, Queue, Worker } from "leaseq"

/** How an operator is told; here, a line on stderr. */
const alert = (message: string) => console.error(`ALERT ${message}`)

// #region eviction-warning
process.on("warning", (w) => {
  if ((w as { code?: string }).code === EvictionPolicyWarning.code) alert(w.message)
})
// #endregion

/** ioredis options with TLS: type-checked here, not called (the suite's Redis has no TLS; test/reliability/security.test.ts runs TLS for real). */
export const tlsQueue = (handler: (job: Job<unknown>) => Promise<void>) => {
  const connection = {
    host: "redis.internal",
    port: 6380,
    username: "leaseq-app",
    password: process.env.REDIS_PASSWORD,
    tls: { ca: readFileSync("/etc/leaseq/ca.pem") },
  }
  const queue = new Queue("emails", { connection })
  const worker = new Worker("emails", handler, { connection }) // its blocking connection uses TLS too
  return { queue, worker }
}

// the suite's Redis runs with noeviction: the listener stays quiet
const queue = new Queue("operations-example", { connection: process.env.REDIS_URL })
console.log("waiting:", (await queue.stats()).waiting)
await queue.close()
