/**
 * The Effect face of "user callbacks never stop a worker" and "a worker that cannot
 * work says so": a result JSON cannot hold fails its job, a backoff's answer is checked,
 * and a worker started on an unreachable Redis reports it through `onError` while it waits.
 */
import { expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber } from "effect"
import { describe } from "vitest"
import { InvalidPayload, LeaseQueue, LeaseWorker, RedisUnavailable } from "../../src/effect.ts"
import { TcpProxy } from "../support/proxy.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"

const q = queueNamer("rel-callbacks-effect")
class Jobs extends Context.Service<Jobs, LeaseQueue.Service<number>>()("test/CallbackJobs") {}
const jobsLayer = (name: string, connection = redisUrl()) => LeaseQueue.layer(Jobs, { name, connection })
/** Wait on a Deferred, failing the test (not hanging it) after 15 s. */
const wait = <A, E>(d: Deferred.Deferred<A, E>) => Deferred.await(d).pipe(Effect.timeout("15 seconds"))

describe("Effect face", () => {
  it.live("N5: a handler succeeding with 10n (results are kept): the job fails with a clear error", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      const dead = yield* Deferred.make<readonly [string, string, unknown]>()
      const completed = yield* Deferred.make<string>()
      yield* LeaseWorker.make(Jobs, () => Effect.succeed(10n), {
        leaseMs: 1000,
        onDead: (ref, reason, error) => Deferred.succeed(dead, [ref.id, reason, error]).pipe(Effect.asVoid),
        onCompleted: (job) => Deferred.succeed(completed, job.id).pipe(Effect.asVoid),
      })
      const id = yield* jobs.add(1, { maxAttempts: 1 })
      const [deadId, reason, error] = yield* wait(dead)
      expect([deadId, reason]).toEqual([id, "failed"])
      expect(error).toBeInstanceOf(InvalidPayload)
      expect((error as InvalidPayload).message).toMatch(/^invalid result: cannot be serialised.*BigInt/)
      expect(yield* Deferred.isDone(completed)).toBe(false)
      expect((yield* jobs.stats).counters).toMatchObject({ completed: 0, dead: 1, lostLeases: 0 })
    }).pipe(Effect.provide(jobsLayer(q("bigint")))),
  )

  it.live("a backoff answering -1: no retry, the job goes to dead after one attempt", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      const dead = yield* Deferred.make<string>()
      let calls = 0
      yield* LeaseWorker.make(
        Jobs,
        () =>
          Effect.suspend(() => {
            calls++
            return Effect.fail("nope")
          }),
        { backoff: () => -1, onDead: (_ref, reason) => Deferred.succeed(dead, reason).pipe(Effect.asVoid) },
      )
      yield* jobs.add(1, { maxAttempts: 5 })
      expect(yield* wait(dead)).toBe("failed")
      expect(calls).toBe(1)
    }).pipe(Effect.provide(jobsLayer(q("no-retry")))),
  )

  it.live("a worker started on an unreachable Redis reports RedisUnavailable naming the server while it waits", () => {
    const target = new URL(redisUrl())
    return Effect.acquireRelease(
      Effect.promise(() => TcpProxy.start({ host: target.hostname, port: Number(target.port || 6379) })),
      (proxy) => Effect.promise(() => proxy.close()),
    ).pipe(
      Effect.flatMap((proxy) =>
        Effect.gen(function* () {
          proxy.cut()
          const reported = yield* Deferred.make<unknown>()
          const service = yield* LeaseQueue.make<number>({ name: q("unreachable"), connection: proxy.url })
          const starting = yield* Effect.forkChild(
            LeaseWorker.make(Jobs, () => Effect.void, {
              onError: (e) => Deferred.succeed(reported, e).pipe(Effect.asVoid),
            }).pipe(Effect.provideService(Jobs, service)),
          )
          const error = yield* wait(reported)
          expect(error).toBeInstanceOf(RedisUnavailable)
          expect((error as RedisUnavailable).message).toContain(`127.0.0.1:${proxy.port}`)
          // Redis comes back: the worker starts
          proxy.heal()
          const worker = yield* Fiber.join(starting)
          expect(yield* worker.state).toBe("running")
          yield* worker.close
        }),
      ),
      Effect.scoped,
    )
  })

  it.live(
    "a worker that has not reached Redis holds nothing: closing its scope ends at once, not after shutdownGraceMs",
    () => {
      const target = new URL(redisUrl())
      return Effect.acquireRelease(
        Effect.promise(() => TcpProxy.start({ host: target.hostname, port: Number(target.port || 6379) })),
        (proxy) => Effect.promise(() => proxy.close()),
      ).pipe(
        Effect.flatMap((proxy) =>
          Effect.gen(function* () {
            proxy.cut()
            const reported = yield* Deferred.make<unknown>()
            const service = yield* LeaseQueue.make<number>({ name: q("starting-close"), connection: proxy.url })
            let started = false
            // the worker's own scope: closing it is the worker's close; the grace is 10 minutes, far past the test's timeout
            const running = yield* Effect.forkChild(
              Effect.scoped(
                LeaseWorker.make(Jobs, () => Effect.void, {
                  shutdownGraceMs: 600_000,
                  onError: (e) => Deferred.succeed(reported, e).pipe(Effect.asVoid),
                }).pipe(
                  Effect.tap(() => Effect.sync(() => (started = true))),
                  Effect.andThen(Effect.never),
                ),
              ).pipe(Effect.provideService(Jobs, service)),
            )
            expect(yield* wait(reported)).toBeInstanceOf(RedisUnavailable)
            yield* Fiber.interrupt(running)
            expect(started).toBe(false)
            // Redis back: nothing of the closed worker starts or serves the queue
            proxy.heal()
            const jobs = yield* LeaseQueue.make<number>({ name: q("starting-close"), connection: redisUrl() })
            yield* jobs.add(1)
            expect((yield* jobs.workers).length).toBe(0)
          }),
        ),
        Effect.scoped,
      )
    },
  )
})
