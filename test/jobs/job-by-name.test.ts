/**
 * byName: one handler per job name, the job typed by its name's payload (checked by the
 * compiler here: `expectTypeOf`), on both faces; a name without a handler fails the job
 * with UnknownJobName.
 */
import { expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { describe, expectTypeOf } from "vitest"
import { byName as effectByName, LeaseQueue, LeaseWorker } from "../../src/effect.ts"
import { byName, UnknownJobName } from "../../src/index.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("job-by-name")

interface Jobs {
  readonly email: { readonly to: string }
  readonly resize: { readonly w: number }
}

describe("byName (Promise face)", () => {
  it("runs the handler of each job's name, with its payload typed; an unknown name fails with UnknownJobName", async () => {
    const q = name()
    const queue = useQueue<Jobs[keyof Jobs]>(q)
    const done: string[] = []
    const email = await queue.add({ to: "a@x" }, { name: "email" })
    const resize = await queue.add({ w: 100 }, { name: "resize", maxAttempts: 1 })
    const stray = await queue.add({ w: 1 }, { name: "crop", maxAttempts: 1 })
    useWorker<Jobs[keyof Jobs]>(
      q,
      byName<Jobs>()({
        email: (job) => {
          expectTypeOf(job.payload).toEqualTypeOf<{ readonly to: string }>()
          expectTypeOf(job.name).toEqualTypeOf<"email">()
          done.push(`email ${job.payload.to}`)
        },
        resize: (job) => {
          expectTypeOf(job.payload).toEqualTypeOf<{ readonly w: number }>()
          done.push(`resize ${job.payload.w}`)
        },
      }),
    )
    await until("email completed", async () => (await queue.getJob(email))?.state === "completed")
    await until("resize completed", async () => (await queue.getJob(resize))?.state === "completed")
    await until("the stray job is dead", async () => (await queue.getJob(stray))?.state === "dead")
    expect(done.sort()).toEqual(["email a@x", "resize 100"])
    expect((await queue.getJob(stray))!.error).toMatchObject({
      name: "UnknownJobName",
      tag: "UnknownJobName",
      fields: { jobId: stray, jobName: "crop", known: ["email", "resize"] },
    })
    expect(new UnknownJobName({ jobId: "j", jobName: "crop", known: ["email"] }).message).toBe(
      'job j is named "crop", and byName has a handler only for "email": add one, or add the job with one of these names',
    )
  })
})

class Q extends Context.Service<Q, LeaseQueue.Service<Jobs[keyof Jobs]>>()("test/job-by-name/Q") {}

describe("byName (Effect face)", () => {
  it.live("runs the Effect handler of each job's name, with its payload typed", () => {
    const q = name()
    const seen: string[] = []
    return Effect.gen(function* () {
      const jobs = yield* Q
      const id = yield* jobs.add({ w: 7 }, { name: "resize" })
      yield* LeaseWorker.make(
        Q,
        effectByName<Jobs>()({
          email: (job) => Effect.sync(() => seen.push(job.payload.to)),
          resize: (job) => {
            expectTypeOf(job.payload).toEqualTypeOf<{ readonly w: number }>()
            return Effect.sync(() => seen.push(`w=${job.payload.w}`))
          },
        }),
      )
      yield* Effect.promise(() =>
        until("completed", () =>
          Effect.runPromise(
            Effect.provide(
              Q.use((j) => j.getJob(id)),
              layer(q),
            ),
          ).then((i) => i?.state === "completed"),
        ),
      )
      expect(seen).toEqual(["w=7"])
    }).pipe(Effect.scoped, Effect.provide(layer(q)))
  })
})

const layer = (q: string) => LeaseQueue.layer(Q, { name: q, connection: redisUrl() }).pipe(Layer.fresh)
