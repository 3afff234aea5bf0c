/**
 * A blocked event loop told through the Effect face (issue 32): an in-process handler
 * that keeps the worker's thread busy for more than half its lease is reported to the
 * worker's `onLoopBlocked` hook, as a {@link LoopBlocked} naming the queue and the lease.
 */
import { expect, it } from "@effect/vitest"
import { Context, Deferred, Effect } from "effect"
import { describe } from "vitest"
import { LeaseQueue, LeaseWorker, LoopBlocked } from "../../src/effect.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"

const q = queueNamer("effect-loop-blocked")

class Jobs extends Context.Service<Jobs, LeaseQueue.Service<{ readonly ms: number }>>()("test/LoopBlockedJobs") {}

/** Keep this thread busy for `ms` (no await, no timer can run). */
const spin = (ms: number) => {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // blocks
  }
}

describe("loop-blocked, Effect face", () => {
  const name = q("spin")
  it.live("a handler that blocks the loop for more than half its lease is told to onLoopBlocked", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      const told = yield* Deferred.make<LoopBlocked>()
      yield* LeaseWorker.make(Jobs, (job) => Effect.sync(() => spin(job.payload.ms)), {
        leaseMs: 2000,
        onLoopBlocked: (blocked) => Deferred.succeed(told, blocked).pipe(Effect.asVoid),
      })
      yield* jobs.add({ ms: 1500 })
      const blocked = yield* Deferred.await(told).pipe(Effect.timeout("30 seconds"))
      expect(blocked).toBeInstanceOf(LoopBlocked)
      expect(blocked).toMatchObject({ queue: name, leaseMs: 2000 })
      expect(blocked.message).toContain('use isolation: "thread"')
    }).pipe(Effect.scoped, Effect.provide(LeaseQueue.layer(Jobs, { name, connection: redisUrl() }))),
  )
})
