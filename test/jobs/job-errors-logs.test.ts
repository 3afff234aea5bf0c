/**
 * Every failed attempt's error is kept (the newest 10), an Effect tagged error with its tag
 * and fields, and `job.log(line)` lines (the newest 100) — on both faces, dropped with the job.
 */
import { expect, it } from "@effect/vitest"
import { Context, Data, Effect, Layer } from "effect"
import { afterAll, describe } from "vitest"
import { LeaseQueue, LeaseWorker } from "../../src/effect.ts"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { InvalidOptions } from "../../src/index.ts"
import { run } from "../support/jobs.ts"
import { queueNamer, rawClient, redisUrl, sharedClients } from "../support/redis.ts"
import { until, untilRedisClock } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("job-errors-logs")
const raw = rawClient()
afterAll(() => raw.disconnect())
const shared = sharedClients()

describe("errors per attempt (Promise face)", () => {
  it("getJob lists each failed attempt's error with its attempt and time, oldest first", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const id = await queue.add(1, { maxAttempts: 3 })
    useWorker<number>(
      q,
      (job) => {
        throw new Error(`boom ${job.attempt}`)
      },
      { backoff: { type: "fixed", delayMs: 0 } },
    )
    await until("dead", async () => (await queue.getJob(id))?.state === "dead")
    const info = (await queue.getJob(id))!
    expect(info.errors!.map((e) => [e.attempt, e.reason, e.message])).toEqual([
      [1, "failed", "boom 1"],
      [2, "failed", "boom 2"],
      [3, "failed", "boom 3"],
    ])
    expect(info.errors![0]!.at).toBeGreaterThan(0)
    expect(info.errors![2]!.at).toBeGreaterThanOrEqual(info.errors![0]!.at)
    // the last error is still the job's `error`
    expect(info.error).toMatchObject({ message: "boom 3" })
  })

  it("keeps only the newest 10 attempts' errors", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const id = await queue.add(1, { maxAttempts: 12 })
    useWorker<number>(
      q,
      (job) => {
        throw new Error(`boom ${job.attempt}`)
      },
      { backoff: { type: "fixed", delayMs: 0 } },
    )
    await until("dead", async () => (await queue.getJob(id))?.state === "dead")
    expect((await queue.getJob(id))!.errors!.map((e) => e.attempt)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
  })

  it("a purged dead job leaves no errors or logs behind, and verify stays clean", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const id = await queue.add(1, { maxAttempts: 1 })
    useWorker<number>(q, async (job) => {
      await job.log("about to fail")
      throw new Error("once")
    })
    await until("dead", async () => (await queue.getJob(id))?.state === "dead")
    expect(await raw.hexists(queueKeys(q).errors, id)).toBe(1)
    expect(await raw.hexists(queueKeys(q).logs, id)).toBe(1)
    expect((await queue.verify()).violations).toBe(0)
    await queue.purgeDead([id])
    expect(await raw.hexists(queueKeys(q).errors, id)).toBe(0)
    expect(await raw.hexists(queueKeys(q).logs, id)).toBe(0)
    // an errors or logs field left without its job is what verify reports
    await raw.hset(queueKeys(q).errors, "ghost", "{}")
    await raw.hset(queueKeys(q).logs, "ghost", '"x"')
    expect((await queue.verify()).lines).toEqual(
      expect.arrayContaining([
        "orphan-field ghost has errors but no payload",
        "orphan-field ghost has logs but no payload",
      ]),
    )
  })
})

describe("a lost lease is one of the job's errors (the sweep)", () => {
  it("each expired lease adds a lease-expired error; the dead event of the last names the job", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    const c = makeCommands(shared.client, queueKeys(q))
    const id = await queue.add(1, { name: "flaky", maxAttempts: 2 })
    for (let attempt = 1; attempt <= 2; attempt++) {
      const [job] = await queue.reserve({ count: 1, leaseMs: 10 })
      expect(job).toMatchObject({ id, attempt })
      await untilRedisClock(shared.raw, job!.deadline)
      await run(c.sweep(100))
    }
    const info = (await queue.getJob(id))!
    expect(info.state).toBe("dead")
    expect(info.errors!.map((e) => [e.attempt, e.reason])).toEqual([
      [1, "lease-expired"],
      [2, "lease-expired"],
    ])
    const dead: Array<string | undefined> = []
    for await (const e of queue.events({ from: "start" })) {
      if (e.kind === "dead") dead.push(e.name)
      if (e.kind === "dead") break
    }
    expect(dead).toEqual(["flaky"])
  })
})

describe("job.log (Promise face)", () => {
  it("lines are kept with the job, in order, the newest 100, each cut to 1024 characters", async () => {
    const q = name()
    const queue = useQueue<number>(q)
    await queue.setRetention({ completed: { count: 1 } })
    const id = await queue.add(1)
    let refused: unknown
    useWorker<number>(q, async (job) => {
      for (let i = 1; i <= 105; i++) await job.log(`line ${i}`)
      await job.log("z".repeat(3000))
      refused = await job.log(5 as never).catch((e) => e)
    })
    await until("completed", async () => (await queue.getJob(id))?.state === "completed")
    const logs = (await queue.getJob(id))!.logs!
    expect(logs).toHaveLength(100)
    expect(logs[0]).toBe("line 7")
    expect(logs[98]).toBe("line 105")
    expect(logs[99]).toHaveLength(1024)
    expect(refused).toBeInstanceOf(InvalidOptions)
    expect((refused as InvalidOptions).field).toBe("line")
    // the next completion trims the first job (count 1): its log goes with it
    const next = await queue.add(2)
    await until("the next completed", async () => (await queue.getJob(next))?.state === "completed")
    expect(await raw.hexists(queueKeys(q).logs, id)).toBe(0)
  })
})

class SmtpError extends Data.TaggedError("SmtpError")<{ readonly to: string; readonly code: number }> {}
class Jobs extends Context.Service<Jobs, LeaseQueue.Service<{ readonly to: string }>>()("test/job-errors-logs/Jobs") {}

describe("the Effect face", () => {
  it.live("a Data.TaggedError that kills a job is stored with its tag and fields; job.log is an Effect", () => {
    const q = name()
    return Effect.gen(function* () {
      const jobs = yield* Jobs
      const id = yield* jobs.add({ to: "bounce@x" }, { maxAttempts: 1, name: "email" })
      yield* LeaseWorker.make(Jobs, (job) =>
        Effect.gen(function* () {
          yield* job.log(`sending ${job.name} to ${job.payload.to}`)
          return yield* Effect.fail(new SmtpError({ to: job.payload.to, code: 550 }))
        }),
      )
      const info = yield* Effect.promise(() =>
        until("dead", () =>
          Effect.runPromise(
            Effect.provide(
              Jobs.use((j) => j.getJob(id)),
              layer(q),
            ),
          ).then((i) => i?.state === "dead" && i),
        ),
      )
      expect(info).toMatchObject({ name: "email", logs: ["sending email to bounce@x"] })
      expect(info.error).toMatchObject({ name: "SmtpError", tag: "SmtpError", fields: { to: "bounce@x", code: 550 } })
      expect(info.errors).toEqual([
        expect.objectContaining({ attempt: 1, tag: "SmtpError", fields: { to: "bounce@x", code: 550 } }),
      ])
    }).pipe(Effect.scoped, Effect.provide(layer(q)))
  })
})

const layer = (q: string) => LeaseQueue.layer(Jobs, { name: q, connection: redisUrl() }).pipe(Layer.fresh)
