/**
 * A handler that interrupts itself (not interrupted by the worker: no lease loss, no
 * shutdown) is treated as a failure: retried with backoff, or dead when attempts are used
 * up. It is never left leased until the lease runs out.
 */
import { Context, Effect } from "effect"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { LeaseQueue, LeaseWorker } from "../../src/effect.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"

const name = queueNamer("self-interrupt")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

class Jobs extends Context.Service<Jobs, LeaseQueue.Service<{ readonly n: number }>>()("self-interrupt/Jobs") {}

describe("a handler that interrupts itself", () => {
  it("S4: is a failure: with maxAttempts 1 the job goes to dead at once, not after its lease", async () => {
    const q = name()
    const keys = queueKeys(q)
    const dead: string[] = []
    const failed: boolean[] = []
    const program = Effect.gen(function* () {
      const queue = yield* Jobs
      yield* LeaseWorker.make(Jobs, () => Effect.interrupt, {
        leaseMs: 30_000,
        onFailed: (_job, _cause, willRetry) => Effect.sync(() => failed.push(willRetry)),
        onDead: (job, reason) => Effect.sync(() => dead.push(`${job.id} ${reason}`)),
      })
      const id = yield* queue.add({ n: 1 }, { maxAttempts: 1 })
      yield* Effect.promise(() => until("the job dead", () => dead.length > 0, { timeoutMs: 10_000 }))
      return id
    })
    const id = await Effect.runPromise(
      Effect.scoped(program).pipe(Effect.provide(LeaseQueue.layer(Jobs, { name: q, connection: redisUrl() }))),
    )
    expect(dead).toEqual([`${id} failed`])
    expect(failed).toEqual([false])
    expect(await raw.zscore(keys.dead, id)).not.toBeNull()
    expect(await raw.zcard(keys.active)).toBe(0)
    expect(JSON.parse((await raw.hget(keys.err, id))!)).toMatchObject({ name: "HandlerInterrupted" })
  })
})
