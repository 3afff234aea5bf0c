/**
 * The Effect face of getJob, cancel, pause/resume/isPaused and clearDedupe, against
 * real Redis: the same behaviour as the Promise face, Schema-decoded payloads, typed
 * errors that write nothing.
 */
import { expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Schema } from "effect"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe } from "vitest"
import { InvalidOptions, LeaseQueue } from "../../src/effect.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"

const q = queueNamer("jobs-effect")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

const Email = Schema.Struct({ to: Schema.String, count: Schema.FiniteFromString })
class Emails extends Context.Service<Emails, LeaseQueue.Service<typeof Email.Type>>()("test/jobs/Emails") {}
const emailsLayer = (name: string) => LeaseQueue.layer(Emails, { name, schema: Email, connection: redisUrl() })

describe("Effect face: job control", () => {
  it.live("getJob decodes the payload with the queue's Schema; cancel, pause, resume, clearDedupe", () => {
    const name = q()
    return Effect.gen(function* () {
      const emails = yield* Emails
      const id = yield* emails.add({ to: "a@example.com", count: 5 }, { dedupeKey: "a", dedupeUntil: "finished" })
      const info = yield* emails.getJob(id)
      expect(info).toMatchObject({ id, state: "waiting", payload: { to: "a@example.com", count: 5 }, dedupeKey: "a" })
      expect(yield* emails.getJob("01NEVERADDED0000000000000X")).toBeUndefined()
      expect(yield* emails.pause).toBe(true)
      expect(yield* emails.isPaused).toBe(true)
      expect((yield* emails.stats).paused).toBe(true)
      expect(yield* emails.resume).toBe(true)
      expect(yield* emails.isPaused).toBe(false)
      expect(yield* emails.cancel(id)).toBe("waiting")
      expect(yield* emails.cancel(id)).toBeUndefined()
      // the key held until finished was freed by the cancel
      expect(yield* emails.clearDedupe("a")).toBe(false)
      const again = yield* emails.add({ to: "b@example.com", count: 1 }, { dedupeKey: "a", dedupeUntil: "finished" })
      expect(again).not.toBe(id)
      expect(yield* emails.clearDedupe("a")).toBe(true)
    }).pipe(Effect.provide(emailsLayer(name)))
  })

  it.live("bad ids and keys fail with InvalidOptions naming the field, and write nothing", () => {
    const name = q()
    return Effect.gen(function* () {
      const emails = yield* Emails
      yield* emails.add({ to: "a@example.com", count: 1 })
      const before = yield* Effect.promise(() => dumpQueue(raw, name))
      const errors = yield* Effect.all(
        [
          Effect.flip(emails.getJob("" as string)),
          Effect.flip(emails.cancel(7 as unknown as string)),
          Effect.flip(emails.clearDedupe("")),
        ],
        { concurrency: 1 },
      )
      expect(errors.map((e) => (e instanceof InvalidOptions ? e.field : e._tag))).toEqual(["id", "id", "dedupeKey"])
      expect(yield* Effect.promise(() => dumpQueue(raw, name))).toEqual(before)
    }).pipe(Effect.provide(Layer.fresh(emailsLayer(name))))
  })

  it.live("BullMQ's add(name, data, opts) is refused as on the Promise face, and writes nothing", () => {
    const name = q()
    return Effect.gen(function* () {
      const emails = yield* Emails
      yield* emails.add({ to: "a@example.com", count: 1 })
      const before = yield* Effect.promise(() => dumpQueue(raw, name))
      const add = emails.add as unknown as (...args: unknown[]) => Effect.Effect<string, InvalidOptions>
      const e = yield* Effect.flip(add("send", { to: "b@example.com", count: 2 }, { attempts: 2 }))
      expect(e.message).toMatch(/payload = "send": add takes \(payload, options\) and was given 3 arguments/)
      expect(yield* Effect.promise(() => dumpQueue(raw, name))).toEqual(before)
    }).pipe(Effect.provide(Layer.fresh(emailsLayer(name))))
  })
})
