/**
 * The Effect face against real Redis: queue services and layers, scoped workers and
 * worker layers, Schema payloads (encode on add, decode on reserve, invalid-payload
 * dead path), lease loss interrupting the handler's fiber, and typed errors that
 * write nothing. No fixed sleeps: every wait is on a Deferred or on Redis state.
 */
import { expect, it } from "@effect/vitest"
import { Cause, ConfigProvider, Context, Data, Deferred, Effect, Fiber, Layer, Option, Ref, Schema } from "effect"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe } from "vitest"
import {
  InvalidOptions,
  InvalidPayload,
  InvalidQueueName,
  type Job,
  LeaseQueue,
  LeaseWorker,
} from "../../src/effect.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { liveConnections } from "../../src/redis/Client.ts"
import { expireLease } from "../support/lease.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"

const q = queueNamer("effect")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

interface Msg {
  readonly n: number
}
class Jobs extends Context.Service<Jobs, LeaseQueue.Service<Msg>>()("test/Jobs") {}
const Email = Schema.Struct({ to: Schema.String.check(Schema.isMinLength(1)), count: Schema.FiniteFromString })
class Emails extends Context.Service<Emails, LeaseQueue.Service<typeof Email.Type>>()("test/Emails") {}
class RawEmails extends Context.Service<RawEmails, LeaseQueue.Service<unknown>>()("test/RawEmails") {}
class Multiplier extends Context.Service<Multiplier, { readonly factor: number }>()("test/Multiplier") {}
class Boom extends Data.TaggedError("Boom")<{ readonly attempt: number }> {}

const jobsLayer = (name: string) => LeaseQueue.layer(Jobs, { name, connection: redisUrl() })
/** Wait on a Deferred, failing the test (not hanging it) after 10 s. */
const wait = <A, E>(d: Deferred.Deferred<A, E>) => Deferred.await(d).pipe(Effect.timeout("10 seconds"))
/** A Deferred completed once `n` values were collected. */
const collector = <A>(n: number) =>
  Effect.gen(function* () {
    const items = yield* Ref.make<ReadonlyArray<A>>([])
    const full = yield* Deferred.make<ReadonlyArray<A>>()
    const push = (a: A) =>
      Ref.updateAndGet(items, (xs) => [...xs, a]).pipe(
        Effect.flatMap((xs) => (xs.length >= n ? Deferred.succeed(full, xs) : Effect.void)),
        Effect.asVoid,
      )
    return { push, all: wait(full) }
  })
const dump = (name: string, prefix?: string) => Effect.promise(() => dumpQueue(raw, name, prefix))

describe("queue service and scoped worker", () => {
  const name = q("basic")
  it.live("add and addBulk through the layer; a scoped worker completes them with hooks", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      const id = yield* jobs.add({ n: 1 })
      const ids = yield* jobs.addBulk([{ payload: { n: 2 } }, { payload: { n: 3 }, options: { maxAttempts: 5 } }])
      expect(ids).toHaveLength(2)
      expect((yield* jobs.stats).waiting).toBe(3)

      const done = yield* collector<readonly [string, number]>(3)
      const worker = yield* LeaseWorker.make(Jobs, (job) => Effect.succeed(job.payload.n * 10), {
        concurrency: 2,
        onCompleted: (job, result) => done.push([job.id, result]),
      })
      const results = yield* done.all
      expect([...results].sort((a, b) => a[1] - b[1])).toEqual([
        [id, 10],
        [ids[0], 20],
        [ids[1], 30],
      ])
      const stats = yield* jobs.stats
      expect(stats).toMatchObject({ waiting: 0, active: 0, dead: 0 })
      expect(stats.counters).toMatchObject({ added: 3, completed: 3, failed: 0 })
      yield* worker.close
      expect(yield* worker.state).toBe("closed")
    }).pipe(Effect.provide(jobsLayer(name))),
  )

  it.live("a failing handler is retried, then dead; onFailed gets the typed cause", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      const failed = yield* collector<readonly [number, Option.Option<Boom>, boolean]>(2)
      const dead = yield* Deferred.make<readonly [string, string]>()
      yield* LeaseWorker.make(
        Jobs,
        (job): Effect.Effect<never, Boom> => Effect.fail(new Boom({ attempt: job.attempt })),
        {
          backoff: { type: "fixed", delayMs: 0 },
          onFailed: (job, cause, willRetry) => failed.push([job.attempt, Cause.findErrorOption(cause), willRetry]),
          onDead: (ref, reason) => Deferred.succeed(dead, [ref.id, reason]).pipe(Effect.asVoid),
        },
      )
      const id = yield* jobs.add({ n: 1 }, { maxAttempts: 2 })
      expect(yield* wait(dead)).toEqual([id, "failed"])
      const seen = yield* failed.all
      expect(seen).toEqual([
        [1, Option.some(new Boom({ attempt: 1 })), true],
        [2, Option.some(new Boom({ attempt: 2 })), false],
      ])
      const { jobs: deadJobs } = yield* jobs.deadJobs()
      expect(deadJobs).toHaveLength(1)
      expect(deadJobs[0]).toMatchObject({ id, failures: 2, lostLeases: 0 })
      expect((yield* jobs.stats).counters).toMatchObject({ failed: 2, dead: 1, completed: 0 })
      expect(yield* Effect.flip(jobs.purgeDead("x" as never))).toMatchObject({ _tag: "InvalidOptions", field: "ids" })
      expect(yield* jobs.retryDead(["no-such-job"])).toBe(0)
      expect(yield* jobs.purgeDead([id])).toBe(1)
      expect((yield* jobs.deadJobs()).total).toBe(0)
    }).pipe(Effect.provide(jobsLayer(q("retry")))),
  )

  it.live("a handler that throws instead of returning an Effect fails the job with a defect", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      const failed = yield* Deferred.make<readonly [boolean, boolean]>()
      yield* LeaseWorker.make(
        Jobs,
        (): Effect.Effect<void> => {
          throw new Error("thrown, not returned")
        },
        {
          onFailed: (_job, cause, willRetry) =>
            Deferred.succeed(failed, [Cause.hasDies(cause), willRetry]).pipe(Effect.asVoid),
        },
      )
      const id = yield* jobs.add({ n: 1 }, { maxAttempts: 1 })
      expect(yield* wait(failed)).toEqual([true, false])
      const { jobs: dead } = yield* jobs.deadJobs()
      expect(dead[0]).toMatchObject({ id, failures: 1 })
      expect((dead[0]!.error as { message: string }).message).toBe("thrown, not returned")
    }).pipe(Effect.provide(jobsLayer(q("throws")))),
  )

  it.live("closing a queue closes its workers first: a running job is released, not lost", () =>
    Effect.gen(function* () {
      const name = q("order")
      const errors = yield* Ref.make(0)
      const worker = yield* Effect.gen(function* () {
        const jobs = yield* Jobs
        const started = yield* Deferred.make<void>()
        // the worker lives in the outer scope, the queue in the inner one: the queue closes first
        const worker = yield* LeaseWorker.make(
          Jobs,
          () => Deferred.succeed(started, undefined).pipe(Effect.andThen(Effect.never)),
          {
            shutdownGraceMs: 0,
            onError: () => Ref.update(errors, (n) => n + 1),
          },
        )
        yield* jobs.add({ n: 1 })
        yield* wait(started)
        return worker
      }).pipe(Effect.provide(jobsLayer(name)))
      expect(yield* worker.state).toBe("closed")
      expect(yield* Ref.get(errors)).toBe(0)
      const keys = queueKeys(name)
      expect(yield* Effect.promise(() => raw.llen(keys.wait))).toBe(1)
      expect(yield* Effect.promise(() => raw.zcard(keys.active))).toBe(0)
      expect(yield* Effect.promise(() => raw.hget(keys.meta, "released"))).toBe("1")
    }),
  )

  it.live("the service is closed with its scope: later calls fail with QueueClosed, no connection left", () =>
    Effect.gen(function* () {
      const before = liveConnections()
      const service = yield* Effect.scoped(LeaseQueue.make<Msg>({ name: q("scope"), connection: redisUrl() }))
      expect(liveConnections()).toBe(before)
      const error = yield* Effect.flip(service.add({ n: 1 }))
      expect(error._tag).toBe("QueueClosed")
      expect((yield* Effect.flip(service.stats))._tag).toBe("QueueClosed")
    }),
  )
})

describe("Schema payloads", () => {
  const both = (name: string) =>
    Layer.mergeAll(
      LeaseQueue.layer(Emails, { name, schema: Email, connection: redisUrl() }),
      LeaseQueue.layer(RawEmails, { name, connection: redisUrl() }),
    )

  it.live("encodes on add (stored as the Schema's JSON) and decodes for the handler", () =>
    Effect.gen(function* () {
      const emails = yield* Emails
      // a plain JSON worker on the same queue sees what is stored: the encoded form
      yield* emails.add({ to: "a@example.com", count: 5 })
      const stored = yield* Deferred.make<unknown>()
      yield* Effect.scoped(
        LeaseWorker.make(RawEmails, (job) => Deferred.succeed(stored, job.payload)).pipe(Effect.andThen(wait(stored))),
      )
      expect(yield* wait(stored)).toEqual({ to: "a@example.com", count: "5" })
      // the Schema worker gets the decoded payload
      yield* emails.add({ to: "b@example.com", count: 6 })
      const got = yield* Deferred.make<typeof Email.Type>()
      yield* LeaseWorker.make(Emails, (job) => Deferred.succeed(got, job.payload))
      expect(yield* wait(got)).toEqual({ to: "b@example.com", count: 6 })
    }).pipe(Effect.provide(both(q("schema")))),
  )

  it.live("a payload that does not decode goes to dead as invalid-payload, never reaching the handler", () =>
    Effect.gen(function* () {
      const rawEmails = yield* RawEmails
      const id = yield* rawEmails.add({ to: 42, count: 3 })
      let called = false
      const dead = yield* Deferred.make<readonly [string, string, unknown]>()
      yield* LeaseWorker.make(
        Emails,
        () =>
          Effect.sync(() => {
            called = true
          }),
        { onDead: (ref, reason, error) => Deferred.succeed(dead, [ref.id, reason, error]).pipe(Effect.asVoid) },
      )
      const [deadId, reason, error] = yield* wait(dead)
      expect([deadId, reason]).toEqual([id, "invalid-payload"])
      expect(error).toBeInstanceOf(InvalidPayload)
      expect(called).toBe(false)
      const emails = yield* Emails
      const { jobs } = yield* emails.deadJobs()
      expect(jobs).toHaveLength(1)
      expect(jobs[0]).toMatchObject({ id, failures: 0, lostLeases: 0, payload: '{"to":42,"count":3}' })
      const stored = jobs[0]!.error as { reason: string; message: string }
      expect(stored.reason).toBe("invalid-payload")
      expect(stored.message).toContain("does not match the queue's schema")
      expect(stored.message).toContain('Expected string\n  at ["to"]')
      expect(stored.message).toContain('at ["count"]')
      expect((yield* emails.stats).counters).toMatchObject({ failed: 0, dead: 1, completed: 0 })
    }).pipe(Effect.provide(both(q("poison")))),
  )

  it.live("a payload that fails to encode is InvalidPayload naming the field; nothing is written", () =>
    Effect.gen(function* () {
      const emails = yield* Emails
      yield* emails.add({ to: "first@example.com", count: 1 })
      const before = yield* dump(emails.name)
      const empty = yield* Effect.flip(emails.add({ to: "", count: 1 }))
      expect(empty).toBeInstanceOf(InvalidPayload)
      expect(empty).toMatchObject({ field: "payload" })
      expect(empty.message).toContain("Expected a value with a length of at least 1")
      const bulk = yield* Effect.flip(
        emails.addBulk([{ payload: { to: "ok@example.com", count: 2 } }, { payload: { to: 7 } as never }]),
      )
      expect(bulk).toMatchObject({ _tag: "InvalidPayload", field: "jobs[1].payload" })
      expect(bulk.message).toContain('at ["to"]')
      expect(yield* dump(emails.name)).toEqual(before)
    }).pipe(Effect.provide(both(q("encode")))),
  )
})

describe("lease loss", () => {
  it.live("a lost lease interrupts the handler's fiber and the job is not acknowledged", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      const started = yield* Deferred.make<Job<Msg>>()
      const interrupted = yield* Deferred.make<void>()
      const lost = yield* Deferred.make<string>()
      yield* LeaseWorker.make(
        Jobs,
        (job) =>
          Deferred.succeed(started, job).pipe(
            Effect.andThen(Effect.never),
            Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)),
          ),
        {
          // the lease is taken by the test, not by time: a quick heartbeat tells it, and a busy
          // machine cannot make it self-fence first (reason "self-fenced")
          heartbeatMs: 100,
          sweep: false,
          onLeaseLost: (_ref, reason) => Deferred.succeed(lost, reason).pipe(Effect.asVoid),
        },
      )
      const id = yield* jobs.add({ n: 1 }, { maxAttempts: 1 })
      const job = yield* wait(started)
      expect(job.id).toBe(id)
      // steal the lease: its deadline goes into the past (so no heartbeat can revive it), then a sweep reclaims it
      yield* Effect.promise(() => expireLease(raw, queueKeys(jobs.name), id))
      const swept = yield* jobs.sweep()
      expect(swept).toMatchObject({ reclaimed: 1, dead: 1 })
      yield* wait(interrupted)
      expect(yield* wait(lost)).toBe("lease-lost")
      expect(job.signal.aborted).toBe(true)
      expect((job.signal.reason as { _tag: string })._tag).toBe("LeaseLost")
      const { jobs: dead } = yield* jobs.deadJobs()
      expect(dead[0]).toMatchObject({ id, lostLeases: 1, failures: 0 })
      expect((yield* jobs.stats).counters).toMatchObject({ completed: 0, lostLeases: 1 })
    }).pipe(Effect.provide(jobsLayer(q("lease")))),
  )
})

describe("bad input: typed errors, nothing written", () => {
  const name = q("bad")
  const fails = <A, E>(layer: Layer.Layer<A, E>) => Effect.flip(Effect.scoped(Layer.build(layer)))

  it.live("bad queue options fail the layer before connecting", () =>
    Effect.gen(function* () {
      const before = liveConnections()
      const badName = yield* fails(LeaseQueue.layer(Jobs, { name: "bad{name}", connection: redisUrl() }))
      expect(badName).toBeInstanceOf(InvalidQueueName)
      expect(badName.message).toContain("bad{name}")
      const size = yield* fails(LeaseQueue.layer(Jobs, { name, connection: redisUrl(), maxPayloadBytes: 0 }))
      expect(size).toMatchObject({ _tag: "InvalidOptions", field: "maxPayloadBytes", value: 0 })
      const typo = yield* fails(LeaseQueue.layer(Jobs, { name, connection: redisUrl(), leaseMs: 5 } as never))
      expect(typo).toMatchObject({ _tag: "InvalidOptions", field: "options.leaseMs" })
      const url = yield* fails(LeaseQueue.layer(Jobs, { name, connection: "http://user:secret@localhost" }))
      expect(url).toMatchObject({ _tag: "InvalidOptions", field: "connection" })
      expect(url.message).not.toContain("secret")
      const schema = yield* fails(LeaseQueue.layer(Jobs, { name, schema: {} as never }))
      expect(schema).toMatchObject({ _tag: "InvalidOptions", field: "schema" })
      expect(liveConnections()).toBe(before)
    }),
  )

  it.live("bad job options and payloads are typed errors and leave the queue byte-for-byte unchanged", () =>
    Effect.gen(function* () {
      const jobs = yield* Jobs
      yield* jobs.add({ n: 0 }, { delayMs: 60_000 })
      yield* jobs.add({ n: 1 })
      const before = yield* dump(name)
      const attempts = yield* Effect.flip(jobs.add({ n: 2 }, { maxAttempts: 0 }))
      expect(attempts).toBeInstanceOf(InvalidOptions)
      expect(attempts).toMatchObject({ field: "options.maxAttempts", value: 0 })
      const bigint = yield* Effect.flip(jobs.add({ n: 10n } as never))
      expect(bigint).toMatchObject({ _tag: "InvalidPayload", field: "payload" })
      const bulk = yield* Effect.flip(
        jobs.addBulk([{ payload: { n: 3 } }, { payload: { n: 4 }, options: { delayMs: -1 } }]),
      )
      expect(bulk).toMatchObject({ _tag: "InvalidOptions", field: "jobs[1].options.delayMs", value: -1 })
      const shape = yield* Effect.flip(jobs.addBulk([{ n: 5 } as never]))
      expect(shape).toMatchObject({ _tag: "InvalidOptions", field: "jobs[0]" })
      const sweep = yield* Effect.flip(jobs.sweep({ limit: 0 }))
      expect(sweep).toMatchObject({ _tag: "InvalidOptions", field: "limit", value: 0 })
      const page = yield* Effect.flip(jobs.deadJobs({ count: 0 }))
      expect(page).toMatchObject({ _tag: "InvalidOptions", field: "count" })
      // catchTag picks the error apart by its tag
      const field = yield* jobs
        .add({ n: 6 }, { dedupeTtlMs: 10 } as never) // refused by the types too; here: at run time
        .pipe(Effect.catchTag("InvalidOptions", (e) => Effect.succeed(e.field)))
      expect(field).toBe("options.dedupeTtlMs")
      expect(yield* dump(name)).toEqual(before)
    }).pipe(Effect.provide(jobsLayer(name))),
  )

  it.live("bad worker options fail the worker with InvalidOptions; nothing starts", () =>
    Effect.gen(function* () {
      const before = yield* dump(name)
      const handler = () => Effect.void
      const bad = (options: object) => Effect.flip(Effect.scoped(LeaseWorker.make(Jobs, handler, options as never)))
      expect(yield* bad({ concurrency: 0 })).toMatchObject({ _tag: "InvalidOptions", field: "concurrency", value: 0 })
      expect(yield* bad({ prefix: "other" })).toMatchObject({ _tag: "InvalidOptions", field: "options.prefix" })
      expect(yield* bad({ leaseMS: 100 })).toMatchObject({ _tag: "InvalidOptions", field: "options.leaseMS" })
      expect(yield* bad({ onCompleted: 1 })).toMatchObject({ _tag: "InvalidOptions", field: "options.onCompleted" })
      expect(yield* bad({ backoff: { type: "linear" } })).toMatchObject({ field: "backoff.type" })
      expect(yield* dump(name)).toEqual(before)
    }).pipe(Effect.provide(jobsLayer(name))),
  )

  it.live("a producer runs on a test double; a worker on a double fails with InvalidOptions", () =>
    Effect.gen(function* () {
      const added: Msg[] = []
      const stub: Partial<LeaseQueue.Service<Msg>> = {
        name: "double",
        add: (payload) => Effect.sync(() => added.push(payload)).pipe(Effect.as("id-1")),
      }
      const double = Jobs.of(stub as LeaseQueue.Service<Msg>)
      const program = Effect.gen(function* () {
        const jobs = yield* Jobs
        return yield* jobs.add({ n: 1 })
      })
      expect(yield* program.pipe(Effect.provideService(Jobs, double))).toBe("id-1")
      expect(added).toEqual([{ n: 1 }])
      const error = yield* Effect.flip(
        Effect.scoped(LeaseWorker.make(Jobs, () => Effect.void)).pipe(Effect.provideService(Jobs, double)),
      )
      expect(error).toMatchObject({ _tag: "InvalidOptions", field: "queue" })
    }),
  )
})

describe("layers", () => {
  it.live("layerConfig reads REDIS_URL and LEASEQ_PREFIX from Config", () =>
    Effect.gen(function* () {
      const name = q("config")
      const config = ConfigProvider.layer(ConfigProvider.fromUnknown({ REDIS_URL: redisUrl(), LEASEQ_PREFIX: "lqcfg" }))
      const id = yield* Effect.gen(function* () {
        const jobs = yield* Jobs
        expect(jobs.prefix).toBe("lqcfg")
        return yield* jobs.add({ n: 1 })
      }).pipe(Effect.provide(LeaseQueue.layerConfig(Jobs, { name }).pipe(Layer.provide(config))))
      expect(id).toMatch(/^[0-9A-Z]{26}$/)
      expect(yield* Effect.promise(() => raw.llen(queueKeys(name, "lqcfg").wait))).toBe(1)
      expect(yield* Effect.promise(() => raw.exists(queueKeys(name).wait))).toBe(0)
      yield* Effect.promise(() => raw.del(...Object.values(queueKeys(name, "lqcfg")).filter((k) => k.includes("{"))))
    }),
  )

  const launched = q("launch")
  it.live("a worker layer runs under Layer.launch until interrupted; handler and hooks use its services", () =>
    Effect.gen(function* () {
      const handled = yield* Deferred.make<number>()
      const jobScopeClosed = yield* Deferred.make<void>()
      const completed = yield* Deferred.make<string>()
      const handler = (job: Job<Msg>) =>
        Effect.gen(function* () {
          const { factor } = yield* Multiplier
          yield* Effect.addFinalizer(() => Deferred.succeed(jobScopeClosed, undefined))
          return yield* Deferred.succeed(handled, job.payload.n * factor)
        })
      const WorkerLive = LeaseWorker.layer(Jobs, handler, {
        onCompleted: (job) => Multiplier.use(({ factor }) => Deferred.succeed(completed, `${job.id}x${factor}`)),
      }).pipe(Layer.provide(Layer.mergeAll(jobsLayer(launched), Layer.succeed(Multiplier, { factor: 3 }))))
      const running = yield* Effect.forkChild(Layer.launch(WorkerLive))
      const jobs = yield* Jobs
      const id = yield* jobs.add({ n: 7 })
      expect(yield* wait(handled)).toBe(21)
      yield* wait(jobScopeClosed)
      expect(yield* wait(completed)).toBe(`${id}x3`)
      yield* Fiber.interrupt(running)
      const stats = yield* jobs.stats
      expect(stats).toMatchObject({ waiting: 0, active: 0 })
      expect(stats.counters.completed).toBe(1)
    }).pipe(Effect.provide(jobsLayer(launched))),
  )
})
