// docs/testing.md, "perform" and "What was enqueued". Run: npm run example docs/examples/testing.ts
import assert from "node:assert/strict"
import { Queue } from "leaseq"
import { assertEnqueued, perform, refuteEnqueued } from "leaseq/testing"

const connection = process.env.REDIS_URL

// #region perform
interface Welcome {
  readonly to: string
}
const sendWelcome = async (job: { readonly payload: Welcome }) => `sent to ${job.payload.to}`

const done = await perform(sendWelcome, { to: "ada@example.com" }, { connection })
assert.equal(done.state, "completed")
assert.equal(done.state === "completed" && done.result, "sent to ada@example.com")

const failed = await perform(
  async () => {
    throw new Error("smtp down")
  },
  { to: "bob@example.com" },
  { connection, job: { maxAttempts: 2, backoff: { type: "fixed", delayMs: 0 } } },
)
assert.equal(failed.state, "dead")
assert.equal(failed.attempts, 2)
// #endregion
console.log("perform:", done.state, done.attempts, "|", failed.state, failed.attempts)

// #region enqueued
const queue = new Queue<Welcome>("testing-signup", { connection })
const signUp = (to: string) => queue.add({ to }) // the code under test

await signUp("ada@example.com")
await assertEnqueued(queue, { payload: { to: "ada@example.com" } })
await assertEnqueued(queue, {}, { count: 1 })
await refuteEnqueued(queue, { payload: { to: "eve@example.com" } })
// #endregion
console.log("enqueued: ok")

// clean up what this example made
await queue.obliterate({ force: true })
await queue.close()
