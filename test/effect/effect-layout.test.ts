/**
 * What the Effect face's `partitions` and `durability` add beyond the behaviour suite
 * (test/behaviour/): the same refusals as the Promise face for bad values, a worker that
 * refuses a layout of its own, the dead-letter calls over every partition, and a worker's
 * own `durability` overriding its queue's. Real Redis; waits are on Deferreds or on Redis state.
 */
import { expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Ref } from "effect"
import { describe } from "vitest"
import { LeaseQueue, LeaseWorker, NotReplicated } from "../../src/effect.ts"
import { Queue } from "../../src/index.ts"
import { onCleanup } from "../support/cleanup.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"

const q = queueNamer("effect-layout")

interface Msg {
  readonly n: number
}
class Jobs extends Context.Service<Jobs, LeaseQueue.Service<Msg>>()("test/LayoutJobs") {}

/** Wait on a Deferred, failing the test (not hanging it) after 10 s. */
const wait = <A, E>(d: Deferred.Deferred<A, E>) => Deferred.await(d).pipe(Effect.timeout("10 seconds"))

/** What a refusal names: tag, field and value. */
const named = (e: unknown) => {
  const { _tag, field, value } = e as { _tag?: string; field?: string; value?: unknown }
  return { _tag, field, value }
}

/** The Promise face's refusal of the same queue options, for comparison. */
const promiseRefusal = (options: object) => {
  try {
    const queue = new Queue("refused", { connection: redisUrl(), ...options })
    onCleanup(() => queue.close())
    return "accepted"
  } catch (e) {
    return named(e)
  }
}

describe("Effect face: partitions and durability", () => {
  const bad: ReadonlyArray<object> = [
    { partitions: 0 },
    { partitions: 1025 },
    { partitions: 1.5 },
    { durability: { replicas: 0 } },
    { durability: { timeoutMs: 0 } },
    { durability: { replicas: 1, wait: true } },
    { durability: "yes" },
  ]
  for (const options of bad) {
    it.live(`LeaseQueue.make refuses ${JSON.stringify(options)} as the Promise Queue does`, () =>
      Effect.gen(function* () {
        const exit = yield* Effect.exit(
          Effect.scoped(LeaseQueue.make<Msg>({ name: q("bad"), connection: redisUrl(), ...options })),
        )
        expect(Exit.isFailure(exit)).toBe(true)
        const error = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail")?.error : undefined
        expect(named(error)).toEqual(promiseRefusal(options))
        expect(named(error)._tag).toBe("InvalidOptions")
      }),
    )
  }

  it.live("a worker serves its queue's partitions: a partitions option of its own is refused, naming it", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        LeaseWorker.make(Jobs, () => Effect.void, { partitions: 2 } as never).pipe(Effect.scoped),
      )
      const error = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail")?.error : undefined
      expect(named(error)).toEqual({ _tag: "InvalidOptions", field: "options.partitions", value: 2 })
      const bad = yield* Effect.exit(
        LeaseWorker.make(Jobs, () => Effect.void, { durability: { replicas: 99 } }).pipe(Effect.scoped),
      )
      const badError = Exit.isFailure(bad) ? bad.cause.reasons.find((r) => r._tag === "Fail")?.error : undefined
      expect(named(badError)).toEqual({ _tag: "InvalidOptions", field: "durability.replicas", value: 99 })
      // nothing was started: the queue is untouched
      expect((yield* (yield* Jobs).stats).counters.added).toBe(0)
    }).pipe(
      Effect.provide(LeaseQueue.layer(Jobs, { name: q("worker-refuses"), connection: redisUrl(), partitions: 3 })),
    ),
  )

  it.live("deadJobs, retryDead and purgeDead cover every partition", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      const ids = yield* jobs.addBulk([1, 2, 3, 4].map((n) => ({ payload: { n }, options: { maxAttempts: 1 } })))
      const dead = yield* Deferred.make<void>()
      const count = yield* Ref.make(0)
      const worker = yield* LeaseWorker.make(Jobs, () => Effect.fail("no"), {
        concurrency: 4,
        onDead: () =>
          Ref.updateAndGet(count, (n) => n + 1).pipe(
            Effect.flatMap((n) => (n === 4 ? Deferred.succeed(dead, undefined) : Effect.void)),
          ),
      })
      yield* wait(dead)
      yield* worker.close
      const stats = yield* jobs.stats
      expect(stats.dead).toBe(4)
      // spread over more than one partition, so the calls below must look in each
      expect(stats.partitions?.filter((p) => p.dead > 0).length).toBeGreaterThan(1)
      const page = yield* jobs.deadJobs()
      expect(page.total).toBe(4)
      expect(page.jobs.map((j) => j.id).sort()).toEqual([...ids].sort())
      expect(yield* jobs.retryDead([ids[0]!, ids[1]!])).toBe(2)
      expect(yield* jobs.purgeDead([ids[2]!, ids[3]!])).toBe(2)
      expect(yield* jobs.stats).toMatchObject({ dead: 0, waiting: 2 })
    }).pipe(Effect.provide(LeaseQueue.layer(Jobs, { name: q("dead"), connection: redisUrl(), partitions: 4 }))),
  )

  // the suite's Redis has no replica: every WAIT answers 0 once its timeout is up
  it.live("a worker follows its queue's durability unless it sets its own: false completes unconfirmed, silently", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      const added = yield* Effect.exit(jobs.add({ n: 1 }))
      const addError = Exit.isFailure(added) ? added.cause.reasons.find((r) => r._tag === "Fail")?.error : undefined
      expect(addError).toBeInstanceOf(NotReplicated)
      const completed = yield* Deferred.make<void>()
      const errors = yield* Ref.make<ReadonlyArray<unknown>>([])
      const worker = yield* LeaseWorker.make(Jobs, () => Effect.void, {
        durability: false,
        onCompleted: () => Deferred.succeed(completed, undefined).pipe(Effect.asVoid),
        onError: (e) => Ref.update(errors, (xs) => [...xs, e]),
      })
      yield* wait(completed)
      yield* worker.close
      expect(yield* Ref.get(errors)).toEqual([])
      expect((yield* jobs.stats).counters.completed).toBe(1)
    }).pipe(
      Effect.provide(
        LeaseQueue.layer(Jobs, {
          name: q("durable"),
          connection: redisUrl(),
          durability: { replicas: 1, timeoutMs: 50 },
        }),
      ),
    ),
  )
})
