/**
 * The Effect face's events: `events()` as a Stream and `waitFor` as an Effect, on the
 * same engine as the Promise face (test/events/events.test.ts).
 */
import { expect, it } from "@effect/vitest"
import { Context, Effect, Fiber, Stream } from "effect"
import { describe } from "vitest"
import { InvalidOptions, LeaseQueue, LeaseWorker, WaitForTimeout } from "../../src/effect.ts"
import { liveConnections } from "../../src/redis/Client.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"

const q = queueNamer("events-effect")

class Jobs extends Context.Service<Jobs, LeaseQueue.Service<number>>()("test/EventJobs") {}
const jobsLayer = (name: string) => LeaseQueue.layer(Jobs, { name, connection: redisUrl() })

describe("events() as a Stream", () => {
  it.live("passes on a job's added, active and completed events; the Stream's connection closes with it", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      const id = yield* jobs.add(7)
      yield* LeaseWorker.make(Jobs, (job) => Effect.succeed(job.payload * 2))
      const before = liveConnections()
      const seen = yield* jobs.events({ from: "start" }).pipe(
        Stream.takeUntil((e) => e.kind === "completed"),
        Stream.runCollect,
      )
      expect(seen.map((e) => [e.kind, e.jobId])).toEqual([
        ["added", id],
        ["active", id],
        ["completed", id],
      ])
      expect(liveConnections()).toBe(before)
    }).pipe(Effect.scoped, Effect.provide(jobsLayer(q()))),
  )

  it.live("a bad `from` fails the Stream with InvalidOptions naming the field", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      const error = yield* jobs.events({ from: "soon" }).pipe(Stream.runCollect, Effect.flip)
      expect(error).toBeInstanceOf(InvalidOptions)
      expect(error.message).toContain("from")
    }).pipe(Effect.provide(jobsLayer(q()))),
  )
})

describe("waitFor", () => {
  it.live("succeeds with the final state once the job ends; fails with WaitForTimeout when it does not", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      const stuck = yield* jobs.add(0, { delayMs: 3_600_000 })
      const timedOut = yield* jobs.waitFor(stuck, { timeoutMs: 100 }).pipe(Effect.flip)
      expect(timedOut).toBeInstanceOf(WaitForTimeout)
      const id = yield* jobs.add(1)
      const waiting = yield* Effect.forkChild(jobs.waitFor(id, { timeoutMs: 30_000 }))
      yield* LeaseWorker.make(Jobs, () => Effect.void)
      const done = yield* Fiber.join(waiting)
      expect(done).toMatchObject({ id, state: "completed" })
    }).pipe(Effect.scoped, Effect.provide(jobsLayer(q()))),
  )
})
